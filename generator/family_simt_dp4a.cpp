// The simt_dp4a family (templates/simt_dp4a.cuh): the reference family, on every NVIDIA target.
// Each thread owns a thread_m x thread_n tile of outputs and accumulates with dp4a from packed
// 4-byte words in shared memory; one stage, no split. Fields: bm, bn, bk, thread_m, thread_n, vec.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/occupancy.hpp"
#include "generator/rules.hpp"

namespace i8g {
namespace {

int threads(const KernelConfig& c) {
  return c.thread_m > 0 && c.thread_n > 0 ? (c.bm / c.thread_m) * (c.bn / c.thread_n) : 0;
}

// A and B as packed 4-byte words, k-word-major, each row padded by one word.
int static_smem(const KernelConfig& c) { return (c.bk / 4) * ((c.bm + 1) + (c.bn + 1)) * 4 * c.stages; }

// Registers a thread needs, roughly: accumulators, one A and B word per row and column of its
// tile, the epilogue operands, and ~40 for addresses and loop state.
int registers(const KernelConfig& c) {
  return c.thread_m * c.thread_n + 2 * (c.thread_m + c.thread_n) + 3 * c.thread_n + 40;
}

std::string unsupported(const GemmProblem&, const Target& t) {
  return t.sm < 61 ? "dp4a needs sm_61 or later" : "";
}

std::string invalid_reason(const GemmProblem& p, const KernelConfig& c, const Target& t) {
  if (!is_pow2(c.bm) || !is_pow2(c.bn) || !is_pow2(c.thread_m) || !is_pow2(c.thread_n) || !is_pow2(c.bk))
    return "tile sizes must be powers of two";
  if (c.thread_m > c.bm || c.thread_n > c.bn) return "thread tile larger than block tile";
  if (c.vec != 1 && c.vec != 4 && c.vec != 8 && c.vec != 16) return "vec must be 1, 4, 8 or 16";
  if (c.bk < 4 || c.bk % c.vec != 0) return fmt::format("bk={} must be a multiple of 4 and of vec", c.bk);
  const int n_threads = threads(c);
  if (n_threads < 32 || n_threads % 32 != 0 || n_threads > 1024)
    return fmt::format("{} threads per block (need whole warps, at most 1024)", n_threads);
  if (p.k % c.vec != 0) return fmt::format("K={} is not a multiple of vec={}", p.k, c.vec);
  if (p.layout == WeightLayout::kn && p.n % c.vec != 0)
    return fmt::format("[K,N] weights need N={} to be a multiple of vec={}", p.n, c.vec);
  if (static_smem(c) > 48 * 1024) return "static shared memory above 48 KiB";
  return budget_reason(static_smem(c), registers(c), n_threads, t);
}

// Rules: a warp spans 32 or 64 output columns (so A words broadcast and B words are
// consecutive), 4 to 8 warps per block, thread tiles of 4 to 32 accumulators with aspect at
// most 2, one 32-byte or 64-byte K step, the widest aligned vector load. Budgets then prune.
std::vector<KernelConfig> candidates(const GemmProblem& p, const Target& t) {
  std::vector<KernelConfig> out;
  const int vec = widest_vector(p);
  for (int cols : {32, 64})
    for (int rows : {2, 4, 8})
      for (int tm : {1, 2, 4, 8})
        for (int tn : {1, 2, 4, 8}) {
          const int n_threads = cols * rows;
          if (n_threads < 128 || n_threads > 256) continue;
          if (tm * tn < 4 || tm * tn > 32 || std::max(tm, tn) > 2 * std::min(tm, tn)) continue;
          KernelConfig c;
          c.family = Family::simt_dp4a;
          c.thread_m = tm;
          c.thread_n = tn;
          c.bm = rows * tm;
          c.bn = cols * tn;
          c.bk = std::max(32, vec);
          c.vec = vec;
          if (c.bn > 2 * std::max<int64_t>(p.n, 32)) continue;  // mostly padding
          if (invalid_reason(p, c, t).empty()) out.push_back(c);
        }
  return out;
}

// Waves of blocks over the SMs times per-block work that falls with larger thread tiles (fewer
// shared loads per dp4a), stretched when the resident threads fill less than half an SM.
// Resident blocks count threads and the block limit only, as this model was calibrated: given
// the rough register estimate too, the occupancy model moves the untuned default of sm_75 and
// of problems mma_sync cannot run to smaller tiles at large M, which no GPU run has checked.
double cost(const GemmProblem& p, const KernelConfig& c, const Target& t, int64_t m) {
  const double tiles = std::ceil(double(std::max<int64_t>(m, 1)) / c.bm) * std::ceil(double(p.n) / c.bn);
  const int per_sm = std::max(1, estimate_blocks_per_sm(t, /*regs*/ 0, threads(c), /*smem*/ 0, nullptr));
  const double waves = std::ceil(tiles / (double(t.sm_count) * per_sm));
  const double loads_per_dp4a = double(c.thread_m + c.thread_n) / (c.thread_m * c.thread_n);
  return waves * (double(c.bm) * c.bn / threads(c)) * (1.0 + loads_per_dp4a) *
         (double(per_sm * threads(c)) / t.max_threads_per_sm < 0.5 ? 1.5 : 1.0);
}

std::vector<TemplateArg> template_args(const KernelSpec& s) {
  const KernelConfig& c = s.config;
  std::vector<TemplateArg> a = {{"BM", c.bm}, {"BN", c.bn}, {"BK", c.bk}, {"TM", c.thread_m},
                                {"TN", c.thread_n}, {"VEC", c.vec}};
  for (const TemplateArg& x : problem_template_args(s.problem, true)) a.push_back(x);
  return a;
}

}  // namespace

const FamilyInfo& simt_dp4a_family() {
  static const FamilyInfo f = [] {
    FamilyInfo f;
    f.family = Family::simt_dp4a;
    f.name = "simt_dp4a";
    f.header = "simt_dp4a.cuh";
    f.kernel = "i8g::simt_dp4a_kernel";
    f.name_fields = {ConfigField::thread_m, ConfigField::thread_n, ConfigField::vec};
    f.untuned_rank = 1;
    f.unsupported = unsupported;
    f.candidates = candidates;
    f.invalid_reason = invalid_reason;
    f.cost = cost;
    f.threads = threads;
    f.static_smem = static_smem;
    f.registers = registers;
    f.alignment = [](const KernelConfig& c) { return c.vec; };
    f.template_args = template_args;
    return f;
  }();
  return f;
}

}  // namespace i8g

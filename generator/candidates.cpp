// Candidate configs derived from rules and the target's budgets, the validity rules, and the
// untuned default.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "generator/families.hpp"
#include "generator/generator.hpp"
#include "generator/rules.hpp"

namespace i8g {
namespace {

// Registers a simt_dp4a thread needs, roughly: accumulators, one A and B word per row and
// column of its tile, the epilogue operands, and ~40 for addresses and loop state.
int simt_register_estimate(const KernelConfig& c) {
  return c.tm * c.tn + 2 * (c.tm + c.tn) + 3 * c.tn + 40;
}

bool is_pow2(int v) { return v > 0 && (v & (v - 1)) == 0; }

std::string simt_invalid_reason(const GemmProblem& p, const KernelConfig& c, const Target& t) {
  if (!is_pow2(c.bm) || !is_pow2(c.bn) || !is_pow2(c.tm) || !is_pow2(c.tn) || !is_pow2(c.bk))
    return "tile sizes must be powers of two";
  if (c.tm > c.bm || c.tn > c.bn) return "thread tile larger than block tile";
  if (c.bk < 4 || c.bk % c.vec != 0) return fmt::format("bk={} must be a multiple of 4 and of vec", c.bk);
  if (c.wm != 1 || c.wn != 1) return "simt_dp4a has no warp tiling (wm = wn = 1)";
  if (c.stages != 1) return "simt_dp4a is single-stage";
  if (c.split_k != 1) return "simt_dp4a does not split K";
  const int threads = c.threads();
  if (threads < 32 || threads % 32 != 0 || threads > 1024)
    return fmt::format("{} threads per block (need whole warps, at most 1024)", threads);
  if (c.vec != 1 && c.vec != 4 && c.vec != 8 && c.vec != 16) return "vec must be 1, 4, 8 or 16";
  if (p.k % c.vec != 0) return fmt::format("K={} is not a multiple of vec={}", p.k, c.vec);
  if (p.layout == WeightLayout::kn && p.n % c.vec != 0)
    return fmt::format("[K,N] weights need N={} to be a multiple of vec={}", p.n, c.vec);
  if (c.static_smem_bytes() > 48 * 1024) return "static shared memory above 48 KiB";
  if (c.static_smem_bytes() > t.smem_per_block_optin) return "shared memory above the target's budget";
  const int regs = simt_register_estimate(c);
  if (regs > t.max_regs_per_thread) return fmt::format("~{} registers per thread", regs);
  if (regs * threads > t.regs_per_sm) return "one block needs more registers than an SM has";
  return {};
}

}  // namespace

int widest_vector(const GemmProblem& p) {
  for (int v : {16, 8, 4}) {
    const bool rows_ok = p.k % v == 0 && (p.layout == WeightLayout::nk || p.n % v == 0);
    if (rows_ok) return v;
  }
  return 1;
}

std::string invalid_reason(const GemmProblem& p, const KernelConfig& c, const Target& t) {
  if (std::string why = p.invalid_reason(); !why.empty()) return why;
  if (t.amd && c.family != Family::mfma)
    return fmt::format("{} is an NVIDIA family; {} takes mfma", to_string(c.family), t.arch);
  switch (c.family) {
    case Family::mfma:
      return mfma_invalid_reason(p, c, t);
    case Family::simt_dp4a:
      if (t.sm < 61) return "dp4a needs sm_61 or later";
      return simt_invalid_reason(p, c, t);
    case Family::mma_sync:
      return mma_sync_invalid_reason(p, c, t);
    case Family::wgmma:
      return wgmma_invalid_reason(p, c, t);
  }
  return "unknown family";
}

// simt_dp4a rules: a warp spans 32 or 64 output columns (so A words broadcast and B words are
// consecutive), 4 to 8 warps per block, thread tiles of 4 to 32 accumulators with aspect at
// most 2, one 32-byte or 64-byte K step, the widest aligned vector load. Budgets then prune.
std::vector<KernelConfig> candidates(const GemmProblem& p, const Target& t) {
  std::vector<KernelConfig> out;
  if (!p.invalid_reason().empty()) return out;
  if (t.amd) return mfma_candidates(p, t);
  const int vec = widest_vector(p);
  for (int cols : {32, 64})
    for (int rows : {2, 4, 8})
      for (int tm : {1, 2, 4, 8})
        for (int tn : {1, 2, 4, 8}) {
          const int threads = cols * rows;
          if (threads < 128 || threads > 256) continue;
          if (tm * tn < 4 || tm * tn > 32 || std::max(tm, tn) > 2 * std::min(tm, tn)) continue;
          KernelConfig c;
          c.family = Family::simt_dp4a;
          c.tm = tm;
          c.tn = tn;
          c.bm = rows * tm;
          c.bn = cols * tn;
          c.bk = std::max(32, vec);
          c.vec = vec;
          c.wm = c.wn = 1;
          c.stages = 1;
          c.split_k = 1;
          if (c.bn > 2 * std::max<int64_t>(p.n, 32)) continue;  // mostly padding
          if (invalid_reason(p, c, t).empty()) out.push_back(c);
        }
  for (const KernelConfig& c : mma_sync_candidates(p, t)) out.push_back(c);
  for (const KernelConfig& c : wgmma_candidates(p, t)) out.push_back(c);  // experimental only
  return out;
}

namespace {

// Untuned simt_dp4a choice: the candidate with the fewest estimated cycles, modelling waves of
// blocks over the SMs and per-block work that falls with larger thread tiles (fewer shared
// loads per dp4a). Ties go to the first candidate, so the choice is deterministic.
double simt_cost(const GemmProblem& p, const KernelConfig& c, const Target& t, int64_t m) {
  const double tiles = std::ceil(double(std::max<int64_t>(m, 1)) / c.bm) * std::ceil(double(p.n) / c.bn);
  const int per_sm = std::max(1, std::min(t.max_threads_per_sm / c.threads(), t.max_blocks_per_sm));
  const double waves = std::ceil(tiles / (double(t.sm_count) * per_sm));
  const double loads_per_dp4a = double(c.tm + c.tn) / (c.tm * c.tn);
  return waves * (double(c.bm) * c.bn / c.threads()) * (1.0 + loads_per_dp4a) *
         (double(per_sm * c.threads()) / t.max_threads_per_sm < 0.5 ? 1.5 : 1.0);
}

}  // namespace

KernelConfig heuristic_default(const GemmProblem& p, const Target& t, int64_t m, Family family) {
  std::vector<KernelConfig> cs = candidates(p, t);
  cs.erase(std::remove_if(cs.begin(), cs.end(), [&](const KernelConfig& c) { return c.family != family; }),
           cs.end());
  if (cs.empty()) {
    throw Error("heuristic_default", fmt::format("no {} config suits {} on {}: {}", to_string(family),
                                                 p.key(), t.arch,
                                                 p.invalid_reason().empty()
                                                     ? "no candidate fits the target"
                                                     : p.invalid_reason()));
  }
  const KernelConfig* best = nullptr;
  double best_cost = 0;
  for (const KernelConfig& c : cs) {
    const double cost = family == Family::mma_sync ? mma_sync_cost(p, c, t, m)
                        : family == Family::wgmma  ? wgmma_cost(p, c, t, m)
                        : family == Family::mfma   ? mfma_cost(p, c, t, m)
                                                   : simt_cost(p, c, t, m);
    if (!best || cost < best_cost) {
      best = &c;
      best_cost = cost;
    }
  }
  return *best;
}

// Tensor cores where the problem allows them (sm_80+, K % 16 == 0, and N % 16 == 0 for [K,N]
// weights); the reference family everywhere else. Never the experimental wgmma family, even
// when the target offers it: it has not run on a GPU yet, so only a tune (which verifies every
// candidate bit-exact first) may pick it.
KernelConfig heuristic_default(const GemmProblem& p, const Target& t, int64_t m) {
  if (t.amd) return heuristic_default(p, t, m, Family::mfma);
  if (!mma_sync_candidates(p, t).empty()) return heuristic_default(p, t, m, Family::mma_sync);
  return heuristic_default(p, t, m, Family::simt_dp4a);
}

int required_alignment(const KernelConfig& c) {
  return c.family == Family::mma_sync || c.family == Family::wgmma ? 16 : c.vec;
}

}  // namespace i8g

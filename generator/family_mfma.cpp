// The mfma family (AMD CDNA, templates/mfma.hip.h): v_mfma_i32_{32x32x8,16x16x16}i8 on gfx908 /
// gfx90a through hipRTC; warps_m x warps_n wavefronts per workgroup, one or two LDS buffers.
// Budgets: LDS per workgroup, the VGPR file per lane, whole wavefronts, the instruction shapes.
// Fields: bm, bn, bk, instr, warps_m, warps_n, stages, vec.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "generator/rules.hpp"

namespace i8g {
namespace {

int k_per_instr(int instr) { return instr == 32 ? 8 : 16; }

int threads(const KernelConfig& c) { return 64 * c.warps_m * c.warps_n; }

// Rows of x and columns of w, k-contiguous, each padded by one 4-byte word.
int static_smem(const KernelConfig& c) { return c.stages * (c.bm + c.bn) * (c.bk + 4); }

// Per-lane VGPRs the kernel needs, roughly: accumulators (instr^2/64 per block), one operand
// word per fragment row and column, the staged global loads, three epilogue operands per
// fragment column, and ~32 for addresses, indices and loop state.
int registers(const KernelConfig& c) {
  const int fm = c.bm / c.warps_m / c.instr, fn = c.bn / c.warps_n / c.instr;
  const int n_threads = threads(c);
  const int unit = std::max(c.vec, 4);
  const int staged = ((c.bm * c.bk / unit + n_threads - 1) / n_threads +
                      (c.bn * c.bk / unit + n_threads - 1) / n_threads) * (unit / 4);
  return fm * fn * (c.instr * c.instr / 64) + fm + fn + staged + 3 * fn + 32;
}

// One K step's MFMAs per wave (FM x FN blocks, BK / k per instruction): the template
// instantiates compute() once, in the K loop.
int matrix_instructions(const KernelConfig& c) {
  return (c.bm / c.warps_m / c.instr) * (c.bn / c.warps_n / c.instr) * (c.bk / k_per_instr(c.instr));
}

std::string unsupported(const GemmProblem&, const Target&) { return {}; }  // any AMD target, any problem

std::string invalid_reason(const GemmProblem& p, const KernelConfig& c, const Target& t) {
  if (c.instr != 32 && c.instr != 16)
    return fmt::format("instr={}: the mfma instruction is 32x32 (instr = 32) or 16x16 (instr = 16)", c.instr);
  if (!is_pow2(c.bm) || !is_pow2(c.bn) || !is_pow2(c.bk) || !is_pow2(c.warps_m) || !is_pow2(c.warps_n))
    return "tile sizes and wave counts must be powers of two";
  if (c.bm % (c.warps_m * c.instr) != 0 || c.bn % (c.warps_n * c.instr) != 0)
    return "waves must tile the block by whole MFMA blocks";
  const int unit = std::max(c.vec, 4);
  if (c.bk % k_per_instr(c.instr) != 0 || c.bk % unit != 0)
    return fmt::format("bk={} must hold whole MFMA k steps ({}) and load units ({})", c.bk,
                       k_per_instr(c.instr), unit);
  if (c.stages != 1 && c.stages != 2) return "mfma has one LDS buffer or two";
  if (c.vec != 1 && c.vec != 2 && c.vec != 4 && c.vec != 8 && c.vec != 16) return "vec must be 1, 2, 4, 8 or 16";
  if (p.k % c.vec != 0) return fmt::format("K={} is not a multiple of vec={}", p.k, c.vec);
  if (p.layout == WeightLayout::kn && p.n % c.vec != 0)
    return fmt::format("[K,N] weights need N={} to be a multiple of vec={}", p.n, c.vec);
  const int n_threads = threads(c);
  if (n_threads > 1024) return fmt::format("{} threads per workgroup (at most 1024)", n_threads);
  if (static_smem(c) > t.smem_per_block_optin)
    return fmt::format("{} B of LDS above the {} B a workgroup gets", static_smem(c), t.smem_per_block_optin);
  const int vgprs = registers(c);
  if (vgprs > 192) return fmt::format("~{} VGPRs per lane (keep 192 or fewer: no spills)", vgprs);
  return {};
}

// Rules: 2 or 4 waves per workgroup; each wave owns 1-2 x 1-2 blocks of 32x32 or 2-4 x 2-4
// blocks of 16x16 (wave tiles of 32..64 by 32..64: aspect at most 2, at most 64 accumulators
// per lane); a 64-byte K step; one or two LDS buffers; the widest aligned load. Budgets then
// prune (LDS, VGPR estimate), and tiles that are mostly padding along N are skipped.
std::vector<KernelConfig> candidates(const GemmProblem& p, const Target& t) {
  std::vector<KernelConfig> out;
  const int vec = widest_vector(p);
  for (int instr : {32, 16})
    for (auto [wm, wn] : {std::pair{1, 2}, std::pair{2, 1}, std::pair{2, 2}})
      for (int fm : {1, 2, 4})
        for (int fn : {1, 2, 4})
          for (int stages : {1, 2}) {
            const int lo = instr == 32 ? 1 : 2, hi = instr == 32 ? 2 : 4;
            if (fm < lo || fm > hi || fn < lo || fn > hi) continue;
            KernelConfig c;
            c.family = Family::mfma;
            c.instr = instr;
            c.warps_m = wm;
            c.warps_n = wn;
            c.bm = wm * fm * instr;
            c.bn = wn * fn * instr;
            c.bk = 64;
            c.stages = stages;
            c.vec = vec;
            if (c.bn > 2 * std::max<int64_t>(p.n, 32)) continue;
            if (invalid_reason(p, c, t).empty()) out.push_back(c);
          }
  return out;
}

// Rounds of wavefronts over the SIMDs that run them at once, times the work of one wave, where
// the work per MAC grows with the operand traffic of small tiles; double buffering hides some
// global latency when there is more than one K step. A SIMD's matrix core serves one wave at
// a time, so a CU runs at most one wave per SIMD, fewer when occupancy leaves SIMDs idle.
double cost(const GemmProblem& p, const KernelConfig& c, const Target& t, int64_t m) {
  const double tiles = std::ceil(double(std::max<int64_t>(m, 1)) / c.bm) * std::ceil(double(p.n) / c.bn);
  const int waves = c.warps_m * c.warps_n;
  const int resident_waves = std::max(1, workgroups_per_cu(c, t)) * waves;
  const double slots = double(t.sm_count) * std::max(1, std::min(t.simds_per_cu, resident_waves));
  const double rounds = std::ceil(tiles * waves / slots);
  const double traffic = 1.0 + 32.0 / std::min(c.bm, c.bn);
  const double pipelining = (c.stages == 2 && p.k > c.bk) ? 0.85 : 1.0;
  return rounds * (double(c.bm) * c.bn / waves) * traffic * pipelining;
}

std::vector<TemplateArg> template_args(const KernelSpec& s) {
  const KernelConfig& c = s.config;
  std::vector<TemplateArg> a = {{"BM", c.bm},          {"BN", c.bn},          {"BK", c.bk},
                                {"INSTR", c.instr},    {"WM", c.warps_m},     {"WN", c.warps_n},
                                {"STAGES", c.stages},  {"VEC", c.vec}};
  for (const TemplateArg& x : problem_template_args(s.problem, true)) a.push_back(x);
  return a;
}

}  // namespace

const FamilyInfo& mfma_family() {
  static const FamilyInfo f = [] {
    FamilyInfo f;
    f.family = Family::mfma;
    f.name = "mfma";
    f.header = "mfma.hip.h";
    f.kernel = "i8g::mfma_kernel";
    f.amd = true;
    f.name_fields = {ConfigField::instr, ConfigField::warps_m, ConfigField::warps_n, ConfigField::stages,
                     ConfigField::vec};
    f.untuned_rank = 2;
    f.unsupported = unsupported;
    f.candidates = candidates;
    f.invalid_reason = invalid_reason;
    f.cost = cost;
    f.threads = threads;
    f.static_smem = static_smem;
    f.registers = registers;
    f.matrix_instructions = matrix_instructions;
    f.alignment = [](const KernelConfig& c) { return c.vec; };
    f.template_args = template_args;
    return f;
  }();
  return f;
}

}  // namespace i8g

// The mfma family (AMD CDNA, templates/mfma.hip.h): which configs are valid, which are worth
// compiling, and which one to use untuned. Budgets: LDS per workgroup, the VGPR file per lane,
// whole wavefronts, and the instruction shapes (32x32x8i8, 16x16x16i8).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "generator/rules.hpp"

namespace i8g {
namespace {

bool is_pow2(int v) { return v > 0 && (v & (v - 1)) == 0; }
int k_per_instr(int instr) { return instr == 32 ? 8 : 16; }

}  // namespace

// Per-lane VGPRs the kernel needs, roughly: accumulators (instr^2/64 per block), one operand
// word per fragment row and column, the staged global loads, three epilogue operands per
// fragment column, and ~32 for addresses, indices and loop state.
int mfma_vgpr_estimate(const KernelConfig& c) {
  const int fm = c.bm / c.wm / c.tm, fn = c.bn / c.wn / c.tn;
  const int threads = c.threads();
  const int unit = std::max(c.vec, 4);
  const int staged = ((c.bm * c.bk / unit + threads - 1) / threads +
                      (c.bn * c.bk / unit + threads - 1) / threads) * (unit / 4);
  return fm * fn * (c.tm * c.tn / 64) + fm + fn + staged + 3 * fn + 32;
}

std::string mfma_invalid_reason(const GemmProblem& p, const KernelConfig& c, const Target& t) {
  if (!t.amd) return "mfma needs an AMD CDNA target (gfx908, gfx90a)";
  if (c.tm != c.tn || (c.tm != 32 && c.tm != 16))
    return "mfma instruction must be 32x32 (tm = tn = 32) or 16x16 (tm = tn = 16)";
  if (!is_pow2(c.bm) || !is_pow2(c.bn) || !is_pow2(c.bk) || !is_pow2(c.wm) || !is_pow2(c.wn))
    return "tile sizes and wave counts must be powers of two";
  if (c.bm % (c.wm * c.tm) != 0 || c.bn % (c.wn * c.tn) != 0)
    return "waves must tile the block by whole MFMA blocks";
  const int unit = std::max(c.vec, 4);
  if (c.bk % k_per_instr(c.tm) != 0 || c.bk % unit != 0)
    return fmt::format("bk={} must hold whole MFMA k steps ({}) and load units ({})", c.bk,
                       k_per_instr(c.tm), unit);
  if (c.stages != 1 && c.stages != 2) return "mfma has one LDS buffer or two";
  if (c.split_k != 1) return "mfma does not split K";
  if (c.vec != 1 && c.vec != 2 && c.vec != 4 && c.vec != 8 && c.vec != 16) return "vec must be 1, 2, 4, 8 or 16";
  if (p.k % c.vec != 0) return fmt::format("K={} is not a multiple of vec={}", p.k, c.vec);
  if (p.layout == WeightLayout::kn && p.n % c.vec != 0)
    return fmt::format("[K,N] weights need N={} to be a multiple of vec={}", p.n, c.vec);
  const int threads = c.threads();
  if (threads > 1024) return fmt::format("{} threads per workgroup (at most 1024)", threads);
  if (c.static_smem_bytes() > t.smem_per_block_optin)
    return fmt::format("{} B of LDS above the {} B a workgroup gets", c.static_smem_bytes(), t.smem_per_block_optin);
  const int vgprs = mfma_vgpr_estimate(c);
  if (vgprs > 192) return fmt::format("~{} VGPRs per lane (keep 192 or fewer: no spills)", vgprs);
  return {};
}

// Rules: 2 or 4 waves per workgroup; each wave owns 1-2 x 1-2 blocks of 32x32 or 2-4 x 2-4
// blocks of 16x16 (wave tiles of 32..64 by 32..64: aspect at most 2, at most 64 accumulators
// per lane); a 64-byte K step; one or two LDS buffers; the widest aligned load. Budgets then
// prune (LDS, VGPR estimate), and tiles that are mostly padding along N are skipped.
std::vector<KernelConfig> mfma_candidates(const GemmProblem& p, const Target& t) {
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
            c.tm = c.tn = instr;
            c.wm = wm;
            c.wn = wn;
            c.bm = wm * fm * instr;
            c.bn = wn * fn * instr;
            c.bk = 64;
            c.stages = stages;
            c.split_k = 1;
            c.vec = vec;
            if (c.bn > 2 * std::max<int64_t>(p.n, 32)) continue;
            if (mfma_invalid_reason(p, c, t).empty()) out.push_back(c);
          }
  return out;
}

// Untuned cost: rounds of wavefronts over the target's SIMDs times the work of one wave,
// where the work per MAC grows with the operand traffic of small tiles; double buffering
// hides some global latency when there is more than one K step.
double mfma_cost(const GemmProblem& p, const KernelConfig& c, const Target& t, int64_t m) {
  const double tiles = std::ceil(double(std::max<int64_t>(m, 1)) / c.bm) * std::ceil(double(p.n) / c.bn);
  const int waves = c.wm * c.wn;
  const double slots = double(t.sm_count) * std::max(t.simds_per_cu, 1);
  const double rounds = std::ceil(tiles * waves / slots);
  const double traffic = 1.0 + 32.0 / std::min(c.bm, c.bn);
  const double pipelining = (c.stages == 2 && p.k > c.bk) ? 0.85 : 1.0;
  return rounds * (double(c.bm) * c.bn / waves) * traffic * pipelining;
}

}  // namespace i8g

// The wgmma family's rules (templates/wgmma.cuh): validity, candidates from budgets, a cost
// model for the untuned choice among wgmma configs, and the instantiation text. Experimental:
// candidates exist only when Target::experimental_wgmma is set (docs/wgmma.md).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "generator/families.hpp"

namespace i8g {
namespace {

constexpr int kWgM = 64;         // rows per wgmma instruction
constexpr int kRowBytes = 128;   // bk: one 128-byte swizzle-atom row of k per tile row
constexpr int kChunk = 16;       // cp.async bytes
constexpr int kWarpsPerGroup = 4;
constexpr int kAlignSlack = 1024;  // the kernel rounds the dynamic window up to 1024 bytes

int warpgroups(const KernelConfig& c) { return c.wm / kWarpsPerGroup; }

int blocks_per_sm(const KernelConfig& c, const Target& t) {
  const int threads = c.threads();
  const int by_threads = t.max_threads_per_sm / threads;
  const int by_smem = t.smem_per_sm / (wgmma_smem_bytes(c) + 1024);
  const int by_regs = t.regs_per_sm / (wgmma_register_estimate(c) * threads);
  return std::max(0, std::min({by_threads, by_smem, by_regs, t.max_blocks_per_sm}));
}

}  // namespace

int wgmma_smem_bytes(const KernelConfig& c) {
  return c.stages * (c.bm + c.bn) * c.bk + kAlignSlack;
}

// Accumulators (bm/warpgroups rows x bn columns over 128 threads) plus ~40 for addresses,
// descriptors, loop state and the epilogue's operands (no fragments: operands stay in shared).
int wgmma_register_estimate(const KernelConfig& c) {
  const int wgs = std::max(1, warpgroups(c));
  return (c.bm / wgs) * c.bn / 128 + 40;
}

std::string wgmma_invalid_reason(const GemmProblem& p, const KernelConfig& c, const Target& t) {
  if (t.amd || t.arch != "sm_90a")
    return fmt::format("wgmma needs sm_90a (the arch-specific Hopper target), not {}", t.arch);
  if (p.layout != WeightLayout::nk)
    return "wgmma needs [N,K] weights: .s8 operands must both be K-major (no transpose); "
           "[K,N] runs on mma_sync";
  if (p.k % kChunk != 0)
    return fmt::format("K={} is not a multiple of 16, which 16-byte cp.async rows need", p.k);
  if (c.split_k != 1) return fmt::format("split_k={}: wgmma does not split K", c.split_k);
  if (c.tm != 0 || c.tn != 0) return "wgmma has no thread tile (tm = tn = 0)";
  if (c.vec != kChunk) return "wgmma loads 16 bytes per cp.async (vec = 16)";
  if (c.wn != 1 || (c.wm != 4 && c.wm != 8))
    return fmt::format("{}x{} warps: wgmma takes one or two warpgroups (wm = 4 or 8, wn = 1)", c.wm, c.wn);
  if (c.bk != kRowBytes) return fmt::format("bk={}: wgmma tiles are one 128-byte swizzle row (bk = 128)", c.bk);
  const int wgs = warpgroups(c);
  if (c.bm <= 0 || c.bm % (kWgM * wgs) != 0 || c.bm / (kWgM * wgs) > 2)
    return fmt::format("bm={} over {} warpgroups: need 64 or 128 rows per warpgroup", c.bm, wgs);
  if (c.bn != 64 && c.bn != 128 && c.bn != 256) return fmt::format("bn={} (need 64, 128 or 256)", c.bn);
  if ((c.bm / wgs) * c.bn > 128 * 128)
    return fmt::format("bm={} bn={}: more than 128 accumulators per thread", c.bm, c.bn);
  if (c.stages < 2 || c.stages > 6) return fmt::format("{} stages (need 2 to 6)", c.stages);
  const int smem = wgmma_smem_bytes(c);
  if (smem > t.smem_per_block_optin)
    return fmt::format("{} bytes of shared memory above the target's {} per block", smem,
                       t.smem_per_block_optin);
  const int regs = wgmma_register_estimate(c);
  if (regs > t.max_regs_per_thread) return fmt::format("~{} registers per thread", regs);
  if (regs * c.threads() > t.regs_per_sm) return "one block needs more registers than an SM has";
  return {};
}

// Rules: one or two warpgroups, 64 or 128 rows each (bm 64..256), bn 64/128/256 not past the
// padded N, at most 128 accumulators per thread; bk = 128; stages as many as fit, up to 4 and
// up to the K tiles, 3+ when K has more than 2 tiles. At most 10 configs, and none at all
// unless the target asks for the experimental family.
std::vector<KernelConfig> wgmma_candidates(const GemmProblem& p, const Target& t) {
  std::vector<KernelConfig> out;
  if (!t.experimental_wgmma || t.amd || t.arch != "sm_90a") return out;
  if (p.layout != WeightLayout::nk || p.k % kChunk != 0) return out;
  int64_t n_pow2 = 64;
  while (n_pow2 < p.n) n_pow2 *= 2;
  const int ktiles = int((p.k + kRowBytes - 1) / kRowBytes);
  for (int wgs : {1, 2})
    for (int mi : {1, 2})
      for (int bn : {64, 128, 256}) {
        if (bn > n_pow2 || mi * bn > 256) continue;
        KernelConfig c;
        c.family = Family::wgmma;
        c.bm = kWgM * mi * wgs;
        c.bn = bn;
        c.bk = kRowBytes;
        c.tm = c.tn = 0;
        c.wm = kWarpsPerGroup * wgs;
        c.wn = 1;
        c.split_k = 1;
        c.vec = kChunk;
        const int stage_bytes = (c.bm + c.bn) * c.bk;
        c.stages = std::min({4, ktiles, (t.smem_per_block_optin - kAlignSlack) / stage_bytes});
        c.stages = std::max(c.stages, 2);
        if (c.stages < 3 && ktiles > 2) continue;
        if (!wgmma_invalid_reason(p, c, t).empty()) continue;
        out.push_back(c);
      }
  return out;
}

// As mma_sync_cost, with the warpgroup MMA's rate (~4096 int8 MACs per SM per cycle: the
// datasheet's dense peak over 132 SMs at ~1.8 GHz) and no fragment loads; the k-tile loop waits
// for its MMAs, so one resident block exposes its copies: a factor below 2 blocks per SM. Only
// ranks wgmma configs against each other; never measured (docs/wgmma.md).
double wgmma_cost(const GemmProblem& p, const KernelConfig& c, const Target& t, int64_t m) {
  const double tiles = std::ceil(double(std::max<int64_t>(m, 1)) / c.bm) * std::ceil(double(p.n) / c.bn);
  const int per_sm = std::max(1, blocks_per_sm(c, t));
  const double on_busiest = std::ceil(tiles / std::max(1, t.sm_count));
  const double k = std::ceil(double(p.k) / c.bk) * c.bk;
  const double rows_read = double(std::min<int64_t>(c.bm, std::max<int64_t>(m, 1)));
  const double tile_cycles = std::max(double(c.bm) * c.bn * k / 4096.0, (rows_read + c.bn) * k / 32.0);
  const double resident = std::min<double>(per_sm, on_busiest);
  const double efficiency = std::min(1.0, 0.5 * resident + 0.25 * (warpgroups(c) - 1) + 0.5);
  return on_busiest * tile_cycles / efficiency;
}

std::string wgmma_entry(const KernelSpec& s) {
  const GemmProblem& p = s.problem;
  const KernelConfig& c = s.config;
  return fmt::format("i8g::wgmma_kernel<{}, {}, {}, {}, {}LL, {}LL, {}, {}, {}, {}, {}>", c.bm, c.bn,
                     warpgroups(c), c.stages, p.n, p.k, p.act_scale == ActScale::per_token ? 1 : 0,
                     p.weight_scale == WeightScale::per_channel ? 1 : 0, out_code(p.out),
                     p.bias ? 1 : 0, p.asymmetric ? 1 : 0);
}

}  // namespace i8g

// The wgmma family (templates/wgmma.cuh): Hopper warpgroup MMAs on sm_90a with [N,K] weights,
// one or two warpgroups per block, operands straight from a cp.async ring of 128-byte-swizzled
// tiles. Experimental: candidates exist only when Target::experimental_wgmma is set, and the
// untuned default never picks it (docs/wgmma.md). Fields: bm, bn, bk (= 128), warpgroups, stages.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "generator/rules.hpp"

namespace i8g {
namespace {

constexpr int kWgM = 64;           // rows per wgmma instruction
constexpr int kRowBytes = 128;     // bk: one 128-byte swizzle-atom row of k per tile row
constexpr int kChunk = 16;         // cp.async bytes
constexpr int kWarpgroupThreads = 128;
constexpr int kAlignSlack = 1024;  // the kernel rounds the dynamic window up to 1024 bytes

int threads(const KernelConfig& c) { return kWarpgroupThreads * c.warpgroups; }
int dynamic_smem(const KernelConfig& c) { return c.stages * (c.bm + c.bn) * c.bk + kAlignSlack; }

// Accumulators (bm/warpgroups rows x bn columns over 128 threads) plus ~40 for addresses,
// descriptors, loop state and the epilogue's operands (no fragments: operands stay in shared).
int registers(const KernelConfig& c) {
  const int wgs = std::max(1, c.warpgroups);
  return (c.bm / wgs) * c.bn / 128 + 40;
}

std::string unsupported(const GemmProblem& p, const Target& t) {
  if (t.arch != "sm_90a") return fmt::format("wgmma needs sm_90a (the arch-specific Hopper target), not {}", t.arch);
  if (p.layout != WeightLayout::nk)
    return "wgmma needs [N,K] weights: .s8 operands must both be K-major (no transpose); "
           "[K,N] runs on mma_sync";
  if (p.k % kChunk != 0)
    return fmt::format("K={} is not a multiple of 16, which 16-byte cp.async rows need", p.k);
  return {};
}

std::string invalid_reason(const GemmProblem& p, const KernelConfig& c, const Target& t) {
  if (c.warpgroups != 1 && c.warpgroups != 2)
    return fmt::format("{} warpgroups: wgmma takes one or two", c.warpgroups);
  if (c.bk != kRowBytes) return fmt::format("bk={}: wgmma tiles are one 128-byte swizzle row (bk = 128)", c.bk);
  const int wgs = c.warpgroups;
  if (c.bm <= 0 || c.bm % (kWgM * wgs) != 0 || c.bm / (kWgM * wgs) > 2)
    return fmt::format("bm={} over {} warpgroups: need 64 or 128 rows per warpgroup", c.bm, wgs);
  if (c.bn != 64 && c.bn != 128 && c.bn != 256) return fmt::format("bn={} (need 64, 128 or 256)", c.bn);
  if ((c.bm / wgs) * c.bn > 128 * 128)
    return fmt::format("bm={} bn={}: more than 128 accumulators per thread", c.bm, c.bn);
  if (c.stages < 2 || c.stages > 6) return fmt::format("{} stages (need 2 to 6)", c.stages);
  return budget_reason(dynamic_smem(c), registers(c), threads(c), t);
}

// Rules: one or two warpgroups, 64 or 128 rows each (bm 64..256), bn 64/128/256 not past the
// padded N, at most 128 accumulators per thread; bk = 128; stages as many as fit, up to 4 and
// up to the K tiles, 3+ when K has more than 2 tiles. At most 10 configs, and none at all
// unless the target asks for the experimental family.
std::vector<KernelConfig> candidates(const GemmProblem& p, const Target& t) {
  std::vector<KernelConfig> out;
  if (!t.experimental_wgmma) return out;
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
        c.warpgroups = wgs;
        const int stage_bytes = (c.bm + c.bn) * c.bk;
        c.stages = std::min({4, ktiles, (t.smem_per_block_optin - kAlignSlack) / stage_bytes});
        c.stages = std::max(c.stages, 2);
        if (c.stages < 3 && ktiles > 2) continue;
        if (!invalid_reason(p, c, t).empty()) continue;
        out.push_back(c);
      }
  return out;
}

// As mma_sync's cost, with the warpgroup MMA's rate (~4096 int8 MACs per SM per cycle: the
// datasheet's dense peak over 132 SMs at ~1.8 GHz) and no fragment loads; the k-tile loop waits
// for its MMAs, so one resident block exposes its copies: a factor below 2 blocks per SM. Only
// ranks wgmma configs against each other; never measured (docs/wgmma.md).
double cost(const GemmProblem& p, const KernelConfig& c, const Target& t, int64_t m) {
  const double tiles = std::ceil(double(std::max<int64_t>(m, 1)) / c.bm) * std::ceil(double(p.n) / c.bn);
  const int per_sm = std::max(1, blocks_per_sm(c, t));
  const double on_busiest = std::ceil(tiles / std::max(1, t.sm_count));
  const double k = std::ceil(double(p.k) / c.bk) * c.bk;
  const double rows_read = double(std::min<int64_t>(c.bm, std::max<int64_t>(m, 1)));
  const double tile_cycles = std::max(double(c.bm) * c.bn * k / 4096.0, (rows_read + c.bn) * k / 32.0);
  const double resident = std::min<double>(per_sm, on_busiest);
  const double efficiency = std::min(1.0, 0.5 * resident + 0.25 * (c.warpgroups - 1) + 0.5);
  return on_busiest * tile_cycles / efficiency;
}

// One layout only ([N,K]): the template takes no LAYOUT.
std::vector<TemplateArg> template_args(const KernelSpec& s) {
  const KernelConfig& c = s.config;
  std::vector<TemplateArg> a = {{"BM", c.bm}, {"BN", c.bn}, {"WG", c.warpgroups}, {"STAGES", c.stages}};
  for (const TemplateArg& x : problem_template_args(s.problem, false)) a.push_back(x);
  return a;
}

}  // namespace

const FamilyInfo& wgmma_family() {
  static const FamilyInfo f = [] {
    FamilyInfo f;
    f.family = Family::wgmma;
    f.name = "wgmma";
    f.header = "wgmma.cuh";
    f.kernel = "i8g::wgmma_kernel";
    f.name_fields = {ConfigField::warpgroups, ConfigField::stages};
    f.untuned_rank = 0;  // experimental: only a tune, which verifies every candidate, may pick it
    f.unsupported = unsupported;
    f.candidates = candidates;
    f.invalid_reason = invalid_reason;
    f.cost = cost;
    f.threads = threads;
    f.dynamic_smem = dynamic_smem;
    f.registers = registers;
    f.alignment = [](const KernelConfig&) { return kChunk; };
    f.template_args = template_args;
    return f;
  }();
  return f;
}

}  // namespace i8g

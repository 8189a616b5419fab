// The mma_sync family (templates/mma_sync.cuh): int8 m16n8k32 tensor-core MMAs on sm_80+, fed
// by a cp.async ring of `stages` tiles; warps_m x warps_n warps per block; K optionally split
// over split_k blocks that reduce through a workspace. Fields: bm, bn, bk, warps_m, warps_n,
// stages, split_k (loads are always 16 bytes: vec stays 16).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "generator/rules.hpp"

namespace i8g {
namespace {

constexpr int kMmaM = 16, kMmaK = 32;
constexpr int kWarpTileNStep = 16;  // one ldmatrix.x4 on B feeds two n8 tiles
constexpr int kChunk = 16;          // cp.async bytes; K and row pitches must keep it aligned

int warps(const KernelConfig& c) { return c.warps_m * c.warps_n; }
int threads(const KernelConfig& c) { return 32 * warps(c); }
int dynamic_smem(const KernelConfig& c) { return c.stages * (c.bm + c.bn) * c.bk; }  // the ring

// Accumulators (one int32 per output per thread), A and B fragments of one k32 step twice over
// (the compiler overlaps the next step's ldmatrix with this step's mma), and ~40 for
// addresses, loop state and the epilogue's operands.
int registers(const KernelConfig& c) {
  const int wtm = c.bm / std::max(c.warps_m, 1), wtn = c.bn / std::max(c.warps_n, 1);
  const int acc = wtm * wtn / 32;
  const int frags = 2 * ((wtm / kMmaM) * 4 + (wtn / 8) * 2);
  return acc + frags + 40;
}

// The warp arrangement of `nwarps` over a bm x bn tile whose warp tiles are closest to square
// (fewest shared-memory fragment loads per mma), or {0, 0} when none tiles it.
std::pair<int, int> arrange(int bm, int bn, int nwarps) {
  std::pair<int, int> best{0, 0};
  double best_skew = 0;
  for (int wm = 1; wm <= nwarps; wm *= 2) {
    const int wn = nwarps / wm;
    if (bm % (kMmaM * wm) != 0 || bn % (kWarpTileNStep * wn) != 0) continue;
    const double skew = std::fabs(std::log2(double(bm / wm) / double(bn / wn)));
    if (best.first == 0 || skew < best_skew) {
      best = {wm, wn};
      best_skew = skew;
    }
  }
  return best;
}

// K tiles per slice when K is split `split` ways (every slice but the last gets this many).
int64_t tiles_per_slice(const GemmProblem& p, const KernelConfig& c) {
  const int64_t ktiles = (p.k + c.bk - 1) / c.bk;
  return (ktiles + c.split_k - 1) / c.split_k;
}

std::string split_invalid_reason(const GemmProblem& p, const KernelConfig& c) {
  if (std::string why = split_k_range_reason(c); !why.empty()) return why;
  if (c.split_k == 1) return {};
  if (c.bk <= 0) return "bk must be positive";
  const int64_t ktiles = (p.k + c.bk - 1) / c.bk;
  if ((c.split_k - 1) * tiles_per_slice(p, c) >= ktiles)
    return fmt::format("split_k={} leaves a slice without K tiles (K={} is {} tiles of {})", c.split_k, p.k,
                       ktiles, c.bk);
  return {};
}

// Split-K serves decode: at M <= bm a problem has only ceil(N / bn) tiles, often fewer than
// the SMs. Splits as splits_to_offer picks them (the two whose last wave is fullest) within 3
// waves, each slice keeping >= 2 K tiles (some pipelining).
std::vector<int> split_choices(const GemmProblem& p, const KernelConfig& c, const Target& t) {
  const int64_t ktiles = (p.k + c.bk - 1) / c.bk;
  return splits_to_offer((p.n + c.bn - 1) / c.bn, t, 3, 2, [&](int s) {
    KernelConfig sc = c;
    sc.split_k = s;
    return (ktiles + s - 1) / s >= 2 && split_invalid_reason(p, sc).empty();
  });
}

std::string unsupported(const GemmProblem& p, const Target& t) {
  if (t.sm < 80) return "mma_sync needs sm_80 or later (cp.async and int8 m16n8k32)";
  if (p.k % kChunk != 0)
    return fmt::format("K={} is not a multiple of 16, which 16-byte cp.async rows need "
                       "(simt_dp4a covers it)", p.k);
  if (p.layout == WeightLayout::kn && p.n % kChunk != 0)
    return fmt::format("[K,N] weights need N={} to be a multiple of 16: their 16-byte cp.async "
                       "chunks run along n (simt_dp4a covers it)", p.n);
  return {};
}

std::string invalid_reason(const GemmProblem& p, const KernelConfig& c, const Target& t) {
  if (std::string why = split_invalid_reason(p, c); !why.empty()) return why;
  if (c.warps_m < 1 || c.warps_n < 1 || warps(c) > 8 || !is_pow2(warps(c)))
    return fmt::format("{}x{} warps (need 1 to 8, a power of two)", c.warps_m, c.warps_n);
  if (c.bm <= 0 || c.bn <= 0 || c.bm % (kMmaM * c.warps_m) != 0)
    return fmt::format("bm={} over {} warps: the warp tile M must be a multiple of 16", c.bm, c.warps_m);
  if (c.bn % (kWarpTileNStep * c.warps_n) != 0)
    return fmt::format("bn={} over {} warps: the warp tile N must be a multiple of 16", c.bn, c.warps_n);
  if (c.bm > 256 || c.bn > 256) return "block tiles above 256 x 256";
  if (p.layout == WeightLayout::kn && !is_pow2(c.bn))
    return fmt::format("bn={}: [K,N] weights need bn a power of two (the swizzle's conflict-free "
                       "proof and the copy's constant row offsets assume it)", c.bn);
  if (c.bk < kMmaK || c.bk > 256 || c.bk % kMmaK != 0)
    return fmt::format("bk={} must be a multiple of 32 in [32, 256]", c.bk);
  if (c.stages < 2 || c.stages > 6) return fmt::format("{} stages (need 2 to 6)", c.stages);
  return budget_reason(dynamic_smem(c), registers(c), threads(c), t);
}

// Rules (the same for [N,K] and [K,N] weights): block tiles bm in {16..256} (M is unknown
// here: small tiles serve decode, large ones prefill), bn in {32..256} (powers of two, not
// past the padded N), bk 64 or 128. Warps: 8 for tiles of at
// least 128x128, else 4, fewer only where smaller warp tiles than 16x16 would be needed; each
// arranged for square-ish warp tiles. Stages: as many as fit, up to 4 and up to the number of
// K tiles; a 2-stage ring (no overlap beyond one tile) is kept only when K has <= 2 tiles.
// Budgets (shared memory, registers) then prune. At most 5 x 4 x 2 = 40 configs per problem,
// plus up to two split-K variants (split_choices) of each bm <= 64, bk = 128 config, with
// stages recounted over one slice's K tiles.
std::vector<KernelConfig> candidates(const GemmProblem& p, const Target& t) {
  std::vector<KernelConfig> out;
  int64_t n_pow2 = 32;
  while (n_pow2 < p.n) n_pow2 *= 2;
  for (int bm : {16, 32, 64, 128, 256})
    for (int bn : {32, 64, 128, 256})
      for (int bk : {64, 128}) {
        if (bn > n_pow2) continue;  // all padding past N
        const int ktiles = int((p.k + bk - 1) / bk);
        if (bk == 128 && ktiles < 2) continue;  // bk 64 covers K <= 64 at half the padding
        std::pair<int, int> arr{0, 0};
        for (int w = bm * bn >= 128 * 128 ? 8 : 4; w >= 1 && arr.first == 0; w /= 2)
          arr = arrange(bm, bn, w);
        if (arr.first == 0) continue;
        KernelConfig c;
        c.family = Family::mma_sync;
        c.bm = bm;
        c.bn = bn;
        c.bk = bk;
        c.warps_m = arr.first;
        c.warps_n = arr.second;
        const int stage_bytes = (bm + bn) * bk;
        c.stages = std::min({4, ktiles, t.smem_per_block_optin / stage_bytes});
        c.stages = std::max(c.stages, 2);
        if (c.stages < 3 && ktiles > 2) continue;
        if (!invalid_reason(p, c, t).empty()) continue;
        out.push_back(c);
        if (bm <= 64 && bk == 128)
          for (int s : split_choices(p, c, t)) {
            KernelConfig sc = c;
            sc.split_k = s;
            const int per_slice = int(tiles_per_slice(p, sc));
            sc.stages = std::max(2, std::min({4, per_slice, t.smem_per_block_optin / stage_bytes}));
            if (invalid_reason(p, sc, t).empty()) out.push_back(sc);
          }
      }
  return out;
}

// Cycles on the busiest SM: the blocks it runs one after another times each block's time,
// the larger of its tensor work (~2048 int8 MACs per SM per cycle for mma.sync) and its
// operand traffic (~32 bytes per SM per cycle from L2; rows past M read nothing), stretched
// when fewer than 8 warps are resident to hide latency. Padding of partial tiles counts as
// work: that is what it costs.
double cost(const GemmProblem& p, const KernelConfig& c, const Target& t, int64_t m) {
  const double tiles = std::ceil(double(std::max<int64_t>(m, 1)) / c.bm) * std::ceil(double(p.n) / c.bn) *
                       c.split_k;
  const int per_sm = std::max(1, blocks_per_sm(c, t));
  const double on_busiest = std::ceil(tiles / std::max(1, t.sm_count));
  const double k = double(tiles_per_slice(p, c) * c.bk);
  // Rows past M are zero-filled without a global read: they cost mma work, not traffic.
  const double rows_read = double(std::min<int64_t>(c.bm, std::max<int64_t>(m, 1)));
  // Split-K: every slice writes its int32 partial tile, the last one reads the others back.
  const double reduce = c.split_k > 1 ? double(c.bm) * c.bn * 4.0 * 2.0 / 32.0 : 0.0;
  const double tile_cycles =
      std::max(double(c.bm) * c.bn * k / 2048.0, (rows_read + c.bn) * k / 32.0) + reduce;
  const double resident_warps = std::min<double>(per_sm, on_busiest) * warps(c);
  const double efficiency = std::min(1.0, resident_warps / 8.0);
  return on_busiest * tile_cycles / efficiency;
}

std::vector<TemplateArg> template_args(const KernelSpec& s) {
  const KernelConfig& c = s.config;
  std::vector<TemplateArg> a = {{"BM", c.bm},      {"BN", c.bn},         {"BK", c.bk},          {"WM", c.warps_m},
                                {"WN", c.warps_n}, {"STAGES", c.stages}, {"SPLIT_K", c.split_k}};
  for (const TemplateArg& x : problem_template_args(s.problem, true)) a.push_back(x);
  return a;
}

}  // namespace

const FamilyInfo& mma_sync_family() {
  static const FamilyInfo f = [] {
    FamilyInfo f;
    f.family = Family::mma_sync;
    f.name = "mma_sync";
    f.header = "mma_sync.cuh";
    f.kernel = "i8g::mma_sync_kernel";
    f.name_fields = {ConfigField::warps_m, ConfigField::warps_n, ConfigField::stages, ConfigField::split_k};
    f.splits_k = true;
    f.untuned_rank = 2;
    f.unsupported = unsupported;
    f.candidates = candidates;
    f.invalid_reason = invalid_reason;
    f.cost = cost;
    f.threads = threads;
    f.dynamic_smem = dynamic_smem;
    f.registers = registers;
    f.workspace = FamilyInfo::tile_splitk_workspace;
    f.alignment = [](const KernelConfig&) { return kChunk; };
    f.template_args = template_args;
    return f;
  }();
  return f;
}

}  // namespace i8g

// The decode_mma family (templates/decode_mma.cuh): decode GEMMs (M <= 64) as a weight stream on
// sm_80+. out^T = W . X^T with mma.sync m16n8k32 (weight rows as the 16-row operand, tokens as
// the 8-column one), 16-byte loads straight into a per-warp register ring, warps_k warps per
// block sweeping the block's K slice in turn, split-K across blocks reduced in the kernel.
// Fields: bm (tokens per block: 8..64), bn (weight rows per block: 16, 32, 64), bk (bytes of k
// per warp and chunk: 64, 128, 256), warps_k, stages (chunks in flight per warp), split_k, and
// schedule (named only where it is 1): 0 stages the chunks in registers, 1 in a shared-memory
// ring fed by cp.async with whole row pieces per copy (decode_frag.h).
// A tune races it only in the M bucket whose rows one bm tile holds with the least padding
// (races_at); untuned, it serves M <= 16 on sm_90 and M = 17..32 for N of 768..4096 on sm_90a
// (serves_untuned). docs/decode_mma.md.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "generator/rules.hpp"
#include "templates/decode_frag.h"

namespace i8g {
namespace {

constexpr int kMaxRows = 64;          // the largest bm: the M this family is for
constexpr int kRegisterCap = 232;     // estimated registers per thread a candidate may need
constexpr int kRegisterGoal = 168;    // bk is the largest whose ring keeps the estimate below this
constexpr int kSharedRing = 1;        // schedule: the chunks staged in shared memory
constexpr int kRingStages = 3;        // chunks in flight per warp in a shared-memory ring
constexpr int kRingSmemGoal = 96 * 1024;  // a block's ring leaves room for two blocks per SM
constexpr int kDeepStages = 4;        // chunks in flight per warp in a deep ring (the template's most)
constexpr int64_t kMaxUntunedRows = 16;  // the untuned default's M on sm_90 (serves_untuned)

int threads(const KernelConfig& c) { return 32 * c.warps_k; }
// The warps' int32 tiles, met in shared memory after the main loop (decode_frag.h).
// With schedule 1, each warp's ring of stages chunks after them.
int dynamic_smem(const KernelConfig& c) {
  const int ring = c.schedule == kSharedRing ? dec::ring_warp_bytes(c.bm, c.bn, c.bk, c.stages) : 0;
  return c.warps_k * (dec::red_words(c.bm, c.bn) * 4 + ring);
}

// The ring (per stage and 64 bytes of k: two int4 loads per 16 weight rows, one per 8 tokens;
// one chunk's fragments where the ring is in shared memory), the accumulators, the reduced
// tile's int4s, and ~48 for row pointers, loop state and the epilogue's operands.
int registers(const KernelConfig& c) {
  const int rt = c.bn / dec::kRows, nt = c.bm / dec::kCols, u = c.bk / dec::kStep;
  const int group_words = c.warps_k > 0 ? 4 * dec::group_vectors(c.bm, c.bn, threads(c)) : 0;
  const int held = c.schedule == kSharedRing ? 1 : c.stages;
  return held * u * (8 * rt + 4 * nt) + 4 * rt * nt + group_words + 48;
}

// The smallest bm whose one row tile holds m rows: the tile a bucket bounded by m runs.
int row_tile(int64_t m) {
  int bm = dec::kCols;
  while (bm < m && bm < kMaxRows) bm *= 2;
  return bm;
}

std::string split_invalid_reason(const GemmProblem& p, const KernelConfig& c) {
  if (std::string why = split_k_range_reason(c); !why.empty()) return why;
  if (c.bk <= 0) return "bk must be positive";
  if (c.split_k > 1 && dec::slice_begin(p.k, c.bk, c.split_k, c.split_k - 1) >= dec::chunks(p.k, c.bk))
    return fmt::format("split_k={} leaves a slice without K chunks (K={} is {} chunks of {})", c.split_k, p.k,
                       dec::chunks(p.k, c.bk), c.bk);
  return {};
}

std::string unsupported(const GemmProblem& p, const Target& t) {
  if (t.sm < 80) return "decode_mma needs sm_80 or later (int8 mma.sync m16n8k32)";
  if (p.layout != WeightLayout::nk)
    return "decode_mma streams [N,K] weights (16 contiguous bytes of k per load); [K,N] runs on mma_sync, "
           "whose copies transpose through shared memory";
  if (p.k % dec::kLoad != 0)
    return fmt::format("K={} is not a multiple of 16, which its 16-byte loads need (simt_dp4a covers it)", p.k);
  return {};
}

std::string invalid_reason(const GemmProblem& p, const KernelConfig& c, const Target& t) {
  if (std::string why = split_invalid_reason(p, c); !why.empty()) return why;
  if (c.bm < dec::kCols || c.bm > kMaxRows || c.bm % dec::kCols != 0)
    return fmt::format("bm={}: 8 to 64 tokens, a multiple of 8 (the mma's N)", c.bm);
  if (c.bn != 16 && c.bn != 32 && c.bn != 64) return fmt::format("bn={} (need 16, 32 or 64 weight rows)", c.bn);
  if (c.bk != 64 && c.bk != 128 && c.bk != 256) return fmt::format("bk={} (need 64, 128 or 256 bytes)", c.bk);
  if (c.warps_k < 1 || c.warps_k > 8) return fmt::format("warps_k={} (need 1 to 8)", c.warps_k);
  if (c.stages < 1 || c.stages > 4) return fmt::format("{} stages (need 1 to 4 chunks in flight)", c.stages);
  if (c.schedule != 0 && c.schedule != kSharedRing)
    return fmt::format("schedule={} (need 0, chunks in registers, or 1, a shared-memory ring)", c.schedule);
  if (c.schedule == kSharedRing && c.bk != 128 && c.bk != 256)
    return fmt::format("bk={} with a shared-memory ring (its copies cover rows of 128 or 256 bytes)", c.bk);
  if (std::string why = pdl_trigger_reason(c, t); !why.empty()) return why;
  return budget_reason(dynamic_smem(c), registers(c), threads(c), t, kRegisterCap);
}

// Splits worth racing: only where one row of column tiles leaves resident block slots empty
// (slots = SMs x blocks per SM), those splits_to_offer picks within 2 waves of slots whose
// slices give every warp at least one chunk.
std::vector<int> split_choices(const GemmProblem& p, const KernelConfig& c, const Target& t) {
  Target slots = t;
  slots.sm_count = t.sm_count * std::max(1, blocks_per_sm(c, t));
  return splits_to_offer((p.n + c.bn - 1) / c.bn, slots, 2, 2, [&](int s) {
    KernelConfig sc = c;
    sc.split_k = s;
    return dec::per_slice(p.k, c.bk, s) >= c.warps_k && split_invalid_reason(p, sc).empty();
  });
}

// The shared-memory ring twin of a register config: kRingStages chunks of 256 bytes of k, or of
// 128 where 256 would take more than kRingSmemGoal, else two chunks (256, then 128 bytes);
// bk = 0 where none fits.
KernelConfig shared_ring(KernelConfig c) {
  c.schedule = kSharedRing;
  for (int stages : {kRingStages, 2})
    for (int bk : {256, 128}) {
      c.stages = stages;
      c.bk = bk;
      if (dynamic_smem(c) <= kRingSmemGoal) return c;
    }
  c.bk = 0;
  return c;
}

// The deep shared-ring twin (session 31), for grids that fill at most one wave of one block per
// SM (N / bn column tiles at most the SM count, no split): 4 chunks of 128 bytes in flight per
// warp, taking shared memory the regular twin leaves for a second block that such a grid never
// has. There each warp streams only a few chunks (768 x 4096 with 8 warps: 4 of 128 bytes), so
// with the regular twin's 2 or 3 in flight it waits out a second memory round trip; the deep ring
// puts them all in flight at once. Offered only where a warp has more chunks than the regular
// twin holds in flight; bk = 0 where it does not apply or does not fit.
KernelConfig deep_ring(const GemmProblem& p, KernelConfig c, const Target& t) {
  const int regular = shared_ring(c).stages;
  c.schedule = kSharedRing;
  c.bk = 128;
  c.stages = kDeepStages;
  const bool one_wave = (p.n + c.bn - 1) / c.bn <= t.sm_count;
  const bool deeper = dec::warp_chunks(p.k, c.bk, 1, 0, 0, c.warps_k) > regular;  // warp 0 streams the most
  if (!one_wave || !deeper || dynamic_smem(c) <= kRingSmemGoal || !invalid_reason(p, c, t).empty()) c.bk = 0;
  return c;
}
bool is_deep_ring(const KernelConfig& c) { return c.schedule == kSharedRing && c.stages == kDeepStages; }

// Rules: bm in {8, 16, 32, 64} (a tune races each in its own M bucket), bn in {16, 32, 64} not
// past the padded N, 4 or 8 warps, two chunks in flight per warp, bk the largest of 256, 128, 64
// whose ring keeps the register estimate under kRegisterGoal (else 64, if under the cap); and
// the shared-memory ring twin of each (shared_ring). Then up to two split-K variants of each
// (split_choices); and, on grids of one wave, the deep shared-ring twin (deep_ring, unsplit).
// At most 44 + 88 + 24 configs.
std::vector<KernelConfig> candidates(const GemmProblem& p, const Target& t) {
  std::vector<KernelConfig> out;
  int64_t n_pow2 = 16;
  while (n_pow2 < p.n) n_pow2 *= 2;
  for (int bm : {8, 16, 32, 64})
    for (int bn : {16, 32, 64})
      for (int wk : {4, 8}) {
        if (bn > n_pow2) continue;
        KernelConfig c;
        c.family = Family::decode_mma;
        c.bm = bm;
        c.bn = bn;
        c.warps_k = wk;
        c.stages = 2;
        for (int bk : {256, 128, 64}) {
          c.bk = bk;
          if (registers(c) <= kRegisterGoal) break;
        }
        if (!invalid_reason(p, c, t).empty()) continue;
        for (const KernelConfig& v : {c, shared_ring(c)}) {
          if (v.bk == 0 || !invalid_reason(p, v, t).empty()) continue;
          out.push_back(v);
          for (int s : split_choices(p, v, t)) {
            KernelConfig sc = v;
            sc.split_k = s;
            if (invalid_reason(p, sc, t).empty()) out.push_back(sc);
          }
        }
        if (const KernelConfig d = deep_ring(p, c, t); d.bk > 0) out.push_back(d);
      }
  return out;
}

// A decode kernel's time is its weight bytes over the slots that stream them: waves of blocks
// over the resident slots times one block's bytes (bn rows of its K slice, read again for every
// row tile past the first), plus the split's partial round trip and the padded tokens' MMAs;
// doubled off the token tile a tune races at this M (races_at). Ranks configs for
// I8GEMM_FAMILY=decode_mma (the untuned default's rule leaves one config per bucket); a tune decides.
double cost(const GemmProblem& p, const KernelConfig& c, const Target& t, int64_t m) {
  const int64_t tiles_m = (std::max<int64_t>(m, 1) + c.bm - 1) / c.bm;
  const int64_t blocks = tiles_m * ((p.n + c.bn - 1) / c.bn) * c.split_k;
  const int64_t slots = int64_t(std::max(1, t.sm_count)) * std::max(1, blocks_per_sm(c, t));
  const double waves = std::ceil(double(blocks) / double(slots));
  const double k_slice = double(dec::per_slice(p.k, c.bk, c.split_k) * c.bk);
  const double bytes = double(c.bn) * k_slice;
  const double partial = c.split_k > 1 ? 8.0 * c.bm * c.bn : 0.0;
  const double padding = double(c.bm) / dec::kCols * c.bn * k_slice / 64.0;
  // A shared-memory ring ranks just after its register twin until the H200 has ranked them.
  const double ring = c.schedule == kSharedRing ? 1.01 : 1.0;
  return waves * (bytes + partial + padding) * (c.bm == row_tile(m) ? 1.0 : 2.0) * ring;
}

// A tune races a config only in the bucket its bm serves: bm = the smallest tile that holds the
// bucket's rows (8 for M <= 8, then 16, 32, 64), never above M = 64. Smaller tiles would read
// the weight once per row tile; larger ones only add padded MMAs.
bool races_at(const KernelSpec& spec, int64_t m) { return m <= kMaxRows && spec.config.bm == row_tile(m); }

// The untuned default up to M = 16, on sm_90 and in the regime it was measured in (N of 768 to
// 28672, K of 384 to 14336): 16 weight rows per block, 4 warps, no split; bm 8 up to M = 8,
// bm 16 above (docs/decode_mma.md). Until session 30 it asked for N >= 16 x the SM count and
// K >= 4096; session 29's H200 races put this tile within 0-6% of the tuned winner on 768 x
// 4096, 4096 x 2048 and 4096 x 384 at M = 1 and 16, where mma_sync's split-K default, which
// served there, ran 1.24-2.56x the winner's time. Where
// the chunks wait (prefers_shared_ring), as the H200 ranked them in session 15 (call 3, the same
// tiles side by side): bm 16 in the shared-memory ring on all five target shapes (0.89-0.95x
// the register ring's time); bm 8 in the shared ring where its column tiles fit in one wave of
// the ring's resident blocks (2560, 4096 and 6144 rows: 0.92-0.98x), else in registers, whose
// smaller blocks fit more per SM (8192 and 28672 rows: the shared ring 1.02-1.03x). Smaller N or
// K keep mma_sync's split-K default: no measurement covers them.
bool prefers_shared_ring(const GemmProblem& p, const KernelConfig& c, const Target& t) {
  if (c.bm > dec::kCols) return true;
  const KernelConfig ring = shared_ring(c);
  return ring.bk > 0 && (p.n + c.bn - 1) / c.bn <= int64_t(t.sm_count) * blocks_per_sm(ring, t);
}

// From M = 17 to 32 on sm_90a (where wgmma_tma's untuned tile serves otherwise), the bm-32 tile
// in the shared-memory ring where N is 768 to 4096 and K >= 384 (K >= 4096 until session 30:
// session 29's races timed it the winner on 4096 x 2048 and 4096 x 384 at M = 32, where
// wgmma_tma's untuned 64 x 48 ran 1.15x and 1.16x its time): in the H200 tunes of session
// 25 (call 1, M = 32, graph medians) it took 4.29 us on 768 x 4096 against 5.83 for wgmma_tma's
// untuned 64 x 48, 5.57 against 6.29 on 2560 x 4096 and 17.68 against 17.88 on 4096 x 14336,
// and lost where N is larger (6144 x 4096 11.35 against 9.38, 8192 x 8192 21.60 against 19.83,
// 28672 x 4096 39.76 against 32.83: there the tune's wider decode tiles or wgmma_tma win).
bool serves_mid_untuned(const GemmProblem& p, const Target& t, int64_t m) {
  constexpr int64_t kMinRows = 17, kMaxRows = 32, kMinN = 768, kMaxN = 4096;
  return t.arch == "sm_90a" && m >= kMinRows && m <= kMaxRows && p.n >= kMinN && p.n <= kMaxN;
}

// Up to M = 16, where the 16-row tile's grid is one wave and a warp has more chunks than the
// regular ring keeps in flight, the deep ring of 8 warps (deep_ring): session 31's H100 race of
// 768 x 4096 timed it 3.05 us at M = 16 against 3.77 for the 4-warp ring the rule took before
// (1.24x) and 2.94 against 3.02 at M = 1. Not above M = 16: not measured there.
bool deep_untuned(const GemmProblem& p, const Target& t, int64_t m) {
  if (m > kMaxUntunedRows) return false;
  KernelConfig c;
  c.family = Family::decode_mma;
  c.bm = row_tile(m);
  c.bn = 16;
  c.warps_k = 8;
  return deep_ring(p, c, t).bk > 0;
}

bool serves_untuned(const GemmProblem& p, const KernelConfig& c, const Target& t, int64_t m) {
  constexpr int64_t kMinN = 768, kMinK = 384;
  const bool rows_fit = m <= kMaxUntunedRows ? p.n >= kMinN : serves_mid_untuned(p, t, m);
  if (!(t.sm == 90 && rows_fit && p.k >= kMinK && c.bm == row_tile(m) && c.bn == 16 && c.split_k == 1 &&
        c.pdl_trigger == 0))
    return false;
  if (deep_untuned(p, t, m)) return c.warps_k == 8 && is_deep_ring(c);
  return c.warps_k == 4 && !is_deep_ring(c) && (c.schedule == kSharedRing) == prefers_shared_ring(p, c, t);
}

std::vector<TemplateArg> template_args(const KernelSpec& s) {
  const KernelConfig& c = s.config;
  std::vector<TemplateArg> a = {{"BM", c.bm},           {"BN", c.bn},         {"BK", c.bk},
                                {"WK", c.warps_k},      {"STAGES", c.stages}, {"RING", c.schedule},
                                {"SPLIT_K", c.split_k}, {"TRIG", c.pdl_trigger}};
  for (const TemplateArg& x : problem_template_args(s.problem, false)) a.push_back(x);
  return a;
}

}  // namespace

const FamilyInfo& decode_mma_family() {
  static const FamilyInfo f = [] {
    FamilyInfo f;
    f.family = Family::decode_mma;
    f.name = "decode_mma";
    f.header = "decode_mma.cuh";
    f.kernel = "i8g::decode_mma_kernel";
    f.name_fields = {ConfigField::warps_k, ConfigField::stages, ConfigField::split_k};
    // "_sc1": the shared-memory ring; "_tr1", "_tr2": the programmatic-launch trigger
    f.optional_name_fields = {ConfigField::schedule, ConfigField::pdl_trigger};
    f.splits_k = true;
    f.untuned_rank = 4;  // above wgmma_tma and mma_sync, where serves_untuned accepts (sm_90, M <= 16; sm_90a to 32)
    f.serves_untuned = serves_untuned;
    f.races_at = races_at;
    f.unsupported = unsupported;
    f.candidates = candidates;
    f.invalid_reason = invalid_reason;
    f.cost = cost;
    f.threads = threads;
    f.dynamic_smem = dynamic_smem;
    f.registers = registers;
    f.workspace = FamilyInfo::tile_splitk_workspace;
    f.alignment = [](const KernelConfig&) { return dec::kLoad; };
    f.template_args = template_args;
    return f;
  }();
  return f;
}

}  // namespace i8g

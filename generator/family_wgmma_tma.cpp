// The wgmma_tma family (templates/wgmma_tma.cuh): Hopper warpgroup MMAs on sm_90a fed by TMA,
// one producer and two consumer warpgroups per block, a persistent grid of at most one block
// per SM. Its candidates are tuned like any family's; the untuned default takes it on sm_90a
// from M = 17 up (a tile by a rule measured on the H200, docs/wgmma_tma.md). Fields: bm, bn,
// bk (128: one 128-byte K tile per ring stage; 256: two, the bk-256 twins of the small ping-pong
// tiles), warpgroups (= 2 consumers), stages, schedule (1 cooperative: the consumers split
// each tile; 2 ping-pong: each consumer owns whole tiles in turn, so one's epilogue runs under
// the other's MMAs), split_k (K slices of each tile walked as separate work units, reduced
// through a workspace).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "generator/rules.hpp"
#include "templates/splitk.h"

namespace i8g {
namespace {

constexpr int kWgM = 64;            // rows per wgmma instruction
constexpr int kRowBytes = 128;      // bk: one 128-byte swizzle row of k per tile row
constexpr int kConsumers = 2;       // consumer warpgroups; a third one produces
constexpr int kThreads = 3 * 128;
constexpr int kAlignSlack = 1024;   // the kernel rounds the ring up to a 1024-byte boundary
constexpr int kGroupM = 8;          // tile rows walked together (L2 reuse)
constexpr int kMaxStages = 16;     // the ring depths the template takes
constexpr int kPlainStages = 8;    // the plain candidates' depth cap; deep variants go further
constexpr int kMaxClusterM = 2;
constexpr int kMaxClusterK = 2;

int stage_bytes(const KernelConfig& c) { return (c.bm + c.bn) * c.bk; }
int threads(const KernelConfig&) { return kThreads; }
constexpr int kCooperative = 1, kPingPong = 2;  // KernelConfig::schedule
int consumer_rows(const KernelConfig& c) { return c.schedule == kPingPong ? c.bm : c.bm / kConsumers; }
// A K pair's exchange buffers (one per consumer, its rows x bn int32) and their four barriers.
int pair_bytes(const KernelConfig& c) { return c.cluster_k > 1 ? 2 * consumer_rows(c) * c.bn * 4 + 32 : 0; }
// The staged store's buffers (epilogue_store = 1): one per consumer, its rows x bn 2-byte outputs.
int store_bytes(const KernelConfig& c) { return c.epilogue_store ? 2 * consumer_rows(c) * c.bn * 2 : 0; }
// The dynamic schedule's ring of tile ids (templates/wgmma_tma.cuh: kSchedSlots of them, each
// an int and two 8-byte mbarriers).
constexpr int kSchedSlots = 4;
int sched_bytes(const KernelConfig& c) { return c.dynamic_schedule ? kSchedSlots * (4 + 16) : 0; }
// The ring, its alignment slack, two 8-byte mbarriers per stage, the two turn barriers, a K
// pair's exchange or the staged store's buffers, and the dynamic schedule's ids.
int dynamic_smem(const KernelConfig& c) {
  return c.stages * stage_bytes(c) + kAlignSlack + 16 * c.stages + 16 + pair_bytes(c) + store_bytes(c) +
         sched_bytes(c);
}
// The consumers' budget after setmaxnreg: accumulators plus addresses, descriptors, loop state
// and the epilogue's operands; the template raises them to 232.
int registers(const KernelConfig& c) { return consumer_rows(c) * c.bn / 128 + 64; }

int64_t k_tiles(const GemmProblem& p) { return (p.k + kRowBytes - 1) / kRowBytes; }
int64_t tiles(const GemmProblem& p, const KernelConfig& c, int64_t m) {
  return ((std::max<int64_t>(m, 1) + c.bm - 1) / c.bm) * ((p.n + c.bn - 1) / c.bn);
}

// The kernel gives each slice floor or ceil of ktiles / split_k K tiles (tma::unit_of), so
// every slice has some as long as there are no more slices than K tiles.
std::string split_invalid_reason(const GemmProblem& p, const KernelConfig& c) {
  if (std::string why = split_k_range_reason(c); !why.empty()) return why;
  if (c.split_k > k_tiles(p))
    return fmt::format("split_k={} leaves a slice without K tiles (K={} is {} tiles of 128)", c.split_k, p.k,
                       k_tiles(p));
  return {};
}

// The staged TMA store (templates/tma_store.cuh) writes 2-byte outputs of whole tiles in panels of
// 64 columns, through an output map whose row stride (N * 2 bytes) must be a multiple of 16.
std::string store_invalid_reason(const GemmProblem& p, const KernelConfig& c) {
  if (c.epilogue_store == 0) return {};
  if (c.epilogue_store != 1) return fmt::format("epilogue_store={} (need 0 or 1)", c.epilogue_store);
  if (c.split_k > 1 || c.cluster_k > 1)
    return fmt::format("epilogue_store with split_k={}, cluster_k={}: split tiles store from registers", c.split_k,
                       c.cluster_k);
  if (out_element_size(p.out) != 2)
    return fmt::format("epilogue_store with {} outputs: the staged store is for bf16 and f16", to_string(p.out));
  if (c.bn % 64 != 0) return fmt::format("epilogue_store with bn={}: it stores panels of 64 columns", c.bn);
  if (p.n % 8 != 0)
    return fmt::format("epilogue_store with N={}: the output map's row stride (2N bytes) must be a multiple of 16",
                       p.n);
  return {};
}

// The tile-order fields: raster_group 0 (the family's kGroupM), 1, 2, 4 or 16 tile rows or columns
// walked together (8 is spelled 0: one kernel, one name); l2_hint bits 0 (x loads evict_last) and
// 1 (w loads evict_first; with a cluster the w multicast), not with a K pair or a packed weight.
std::string order_invalid_reason(const KernelConfig& c) {
  const int g = c.raster_group;
  if (g != 0 && g != 1 && g != 2 && g != 4 && g != 16)
    return fmt::format("raster_group={} (need 0: the family's {}, or 1, 2, 4, 16)", g, kGroupM);
  if (c.l2_hint < 0 || c.l2_hint > 3)
    return fmt::format("l2_hint={} (need 0 to 3: bit 0 x evict_last, bit 1 w evict_first)", c.l2_hint);
  if (c.l2_hint != 0 && (c.cluster_k != 1 || c.packed_weight != 0))
    return fmt::format("l2_hint with cluster_k={}, packed_weight={}: the hints are for the tensor-map loads of tiles "
                       "without a K pair",
                       c.cluster_k, c.packed_weight);
  return {};
}

std::string unsupported(const GemmProblem& p, const Target& t) {
  if (t.arch != "sm_90a") return fmt::format("wgmma_tma needs sm_90a (the arch-specific Hopper target), not {}", t.arch);
  if (p.layout != WeightLayout::nk)
    return "wgmma_tma needs [N,K] weights: .s8 operands must both be K-major (no transpose); "
           "[K,N] runs on mma_sync";
  if (p.k % 16 != 0) return fmt::format("K={} is not a multiple of 16, which a tensor map's row stride needs", p.k);
  return {};
}

std::string invalid_reason(const GemmProblem& p, const KernelConfig& c, const Target& t) {
  if (std::string why = split_invalid_reason(p, c); !why.empty()) return why;
  if (c.warpgroups != kConsumers)
    return fmt::format("{} warpgroups: wgmma_tma has {} consumer warpgroups", c.warpgroups, kConsumers);
  if (c.bk != kRowBytes && c.bk != 2 * kRowBytes)
    return fmt::format("bk={}: a wgmma_tma stage holds one or two 128-byte K tiles (bk = 128 or 256)", c.bk);
  // Two K tiles a stage ran on the H200 (exact) only in unclustered, unsplit tiles with register
  // stores (session 27): with clusters, K pairs, split-K or the staged store it is refused.
  if (c.bk != kRowBytes && (c.cluster_m != 1 || c.cluster_k != 1 || c.split_k != 1 || c.epilogue_store != 0))
    return fmt::format("bk={} with cluster_m={}, cluster_k={}, split_k={}, epilogue_store={}: two K tiles a stage are "
                       "for unclustered, unsplit tiles with register stores",
                       c.bk, c.cluster_m, c.cluster_k, c.split_k, c.epilogue_store);
  // A packed weight (generator/packed_weight.hpp) is one bulk copy a stage into an unshared ring:
  // no cluster shares it, and split-K's and the staged store's interplay with it was never run.
  if (c.packed_weight != 0 && c.packed_weight != 1) return fmt::format("packed_weight={} (need 0 or 1)", c.packed_weight);
  if (c.packed_weight && (c.cluster_m != 1 || c.cluster_k != 1 || c.split_k != 1 || c.epilogue_store != 0))
    return fmt::format("packed_weight with cluster_m={}, cluster_k={}, split_k={}, epilogue_store={}: a packed weight is "
                       "for unclustered, unsplit tiles with register stores",
                       c.cluster_m, c.cluster_k, c.split_k, c.epilogue_store);
  if (c.dynamic_schedule != 0 && c.dynamic_schedule != 1)
    return fmt::format("dynamic_schedule={} (need 0 or 1)", c.dynamic_schedule);
  // The dynamic schedule hands out whole tiles: no cluster walks units in lock step with it, and
  // no split or packed weight was combined with it.
  if (c.dynamic_schedule && (c.cluster_m != 1 || c.cluster_k != 1 || c.split_k != 1 || c.packed_weight != 0))
    return fmt::format("dynamic_schedule with cluster_m={}, cluster_k={}, split_k={}, packed_weight={}: the dynamic "
                       "schedule is for unclustered, unsplit tiles of the plain weight",
                       c.cluster_m, c.cluster_k, c.split_k, c.packed_weight);
  if (std::string why = order_invalid_reason(c); !why.empty()) return why;
  if (std::string why = pdl_trigger_reason(c, t); !why.empty()) return why;
  if (c.schedule != kCooperative && c.schedule != kPingPong)
    return fmt::format("schedule={} (need {} cooperative or {} ping-pong)", c.schedule, kCooperative, kPingPong);
  if (c.schedule == kCooperative && c.bm != 128 && c.bm != 256)
    return fmt::format("bm={}: cooperative needs 128 or 256 (64 or 128 rows per consumer)", c.bm);
  if (c.schedule == kPingPong && c.bm != 64 && c.bm != 128)
    return fmt::format("bm={}: ping-pong needs 64 or 128 (the rows one consumer owns)", c.bm);
  if (c.bn != 48 && c.bn != 64 && c.bn != 80 && c.bn != 96 && c.bn != 128 && c.bn != 160 && c.bn != 192 &&
      c.bn != 256)
    return fmt::format("bn={} (need 48, 64, 80, 96, 128, 160, 192 or 256)", c.bn);
  if (consumer_rows(c) * c.bn > 128 * 128)
    return fmt::format("bm={} bn={}: more than 128 accumulators per consumer thread", c.bm, c.bn);
  if (c.stages < 2 || c.stages > kMaxStages) return fmt::format("{} stages (need 2 to {})", c.stages, kMaxStages);
  if (c.cluster_m < 1 || c.cluster_m > kMaxClusterM)
    return fmt::format("cluster_m={} (need 1, no cluster, or 2, two blocks along M sharing each w tile)", c.cluster_m);
  if (c.cluster_m > 1 && c.split_k > 1)
    return fmt::format("cluster_m={} with split_k={}: a cluster config does not split K", c.cluster_m, c.split_k);
  if (c.cluster_k < 1 || c.cluster_k > kMaxClusterK)
    return fmt::format("cluster_k={} (need 1, no pair, or 2, two blocks over the halves of K)", c.cluster_k);
  if (c.cluster_k > 1 && (c.cluster_m > 1 || c.split_k > 1))
    return fmt::format("cluster_k={} with cluster_m={}, split_k={}: a K pair neither clusters along M nor splits K",
                       c.cluster_k, c.cluster_m, c.split_k);
  if (c.cluster_k > k_tiles(p))
    return fmt::format("cluster_k={} leaves a block without K tiles (K={} is {} tiles of 128)", c.cluster_k, p.k,
                       k_tiles(p));
  if (std::string why = store_invalid_reason(p, c); !why.empty()) return why;
  const int smem = dynamic_smem(c);
  if (smem > t.smem_per_block_optin)
    return fmt::format("{} bytes of shared memory above the target's {} per block", smem, t.smem_per_block_optin);
  if (registers(c) > 232) return fmt::format("~{} registers per consumer thread (232 after setmaxnreg)", registers(c));
  return {};
}

// The shapes that also run as a cluster of two blocks along M (cm2): CUTLASS's vLLM default
// (ping-pong 128x128 cluster 2x1) and the two other shapes that won large-M tunes on the H200
// (cooperative 256x128, ping-pong 64x256). Not ping-pong 64x128 (vLLM's config for
// 64 < M <= 128): its cm2 was never within 5% of a tune's winner over 40 buckets (H200,
// sessions 12-13). Candidates do not know M: at M <= bm a cm2 kernel runs with half its blocks
// computing a tile past M (correct, and slower; the tune times it).
bool clusters_pay(const KernelConfig& c) {
  return (c.schedule == kPingPong && c.bm == 128 && c.bn == 128) ||
         (c.schedule == kCooperative && c.bm == 256 && c.bn == 128) ||
         (c.schedule == kPingPong && c.bm == 64 && c.bn == 256);
}

// Split-K is for shapes whose tiles leave SMs idle at small and mid M (768 x 4096 at M = 64 is
// 16 tiles of 64 x 48 for 132 SMs). The tiles with one m64 instruction per consumer and bn 48
// or 64 (ping-pong 64 x bn, cooperative 128 x bn) get splits: for each M of kSplitMs, the one
// split splits_to_offer picks for that M's tile count within 2 waves of units (a persistent
// block walks them back to back) where every slice keeps >= 4 K tiles. A tune races a split
// only at an M whose tiles it fills (races_at): fewer tiles than SMs, units within two waves.
// On the H200 (session 17, calls 1-2, 2560 x 4096, 6144 x 4096 and 768 x 4096 at M = 32..512)
// splits won only at 768 x 4096 up to M = 128 (ping-pong 64 x 48 sk4, 0.91-0.93x the best
// unsplit time); the wider tiles' splits (bn 80..128) and slices of 2 K tiles were never within
// 5% of a winner there. Cooperative 128 x 128 split 4 and 2 ways where K is long (4096 x 14336:
// 117 MB through L2 against the winner's ~176 MB at M = 128) lost too (session 33 call 1):
// 1.21-1.24x the winner at M = 128, 1.07-1.39x over M = 64..512: L2 bytes do not bound there.
constexpr int64_t kSplitMs[] = {64, 128, 256, 512};
constexpr int64_t kMinSliceKTiles = 4;
constexpr int64_t kMinPairKTiles = 64;
// K long enough for a K pair: at least 64 K tiles of 128.
bool long_k(const GemmProblem& p) { return k_tiles(p) >= kMinPairKTiles; }
bool split_shape(const KernelConfig& c) {
  return c.cluster_m == 1 && consumer_rows(c) == kWgM && (c.bn == 48 || c.bn == 64);
}
bool split_fills(const GemmProblem& p, const KernelConfig& c, const Target& t, int64_t m) {
  const int64_t n = tiles(p, c, m);
  return n < t.sm_count && n * c.split_k <= 2 * int64_t(t.sm_count);
}

std::vector<KernelConfig> split_variants(const GemmProblem& p, const KernelConfig& c, const Target& t) {
  std::vector<KernelConfig> out;
  if (!split_shape(c)) return out;
  for (int64_t m : kSplitMs)
    for (int s : splits_to_offer(tiles(p, c, m), t, 2, 1, [&](int split) { return k_tiles(p) / split >= kMinSliceKTiles; })) {
      KernelConfig sc = c;
      sc.split_k = s;
      if (std::find(out.begin(), out.end(), sc) == out.end() && invalid_reason(p, sc, t).empty()) out.push_back(sc);
    }
  return out;
}

// A K pair (cluster_k = 2) is for tiles that fit one wave of pairs: at most half the SMs.
bool pair_fills(const GemmProblem& p, const KernelConfig& c, const Target& t, int64_t m) {
  return tiles(p, c, m) * c.cluster_k <= t.sm_count;
}

bool raster_races(const GemmProblem& p, const KernelConfig& c, const Target& t, int64_t m);
bool races_at(const KernelSpec& spec, int64_t m) {
  const KernelConfig& c = spec.config;
  const Target t = Target::from_arch(spec.arch);
  if (c.raster_group != 0) return raster_races(spec.problem, c, t, m);
  // One wave: nothing to balance, and every tile's operands are in flight at once.
  if (c.dynamic_schedule || c.l2_hint != 0) return tiles(spec.problem, c, m) > t.sm_count;
  if (c.split_k == 1 && c.cluster_k == 1) return true;
  return c.split_k > 1 ? split_fills(spec.problem, c, t, m) : pair_fills(spec.problem, c, t, m);
}

// K pairs of the split shapes, offered where K is long (at least 64 K tiles) and one of
// M = 32..128 has tiles for at most half the SMs, with as deep a ring as fits beside the
// exchange buffers. On the H200 (session 17 call 4) a pair won 4096 x 14336 at M = 128
// (cooperative 128 x 64: 20.7 us against 21.7 for its workspace split and 22.1 for the best
// unsplit tile) and lost everywhere at K = 4096 (2560 x 4096 M = 64: 7.07 against 6.57 for the
// unsplit 64 x 48: twice the blocks streaming half of K each are not faster, the operands'
// total traffic is what bounds these points) and at M = 32, 64 of K = 14336.
constexpr int64_t kPairMs[] = {32, 64, 128};
int fitting_stages(const KernelConfig& c, const Target& t);
std::vector<KernelConfig> pair_variants(const GemmProblem& p, const KernelConfig& c, const Target& t) {
  if (!split_shape(c) || !long_k(p)) return {};
  KernelConfig pc = c;
  pc.cluster_k = 2;
  pc.stages = fitting_stages(pc, t);
  bool fills = false;
  for (int64_t m : kPairMs) fills = fills || pair_fills(p, pc, t, m);
  if (!fills || !invalid_reason(p, pc, t).empty()) return {};
  return {pc};
}

// The wide tiles: bn 96, 160 or 192 where it divides N (768 = 8 x 96, 2560 = 16 x 160,
// 6144 = 32 x 192), with 64 rows per consumer (cooperative 128, ping-pong 64). Column tiles of
// another width than bn 128's where those leave a last, mostly idle wave on the SMs (2560 x
// 4096 at M = 1024: 160 tiles of 128 x 128 for 132 SMs, 128 of 128 x 160; 768 x 4096 at
// M = 2048: 96 of 128 x 128, 128 of 128 x 96).
constexpr bool is_wide(int bn) { return bn == 96 || bn == 160 || bn == 192; }

// The narrow tiles: bn 48 or 80 (m64n48/n80, valid s8 wgmma widths) where the last tile column
// wastes at most 1/16 of N, with 64 rows per consumer, and as deep a ring as fits. (bn 112 was
// offered too and never came within 5% of a tune's winner in 12 buckets, session 13.)
// They exist for small and mid M, whose tiles are too few to fill 132 SMs: cuBLASLt's fp8
// kernels (nvjet, ncu on the H200, session 13) run 2560 x 4096 at M = 256 as 128 tiles of
// 64 x 80 with 11 stages (8.4 us against 10.0 for our 80 tiles of 128 x 64) and at M = 128 as
// 96 tiles named 56x64 with 14 stages.
constexpr bool is_narrow(int bn) { return bn == 48 || bn == 80; }

// Whether c's width is offered for p: 64, 128 and 256 always; the wide and narrow ones with one
// m64 instruction per consumer (64 rows: cooperative 128, ping-pong 64), the wide where they
// divide N, the narrow where the last tile column wastes at most 1/16 of N.
bool width_offered(const GemmProblem& p, const KernelConfig& c) {
  if (!is_wide(c.bn) && !is_narrow(c.bn)) return true;
  if (consumer_rows(c) != kWgM) return false;
  const int64_t padded = (p.n + c.bn - 1) / c.bn * c.bn;
  return is_wide(c.bn) ? padded == p.n : 16 * (padded - p.n) <= p.n;
}

// The stages that fit the target's shared memory, at most kMaxStages.
int fitting_stages(const KernelConfig& c, const Target& t) {
  return std::min(kMaxStages, (t.smem_per_block_optin - kAlignSlack - 16 - pair_bytes(c) - store_bytes(c) -
                               sched_bytes(c)) /
                                  (stage_bytes(c) + 16));
}
// The ping-pong tiles that also run with as deep a ring as fits (14 stages of 64 x 64, 9 of
// 64 x 128 and 128 x 64): the small tiles of small M, whose SMs wait on loads (ncu on the
// H200, session 12: a 64 x 64 ping-pong block at 2560 x 4096, M = 128 took ~375 cycles per
// 16 KiB K tile with 8 in flight).
bool deep_shape(const KernelConfig& c) {
  return c.schedule == kPingPong && c.bm + c.bn <= 192 && !is_wide(c.bn) && !is_narrow(c.bn) && c.cluster_m == 1 &&
         c.split_k == 1;
}

// The ping-pong tiles of 64 rows and 48, 64 or 80 columns that also run as 2x1 clusters with a
// deep ring (candidates, below).
bool cluster_deep_shape(const KernelConfig& c) {
  return c.schedule == kPingPong && c.bm == kWgM && (c.bn == 48 || c.bn == 64 || c.bn == 80) && c.cluster_m == 1 &&
         c.split_k == 1 && c.bk == kRowBytes;
}

// The staged-store twins (epilogue_store = 1, templates/tma_store.cuh) of the ping-pong tiles
// that serve large M, 128x128 and 64x256, with and without a cluster: the output leaves in whole
// lines through TMA instead of 8-byte stores from registers, and the store overlaps the next
// tile's main loop, for two buffers of the consumers' rows x bn 2-byte outputs taken from the
// ring (128x128: 5 stages instead of 7; 64x256: 4 instead of 5). Bytes and instructions per tile
// are what bounds M >= 1024 on the H200 (the clock drops at the power limit; docs/wgmma_tma.md).
// Not cooperative 256x128: its two 128-row buffers leave 3 stages. Where K is long enough for
// the ring to matter (more than 8 K tiles) they are offered only where
// Target::experimental_staged_store is set (`tune --experimental-staged-store`): exact on the
// H200 but within -2%..+4% of the 7-stage register-store twin there (session 24,
// docs/wgmma_tma.md). A named _es1 kernel (a tuned winner) is valid either way.
// Where K is short (at most 8 K tiles: 4096 x 384 has 3) the ring's stages outnumber a tile's K
// tiles, so the buffers cost nothing there, and the output is what such a shape moves most of
// (4096 x 384 at M = 4096: 34 MB written for 3 MB read). There the twins are offered without the
// flag, and every unclustered ping-pong tile of up to 128 x 128 with whole 64-column panels gets
// one too. On the H200 (session 33 call 1, 4096 x 384) the staged 128x128 won M = 4096 at 16.69 us
// against 19.75 for the best register-store tile (16.28 as i8gemm_rt against cuBLASLt fp8's
// 16.76; 0.84x that peer in session 32), and a staged twin was within 1% of the winner at M = 1024.
constexpr int64_t kShortStoreKTiles = 8;
// c's staged twin: the same tile with as many of c's stages as fit beside the buffers.
KernelConfig staged_twin(const KernelConfig& c, const Target& t) {
  KernelConfig ec = c;
  ec.epilogue_store = 1;
  ec.stages = std::min(c.stages, fitting_stages(ec, t));
  return ec;
}
bool store_offered(const GemmProblem& p, const KernelConfig& c, const Target& t) {
  if (c.schedule != kPingPong || c.split_k != 1 || c.cluster_k != 1 || c.stages > kPlainStages) return false;
  const bool short_k = k_tiles(p) <= kShortStoreKTiles;
  if (!short_k && !t.experimental_staged_store) return false;
  if ((c.bm == 128 && c.bn == 128) || (c.bm == 64 && c.bn == 256)) return true;
  return short_k && c.cluster_m == 1 && c.bn % 64 == 0 && c.bn <= 128;
}

// The raster twin (_rg1: a group of one tile column, so that the blocks running together walk
// down every tile row of each column in turn) of the unclustered ping-pong 128x128, offered by
// default and raced where M < N with at most kGroupM tile rows and more tiles than SMs
// (raster_races). Why: on the H100 (session 34, graph-replay races against the plain tile, the
// final round interleaved) it ran 0.96x the plain tile's time at 28672 x 4096 M = 256, 0.98x at
// M = 1024 (six allocations: 175.7-185.2 us against 190.9-208.4, CUTLASS 175.8-177.4; DRAM reads
// 122 MB against 221, CUTLASS 124), 0.96x at 4096 x 14336 and 2560 x 4096 M = 1024, 0.94x at
// 4096 x 2048 M = 1024, 1.01x at 6144 x 4096 M = 1024; but 1.16x / 1.14x at 28672 x 4096 and
// 6144 x 4096 M = 4096 (32 tile rows) and 1.13x at 4096 x 4096 M = 4096 (M = N). Session 22's
// H200 source overrides saw no change in DRAM bytes from the order, so the untuned default keeps
// the family's group; the tune decides per GPU.
// The raster twin of ping-pong 128x128's 2x1 cluster (_cm2_rg1), also offered by default, races
// where M >= N and tiles outnumber the SMs: there it walks one cluster row at a time, CUTLASS's
// order for these shapes. On the H100 (session 43, i8gemm_rt in graph replay beside CUTLASS under
// PDL) it ran 91.75 us at 4096 x 4096 M = 4096 against its cm2 twin's 103.88 and the tune's
// previous pick's 93.75 (CUTLASS 90.84), 57.43 against 66.12 at 2560 x 4096 M = 4096 (CUTLASS
// 57.14), and a tune raced with it picked it at 4096 x 4096; where M < N it lost (6144 x 4096
// M = 4096: 162.70 against cm2's 158.09; 4096 x 14336 M = 1024: 85.11 against cooperative 256 x 128
// cm2's 77.01). The cooperative tiles' raster twins (--experimental-tile-order only) race wherever
// tiles outnumber the SMs.
bool raster_races(const GemmProblem& p, const KernelConfig& c, const Target& t, int64_t m) {
  if (tiles(p, c, m) <= t.sm_count) return false;
  if (c.schedule == kCooperative) return true;
  if (c.cluster_m > 1) return m >= p.n;
  const int64_t rows = (std::max<int64_t>(m, 1) + c.bm - 1) / c.bm;
  return m < p.n && rows <= kGroupM;
}
// The tile-order twins: by default ping-pong 128x128's raster twins, unclustered and 2x1 cluster
// (above); with Target::experimental_tile_order those of every large-M tile: ping-pong 128x128
// (and its cm2), cooperative 256x128 and 128x256. Twins: the raster group of 1 for each;
// x loads kept in L2 (evict_last), w loads evicted first, or both (_lh1, _lh2, _lh3); and the
// ping-pong 128x128's dynamic schedule (_ds1). Measured on the H100 (session 34) against the
// plain ping-pong 128x128: _lh1 1.00x at 4096 x 4096 M = 4096 and 28672 x 4096 M = 1024; _lh2 and
// _lh3 1.02-1.13x (evict_first on w doubles the DRAM reads: 101 against 49 MB, 385-409 against
// 221); _ds1 1.21-1.29x (stable over six allocations, 122-125 us at 4096 x 4096, where the static
// tile ran 92-107); a group of 16 (dropped) 1.10x / 1.19x. Not faster anywhere yet: behind the
// flag. Raced only where tiles outnumber the SMs (races_at).
bool order_shape(const KernelConfig& c) {
  const bool pp = c.schedule == kPingPong && c.bm == 128 && c.bn == 128;
  const bool co = c.schedule == kCooperative && ((c.bm == 256 && c.bn == 128) || (c.bm == 128 && c.bn == 256));
  return (pp || co) && c.bk == kRowBytes && c.split_k == 1 && c.cluster_k == 1 && c.epilogue_store == 0 &&
         c.packed_weight == 0 && c.dynamic_schedule == 0 && c.raster_group == 0 && c.l2_hint == 0;
}
std::vector<KernelConfig> order_twins(const GemmProblem& p, const std::vector<KernelConfig>& from, const Target& t) {
  std::vector<KernelConfig> out;
  auto offer = [&](KernelConfig c) {
    if (invalid_reason(p, c, t).empty() && std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
  };
  for (const KernelConfig& o : from) {
    if (!order_shape(o)) continue;
    // The default: ping-pong 128x128's raster twins (unclustered and 2x1 cluster); the rest behind
    // the flag.
    const bool raster_default = o.schedule == kPingPong;
    if (!raster_default && !t.experimental_tile_order) continue;
    KernelConfig rc = o;
    rc.raster_group = 1;
    offer(rc);
    if (!t.experimental_tile_order) continue;
    for (int h : {1, 2, 3}) {
      KernelConfig c = o;
      c.l2_hint = h;
      offer(c);
    }
    if (o.schedule == kPingPong && o.cluster_m == 1) {
      KernelConfig c = o;
      c.dynamic_schedule = 1;
      c.stages = std::min(c.stages, fitting_stages(c, t));
      offer(c);
    }
  }
  return out;
}


// Rules: cooperative bm 128 or 256 (two consumers of 64 or 128 rows) or ping-pong bm 64 or 128
// (one consumer's rows); bn 64/128/256 not past the padded N, the wide and narrow tiles where
// width_offered says; at most 128 accumulators per consumer thread; bk = 128; as many
// stages as fit (at most 8, the narrow tiles up to 16). At most 9 + 6 + 4 configs; then a cm2
// variant of each clusters_pay shape among them, a deep-ring variant of each small ping-pong
// tile (deep_shape) and of each 64-row ping-pong tile of 48, 64 or 80 columns as a 2x1 cluster
// (cluster_deep_shape), the staged-store twins of two ping-pong tiles and their cm2 variants, and
// where K is short of the other ping-pong tiles of whole panels (store_offered; 2-byte outputs
// only; where K is long behind the experimental flag), the dynamic-schedule twins of the large
// cooperative tiles, the bk-256 twins of the ping-pong 64-row tiles up to 128 columns (two K
// tiles a stage), split-K variants of four of them, at most 4 each (split_variants), and where
// K is long the four's K pairs (pair_variants), last; before the splits, the raster twin of
// ping-pong 128x128 and, with the experimental flag, the other tile-order twins (order_twins).
std::vector<KernelConfig> candidates(const GemmProblem& p, const Target& t) {
  std::vector<KernelConfig> out;
  int64_t n_pow2 = 64;
  while (n_pow2 < p.n) n_pow2 *= 2;
  for (int schedule : {kCooperative, kPingPong})
    for (int bm : {64, 128, 256})
      for (int bn : {48, 64, 80, 96, 128, 160, 192, 256}) {
      if (bn > n_pow2 || (schedule == kCooperative && bm == 64) || (schedule == kPingPong && bm == 256)) continue;
      // Cooperative 256x64: never within 5% of a tune's winner over 40 buckets (sessions 12-13).
      if (schedule == kCooperative && bm == 256 && bn == 64) continue;
      KernelConfig c;
      c.family = Family::wgmma_tma;
      c.schedule = schedule;
      c.bm = bm;
      c.bn = bn;
      c.bk = kRowBytes;
      c.warpgroups = kConsumers;
      if (!width_offered(p, c)) continue;
      c.stages = is_narrow(bn) ? fitting_stages(c, t) : std::min(kPlainStages, fitting_stages(c, t));
      if (!invalid_reason(p, c, t).empty()) continue;
      out.push_back(c);
    }
  const size_t plain = out.size();
  for (size_t i = 0; i < plain; ++i) {
    if (!clusters_pay(out[i])) continue;
    KernelConfig c = out[i];
    c.cluster_m = 2;
    if (invalid_reason(p, c, t).empty()) out.push_back(c);
  }
  const size_t clustered = out.size();
  for (size_t i = 0; i < clustered; ++i) {
    if (!store_offered(p, out[i], t)) continue;
    const KernelConfig ec = staged_twin(out[i], t);
    if (invalid_reason(p, ec, t).empty()) out.push_back(ec);
  }
  for (size_t i = 0; i < plain; ++i)
    if (KernelConfig dc = out[i]; deep_shape(dc) && (dc.stages = fitting_stages(dc, t)) > kPlainStages &&
                                  invalid_reason(p, dc, t).empty())
      out.push_back(dc);
  // The small-M ping-pong tiles of 64 rows and 48, 64 or 80 columns as 2x1 clusters (the two
  // blocks share each w tile by multicast) with as deep a ring as fits: SGLang's CUTLASS config
  // for 64 < M <= 128 (64x64, cluster 2x1, a ring as deep as shared memory allows) was the best
  // peer at M = 128 on five of the eight TP4 + Llama-3-8B shapes in session 32 (0.93-0.97x),
  // where our best unclustered 64-row tiles bring every w tile from L2 once per block.
  for (size_t i = 0; i < plain; ++i) {
    if (!cluster_deep_shape(out[i])) continue;
    KernelConfig cc = out[i];
    cc.cluster_m = 2;
    cc.stages = fitting_stages(cc, t);
    if (invalid_reason(p, cc, t).empty()) out.push_back(cc);
  }
  // The dynamic-schedule twins (_ds1) of the large cooperative tiles (128x256 and 256x128,
  // unclustered, register stores), raced where their tiles outnumber the SMs. Why: on the H100
  // (session 33 calls 3-6) ping-pong 128x128 at 4096 x 4096 M = 4096 ran 94-99 us with most
  // operand allocations and 111-114 with some, CUTLASS 92-97 with all; ncu of a slow run: SMs
  // active 78% of the elapsed cycles (CUTLASS 86%), some blocks done with their fixed share of
  // tiles long before others. A block that claims its next tile from a counter takes more where
  // it runs faster. Measured (H100, session 33 call 8, M = 1024 and 4096 on 4096 x 2048,
  // 4096 x 4096, 6144 x 4096, 28672 x 4096): exact; cooperative 256x128's twin 0.96-1.08x its
  // static time (won 28672 x 4096 M = 1024 by 2%), ping-pong 128x128's 1.06-1.30x (not offered:
  // why its ping-pong is slower is not yet measured).
  for (size_t i = 0; i < plain; ++i) {
    const KernelConfig& o = out[i];
    const bool large = o.schedule == kCooperative && ((o.bm == 128 && o.bn == 256) || (o.bm == 256 && o.bn == 128));
    if (!large) continue;
    KernelConfig dc = o;
    dc.dynamic_schedule = 1;
    dc.stages = std::min(dc.stages, fitting_stages(dc, t));
    if (invalid_reason(p, dc, t).empty()) out.push_back(dc);
  }
  // Two K tiles per stage (bk 256, KP = 2 in the template) for the ping-pong tiles of 64 rows up
  // to 128 columns, the small-M tiles, with as deep a ring as fits (about half a deep ring's
  // stages). On the H200 (session 27, docs/wgmma_tma.md) their twins were 0.94-1.00x the bk-128
  // time at M = 32 and 64 on five shapes; the cooperative and 128-row tiles' twins, with half
  // the stages, lost at M = 128 and 256 (up to 1.12x) and are not offered.
  for (size_t i = 0; i < plain; ++i) {
    if (out[i].schedule != kPingPong || out[i].bm != kWgM || out[i].bn > 128) continue;
    KernelConfig kc = out[i];
    kc.bk = 2 * kRowBytes;
    kc.stages = fitting_stages(kc, t);
    if (kc.stages >= 2 && invalid_reason(p, kc, t).empty())
      out.push_back(kc);
  }
  // The packed-weight twins (Target::experimental_packed_weight) of the small- and mid-M tiles:
  // every unclustered tile of up to 128 rows and 128 columns (both schedules) and the bk-256
  // twins, with as deep a ring as fits, each reading the weight as one contiguous bulk copy a
  // stage.
  if (t.experimental_packed_weight) {
    const size_t offered = out.size();
    for (size_t i = 0; i < offered; ++i) {
      const KernelConfig& o = out[i];
      if (o.bm > 128 || o.bn > 128 || o.cluster_m != 1 || o.epilogue_store != 0) continue;
      KernelConfig pc = o;
      pc.packed_weight = 1;
      pc.stages = fitting_stages(pc, t);
      if (std::find(out.begin(), out.end(), pc) == out.end() && invalid_reason(p, pc, t).empty()) out.push_back(pc);
    }
  }
  // After the packed twins (none is made of them), before the splits: the raster twin of ping-pong
  // 128x128 and, with the experimental flag, the other tile-order twins (order_twins) of the plain
  // and clustered tiles.
  for (const KernelConfig& oc : order_twins(p, std::vector<KernelConfig>(out.begin(), out.begin() + clustered), t))
    out.push_back(oc);
  for (size_t i = 0; i < plain; ++i)
    for (const KernelConfig& sc : split_variants(p, out[i], t)) out.push_back(sc);
  for (size_t i = 0; i < plain; ++i)
    for (const KernelConfig& pc : pair_variants(p, out[i], t)) out.push_back(pc);
  return out;
}

// The untuned default's tiles, with a tile's time relative to ping-pong 128x128's: ping-pong
// 128x128, 128x64 and 64x64 (measured on the H200, run 4 of 2026-12-01), and the wide tiles
// where they divide N, ping-pong 64x160, cooperative 128x96, 128x160 and 128x192 (fitted to
// the tunes of 2560 x 4096 and 6144 x 4096 at M = 128..4096 and 768 x 4096 at M = 1024 and
// 2048, session 12 calls 3, 5 and 6: each wave's time after ~4 us of fixed cost;
// docs/wgmma_tma.md). Not ping-pong 64x96: one wave of it beat one of 128x64 by 4% at 768 x 4096
// M = 1024 and lost by 7% at 6144 x 4096 M = 128. And the narrow ping-pong 64x48 and 64x80 at
// (bm + bn) / 320, the bytes a K step loads against 64x64's 0.4 (what bounds these small tiles;
// 128x64's 0.6 and 64x160's 0.75 sit on the same line), with their deep rings (session 13 call
// 4: 64x48 won 2560 x 4096 at M = 128 and 768 x 4096 at M = 128..512, 64x80 2560 x 4096 at
// M = 256, and the rule picks each there), and cooperative 128x80 at 0.73: one wave of it won
// 2560 x 4096 M = 512 (11.04 us against ping-pong 64x160's 11.68), two lost M = 1024 by 8% to
// one of 128x160 (1.45), and 0.73 is the one time that orders both. The other tiles' rings are
// the plain candidates' (no deep variant).
//
// Session 30 (no GPU; fitted to session 29's H200 races, every candidate of 41 buckets of the
// TP4 and Llama-3-8B shapes at M = 32..4096, docs/results/h200_2026-12-05_s29_race_top5.txt):
// the cooperative 128x48 (deep ring) at 0.44 — it won 2560 x 4096 M = 256 and 6144 x 4096
// M = 128, where the rule's picks ran 1.08x and 1.04x its time; any value in 0.42..0.45 picks
// the same tiles on all 41 buckets — and, where K >= 2048, the 64-row ping-pong tiles of 48, 64
// and 80 columns as their bk-256 twins (two K tiles a stage; below).
struct UntunedTile {
  int schedule, bm, bn;
  double time;
};
constexpr UntunedTile kUntunedTiles[] = {{kPingPong, 128, 128, 1.0},     {kPingPong, 128, 64, 0.6},
                                         {kPingPong, 64, 64, 0.4},       {kPingPong, 64, 160, 0.75},
                                         {kCooperative, 128, 96, 0.8},   {kCooperative, 128, 160, 1.45},
                                         {kCooperative, 128, 192, 1.55}, {kPingPong, 64, 48, 0.35},
                                         {kPingPong, 64, 80, 0.45},      {kCooperative, 128, 80, 0.73},
                                         {kCooperative, 128, 48, 0.44}};

// The untuned default runs the 64-row ping-pong tiles of 48, 64 and 80 columns with two K tiles
// a stage (their bk-256 twins) where K >= 2048, else with one. In session 29's H200 races the
// twin of the tile the rule picked ran 0.95-1.00x its time at M = 32..64 on every shape with
// K >= 2048 (0.88-0.89x on 768 x 4096 at M = 64..256), 0.99-1.00x at M = 128 on 4096 x 2048
// and 4096 x 4096, and 1.04x on 2560 x 4096 M = 128 (the one loss); with K = 384 (1.5 stages
// of two) 1.01-1.02x.
constexpr int64_t kTwinMinK = 2048;
bool untuned_twin_tile(const KernelConfig& c) {
  return c.schedule == kPingPong && c.bm == kWgM && (c.bn == 48 || c.bn == 64 || c.bn == 80);
}

const UntunedTile* untuned_tile(const KernelConfig& c) {
  if (c.stages > kPlainStages && !is_narrow(c.bn)) return nullptr;  // a deep-ring variant
  for (const UntunedTile& u : kUntunedTiles)
    if (c.schedule == u.schedule && c.bm == u.bm && c.bn == u.bn) return &u;
  return nullptr;
}

// The kernel's work units (templates/wgmma_tma.cuh): cluster_m tiles of one tile column, the
// tile rows of a unit consecutive, or split_k K slices of a tile; one per tile otherwise.
int64_t units(const GemmProblem& p, const KernelConfig& c, int64_t m) {
  const int64_t tiles_m = (std::max<int64_t>(m, 1) + c.bm - 1) / c.bm;
  return ((tiles_m + c.cluster_m - 1) / c.cluster_m) * ((p.n + c.bn - 1) / c.bn) * c.split_k;  // a K pair: its tile
}

// The untuned default: one of those tiles, from M = 17 up (above decode_mma's and mma_sync's
// split-K defaults; with an x box of M rows, session 14, a tile costs at M = 32 what it costs at
// 64, and the tunes of 2560 x 4096, 6144 x 4096 and 4096 x 14336 at M = 32 all picked this
// family, against an untuned mma_sync 5-25% slower), where K holds at least one whole 128-byte
// box (smaller K was never run) and the tile count fits the kernel's 32-bit tile arithmetic
// with room to spare. Never split: split configs lost at M = 128 on the H200
// (docs/wgmma_tma.md; I8GEMM_SPLIT_K can still ask). No cluster by default (never measured as
// a default), nor the dynamic schedule. The staged store only where K is short (at most 8 K
// tiles) from M = 1024: there the picked tile runs as its staged twin where it has one
// (staged_default). On 4096 x 384 the
// rule picks ping-pong 128x128 at M = 1024 and 4096; its staged twin won M = 4096 on the H200
// (session 33 call 1: 16.69 us against 19.75 for the best register-store tile) and on the H100
// (call 2: 17.62 us, where the untuned register-store tile ran 1.24x that), and ran 1.04x the
// winner at M = 1024 on both (the untuned register-store tile 1.09x on the H100). At M <= 256
// the register-store tiles won there.
constexpr int64_t kStagedUntunedRows = 1024;
bool staged_default(const GemmProblem& p, const KernelConfig& c, const Target& t, int64_t m) {
  if (m < kStagedUntunedRows || k_tiles(p) > kShortStoreKTiles) return false;
  KernelConfig plain = c;
  plain.epilogue_store = 0;
  if (c.epilogue_store == 0 && !store_offered(p, plain, t)) return false;
  return invalid_reason(p, staged_twin(plain, t), t).empty();
}
bool serves_untuned(const GemmProblem& p, const KernelConfig& c, const Target& t, int64_t m) {
  constexpr int64_t kMinUntunedRows = 17;
  const int untuned_bk = untuned_twin_tile(c) && p.k >= kTwinMinK ? 2 * kRowBytes : kRowBytes;
  return m >= kMinUntunedRows && p.k >= kRowBytes && c.bk == untuned_bk && untuned_tile(c) != nullptr && c.split_k == 1 &&
         c.cluster_m == 1 && c.cluster_k == 1 && c.epilogue_store == (staged_default(p, c, t, m) ? 1 : 0) &&
         c.packed_weight == 0 && c.dynamic_schedule == 0 && c.raster_group == 0 && c.l2_hint == 0 &&
         c.pdl_trigger == 0 && tiles(p, c, m) < (int64_t(1) << 30);
}

// Ranks the untuned default's tiles: waves of tiles over the SMs (a block's tiles run one after
// another) times the tile's relative time. Big tiles where there are enough of them; narrower
// ones where a shape has too few to fill the SMs (small M, small N). Over the 24 shapes x M of
// run 4 this picks the measured best tile at 19 and one within 11% at the rest.
double cost(const GemmProblem& p, const KernelConfig& c, const Target& t, int64_t m) {
  const UntunedTile* u = untuned_tile(c);
  if (u == nullptr) return 1e9;
  const int64_t sms = std::max(1, t.sm_count);
  const int64_t waves = (tiles(p, c, m) + sms - 1) / sms;
  return double(waves) * u->time;
}

std::vector<TemplateArg> template_args(const KernelSpec& s) {
  const KernelConfig& c = s.config;
  const int group = c.raster_group ? c.raster_group : kGroupM;
  std::vector<TemplateArg> a = {{"BM", c.bm}, {"BN", c.bn}, {"STAGES", c.stages}, {"GROUP_M", group},
                                {"PP", c.schedule == kPingPong ? 1 : 0}, {"CM", c.cluster_m}, {"CK", c.cluster_k},
                                {"SPLIT_K", c.split_k}, {"ES", c.epilogue_store}, {"KP", c.bk / kRowBytes},
                                {"PW", c.packed_weight}, {"DS", c.dynamic_schedule}, {"L2H", c.l2_hint},
                                {"TRIG", c.pdl_trigger}};
  for (const TemplateArg& x : problem_template_args(s.problem, false)) a.push_back(x);
  return a;
}

// One block per SM (or per work unit — a tile, a tile's K slice — when there are fewer units or the
// SM count is unknown). With
// clusters of cluster_m blocks: one cluster per work unit, at most sm_count / cluster_m of them
// (sm_count: the blocks that can be resident at once; KernelInstance lowers it to what the
// device's cluster occupancy allows), the cluster {cluster_m, 1, 1}.
LaunchShape launch(const KernelSpec& spec, int64_t m, int sm_count) {
  const int cm = spec.config.cluster_m * spec.config.cluster_k;  // blocks per cluster
  const int64_t n = units(spec.problem, spec.config, m);
  const int64_t most = sm_count > 0 ? std::max(1, sm_count / cm) : 65535 / cm;
  LaunchShape s{};
  s.grid[0] = unsigned(std::min<int64_t>(n, most) * cm);
  s.grid[1] = s.grid[2] = 1;
  s.cluster[0] = unsigned(cm);
  s.cluster[1] = s.cluster[2] = 1;
  s.block[0] = kThreads;
  s.block[1] = s.block[2] = 1;
  s.dynamic_smem = unsigned(dynamic_smem(spec.config));
  return s;
}

// Split-K: templates/splitk.h's arrival counters and partial tiles, per output tile. The dynamic
// schedule: one block of counters (the tiles handed out past the first wave, the blocks done;
// the last block resets both, so the workspace is zero again after every launch).
size_t workspace(const KernelSpec& spec, int64_t m) {
  if (spec.config.dynamic_schedule) return size_t(splitk::kCounterWords) * 4;
  return splitk_workspace_bytes(tiles(spec.problem, spec.config, m), spec.config);
}

}  // namespace

bool tile_order_twin(const KernelConfig& c) {
  return c.family == Family::wgmma_tma &&
         (c.raster_group != 0 || c.l2_hint != 0 || (c.dynamic_schedule != 0 && c.schedule == kPingPong));
}

const FamilyInfo& wgmma_tma_family() {
  static const FamilyInfo f = [] {
    FamilyInfo f;
    f.family = Family::wgmma_tma;
    f.name = "wgmma_tma";
    f.header = "wgmma_tma.cuh";
    f.kernel = "i8g::wgmma_tma_kernel";
    f.kernel_params = "const __grid_constant__ I8gArgs, const __grid_constant__ i8g::tma::Desc, "
                      "const __grid_constant__ i8g::tma::Desc, const __grid_constant__ i8g::tma::Desc";
    f.tma_operands = true;
    f.name_fields = {ConfigField::warpgroups, ConfigField::stages, ConfigField::schedule, ConfigField::split_k};
    f.splits_k = true;
    // "_cm2", "_ck2", "_es1", "_pw1", "_ds1", "_rg1", "_lh3", "_tr1"; no cluster, no staged store,
    // the plain weight, the fixed schedule, the family's raster, no hint and no trigger leave the
    // names as they were
    f.optional_name_fields = {ConfigField::cluster_m, ConfigField::cluster_k, ConfigField::epilogue_store,
                              ConfigField::packed_weight, ConfigField::dynamic_schedule, ConfigField::raster_group,
                              ConfigField::l2_hint, ConfigField::pdl_trigger};
    f.untuned_rank = 3;  // above mma_sync, where serves_untuned accepts (sm_90a, M >= 17)
    f.serves_untuned = serves_untuned;
    f.races_at = races_at;
    f.unsupported = unsupported;
    f.candidates = candidates;
    f.invalid_reason = invalid_reason;
    f.cost = cost;
    f.threads = threads;
    f.dynamic_smem = dynamic_smem;
    f.registers = registers;
    f.launch = launch;
    f.workspace = workspace;
    f.alignment = [](const KernelConfig&) { return 16; };  // a tensor map's base address
    f.template_args = template_args;
    return f;
  }();
  return f;
}

}  // namespace i8g

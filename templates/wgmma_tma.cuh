// wgmma_tma: Hopper (sm_90a) int8 x int8 -> int32 GEMM with the fused epilogue, fed by TMA,
// warp-specialized and persistent: the untuned default on sm_90a from M = 64 up
// (docs/wgmma_tma.md has the design, what ran exact on the H200, and the measurements).
//
// A block is three warpgroups (384 threads, one block per SM):
//   warpgroup 0  the producer: lowers its registers to 40 (setmaxnreg), and one thread issues
//                the TMA copies of each K tile's x box {128 bytes of k, BM rows} and w box
//                {128 bytes of k, BN rows} into a STAGES-deep ring of 128B-swizzled tiles, each
//                stage (KP = 1 or 2 K tiles: the config's bk 128 or 256) guarded by a `full` (TMA
//                bytes arrived) and an `empty` (both consumers done reading) mbarrier;
//   warpgroups 1, 2  the consumers: raise their registers to 232. Cooperative (PP = 0):
//                consumer c owns rows [c * BM/2, (c+1) * BM/2) of every tile. Ping-pong
//                (PP = 1): consumer c owns all BM rows of every other tile (the block's tiles
//                2i + c), skipping the other's K tiles in the ring. A consumer starts a tile's
//                mainloop only once the other has seen its last K tile arrive (a `turn`
//                mbarrier each): the ring's full barriers are waited on by parity, which is
//                only unambiguous within one lap of the ring. So one epilogue runs under the
//                other's MMAs. Either way: MI m64 instructions of wgmma.mma_async m64nBNk32 per k32
//                step, one commit group per K tile with one group left in flight
//                (wait_group 1), the stage of the previous group released as soon as it
//                completes; then the epilogue from registers (epilogue.cuh, the same code as
//                every family, so the output is bit-identical).
// The grid is at most one block per SM; block b takes tiles b, b + gridDim.x, ... in grouped
// order (GROUP_M tiles of one dimension at a time, walking the other, so that the blocks running
// together share x and w in L2): groups of tile columns when M < N (each group re-reads x, the
// smaller operand), else groups of tile rows (wgmma_frag.h, grouped_tile).
// Split-K (SPLIT_K > 1, for shapes with fewer tiles than SMs): the walk is over units, K slices
// of tiles (tma::unit_of), and each consumer's rows of a unit meet the other slices' in the
// workspace (splitk.cuh; the last slice to arrive runs the epilogue). Producer and consumers
// walk the same units and K tiles, so their ring positions agree.
//
// K pairs (CK = 2, the config's ck2): the grid is clusters of two blocks that walk the same tiles,
// the block of rank r over K tiles [r * ktiles / 2, (r + 1) * ktiles / 2); at the end of a tile
// rank 1's consumers store their sums into rank 0's exchange buffers (st.async, counted on rank
// 0's xfull barriers) and rank 0's add them and store the tile. docs/wgmma_tma.md, "K pairs".
//
// Clusters (CM = 2, the config's cm2): the grid is clusters of two blocks
// along M, launched with the cluster attribute. The two blocks of a cluster walk the same work
// units (two tile rows of one tile column, wgmma_frag.h unit_tile) and so the same w tile: each
// loads its own x box and half of the w tile (BN/2 rows, the w map's box), which it multicasts
// into the same ring offset of both blocks, the bytes counted on each block's own `full`
// barrier (which still expects STAGE_BYTES). A stage is refilled by both producers, so its
// `empty` barrier counts the consumers of both blocks: each consumer arrives on its own block's
// and (mapa) on the other's. The cluster meets after the barriers' init (before any multicast
// or remote arrival) and at the end (no block exits while the other may still arrive on its
// barriers). docs/wgmma_tma.md, "Clusters".
//
// Packed weight (PW = 1, the config's pw1): args.w is the weight pre-packed for KP K tiles a stage
// (generator/packed_weight.hpp): a stage's rows of any tile are one contiguous, already swizzled
// block — 8-row groups of KP 1024-byte atoms — that the producer brings with one bulk copy (no w
// map). A stage holds its KP x boxes first, then that block, whose K tile j the descriptors read
// from atom j with KP * 1024 bytes between 8-row groups. The pack has zeros past K; past N it
// ends (rounded up to 8 rows), so a last tile column copies only its rows there, and its other
// rows keep an older stage's bytes, which feed only columns past N (never stored).
//
// The tensor maps are encoded by the host for each launch (x: {K, M}, w: {K, N}, UINT8, 128B
// swizzle, zero fill out of bounds) and passed by value as __grid_constant__ parameters. TMA
// fills rows past M or N and bytes past K with zeros and always delivers whole boxes, so every
// stage expects STAGE_BYTES and tails need no code here; the epilogue guards its stores. Where
// one row tile holds all of M, the x box has M rows instead (wgmma_frag.h's x_box_rows: TMA's
// zero fill is slow) and a stage expects that many fewer bytes.
#pragma once
#include "epilogue.cuh"
#include "grid_order.cuh"
#include "splitk.cuh"
#include "tma.cuh"         // tensor maps, TMA, mbarriers, clusters
#include "tma_store.cuh"   // ES = 1: the output tile through shared memory and a TMA store
#include "wgmma.cuh"       // wgmma_s8, the wgmma fences and the descriptor/fragment maps

namespace i8g {
namespace tma {

// A work unit: one K slice of one tile. Unit u of tiles * SPLIT_K is slice u % SPLIT_K of tile
// u / SPLIT_K, so the slices of a tile are neighbours in the walk: they run at the same time on
// neighbouring blocks, the partials the last one reads back were just written (in L2), and the
// blocks running together still cover a compact group of tiles (GROUP_M), each over all of K.
// The slice's K tiles are [k0, k0 + n), balanced: n is floor or ceil of ktiles / SPLIT_K, never
// 0 when SPLIT_K <= ktiles (the generator refuses more slices than K tiles: an empty unit would
// never arrive on its ping-pong turn barrier). SPLIT_K = 1: the tile itself, all of K.
struct Unit {
  int tile, slice, k0, n;
};
template <int SPLIT_K>
__device__ __forceinline__ Unit unit_of(int u, int ktiles) {
  Unit w;
  w.tile = u / SPLIT_K;
  w.slice = u - w.tile * SPLIT_K;
  w.k0 = w.slice * ktiles / SPLIT_K;
  w.n = (w.slice + 1) * ktiles / SPLIT_K - w.k0;
  return w;
}

}  // namespace tma

template <int BM, int BN, int STAGES, int GROUP_M, int PP, int CM, int CK, int SPLIT_K, int ES, int KP, int PW, int DS,
          int L2H, int TRIG, long long N_, long long K_, int ACT, int WSC, int OUT, int BIAS, int ASYM>
__global__ void __launch_bounds__(3 * wg::kWarpgroup, 1)
    wgmma_tma_kernel(const __grid_constant__ I8gArgs args, const __grid_constant__ tma::Desc xmap,
                     const __grid_constant__ tma::Desc wmap, const __grid_constant__ tma::Desc omap) {
  constexpr int BK = wg::kRowBytes;        // one 128-byte swizzle row of k per tile row
  constexpr int RM = PP ? BM : BM / 2;     // rows per consumer warpgroup
  constexpr int MI = RM / wg::kM;          // m64 instructions per consumer
  constexpr int R = BN / 2;                // accumulator registers per instruction
  constexpr int A_BYTES = BM * BK;
  // A stage holds KP K tiles (the config's bk / 128), each its x box then its w box: with KP = 2
  // the producer asks for 256 bytes of every row back to back and each barrier round trip
  // carries twice the bytes (bench/tma_stream.cu: a persistent TMA stream of one K tile per stage
  // ran 1.05-1.33x slower than two on the H200, session 27).
  constexpr int SUB_BYTES = wg::stage_bytes(BM, BN);
  constexpr int STAGE_BYTES = KP * SUB_BYTES;
  constexpr int W_ROWS = BN / CM;          // rows of the w tile this block loads (all of it when CM = 1)
  constexpr int W_BOX_BYTES = W_ROWS * BK;
  constexpr int READERS = PP ? 1 : 2;      // consumer warpgroups of a block that read each stage
  // K tile j of a stage: its x box at j * X_STEP, its w tile at W_BASE + j * W_STEP with W_SBO
  // bytes between 8-row groups (x, w, x, w; a packed weight: x, x, then the w block, its K tiles
  // interleaved by 8-row group).
  constexpr int X_STEP = PW ? A_BYTES : SUB_BYTES;
  constexpr int W_BASE = PW ? KP * A_BYTES : A_BYTES;
  constexpr int W_STEP = PW ? wg::kAtomBytes : SUB_BYTES;
  constexpr unsigned W_SBO = PW ? unsigned(KP * wg::kAtomBytes) : unsigned(wg::kAtomBytes);
  static_assert(PW == 0 || (PW == 1 && CM == 1 && CK == 1 && SPLIT_K == 1 && ES == 0),
                "PW: a packed weight is for unclustered, unsplit tiles with register stores");
  static_assert(PP == 0 || PP == 1, "PP: 0 cooperative, 1 ping-pong");
  static_assert(DS == 0 || (DS == 1 && CM == 1 && CK == 1 && SPLIT_K == 1 && PW == 0),
                "DS: the dynamic schedule is for unclustered, unsplit tiles of the plain weight");
  static_assert(KP == 1 || KP == 2, "KP: one or two K tiles per stage");
  static_assert(L2H >= 0 && L2H <= 3 && (L2H == 0 || (CK == 1 && PW == 0)),
                "L2H: bit 0 x evict_last, bit 1 w evict_first; the tensor-map loads of tiles without a K pair");
  static_assert(CM == 1 || CM == 2, "CM: 1 no cluster, 2 a cluster of two blocks along M");
  static_assert(RM == 64 || RM == 128, "64 or 128 rows per consumer warpgroup");
  static_assert(BN == 48 || BN == 64 || BN == 80 || BN == 96 || BN == 128 || BN == 160 || BN == 192 || BN == 256,
                "BN in {48, 64, 80, 96, 128, 160, 192, 256}");
  static_assert(MI * R <= 128, "at most 128 accumulator registers per consumer thread");
  // Where the registers allow, the epilogue's column operands are loaded before the main loop
  // (not by split-K slices or K pairs, whose reductions need those registers).
  constexpr bool PRE_EPI = SPLIT_K == 1 && CK == 1 && epi_preload<MI, BN, OUT, BIAS, ASYM>();
  static_assert(STAGES >= 2 && STAGES <= 16, "2 to 16 pipeline stages");
  static_assert(GROUP_M >= 1, "GROUP_M >= 1");
  static_assert(SPLIT_K >= 1 && SPLIT_K <= splitk::kMaxSplit, "1 to 16 K slices");
  static_assert(CM == 1 || SPLIT_K == 1, "a cluster config does not split K");
  static_assert(CK == 1 || CK == 2, "CK: 1 no K pair, 2 a cluster of two blocks, each over half of K");
  static_assert(CK == 1 || (CM == 1 && SPLIT_K == 1), "a K pair neither clusters along M nor splits K");
  static_assert(K_ % 16 == 0, "K must be a multiple of 16 (the tensor map's row stride)");
  static_assert(ES == 0 || (ES == 1 && SPLIT_K == 1 && CK == 1 && out_bytes<OUT>() == 2 && BN % kStorePanelCols == 0),
                "ES: the staged TMA store is for unsplit tiles of 2-byte outputs, BN a multiple of 64");
  static_assert(A_BYTES % wg::kAtomBytes == 0 && SUB_BYTES % wg::kAtomBytes == 0 && W_BOX_BYTES % wg::kAtomBytes == 0,
                "every tile, and each block's share of the w tile, starts on a 1024-byte boundary (the 128B "
                "swizzle pattern)");

  // The ring, rounded up to a 1024-byte boundary (the launch asks for 1 KiB of slack), then
  // the 2 * STAGES barriers and the two ping-pong turn barriers. Every block of a cluster has the
  // same layout (the same kernel, no static shared memory), so an offset here is the same
  // offset in the other block: what TMA multicast and mapa rely on.
  extern __shared__ __align__(1024) unsigned char smem[];
  const unsigned base = (smem_addr(smem) + wg::kAtomBytes - 1) & ~unsigned(wg::kAtomBytes - 1);
  // K pairs (CK = 2): each consumer's exchange buffer, RM x BN int32 (rank 1's partial sums,
  // read by rank 0), between the ring and the barriers; ES: each consumer's staging buffer for
  // the output tile (tma_store.cuh). Never both.
  constexpr int XBUF_ONE = CK > 1 ? RM * BN * 4 : ES ? store_buffer_bytes(RM, BN) : 0;
  const unsigned xbuf = base + STAGES * STAGE_BYTES;
  const unsigned bars = xbuf + 2 * XBUF_ONE;
  auto full = [&](int s) { return bars + 8u * unsigned(s); };
  auto empty = [&](int s) { return bars + 8u * unsigned(STAGES + s); };
  auto turn = [&](int c) { return bars + 8u * unsigned(2 * STAGES + c); };  // consumer c may start
  // K pairs: consumer c's exchange buffer holds rank 1's partial (rank 0's xfull), and rank 0
  // has read it (rank 1's xempty).
  auto xfull = [&](int c) { return bars + 8u * unsigned(2 * STAGES + 2 + c); };
  auto xempty = [&](int c) { return bars + 8u * unsigned(2 * STAGES + 4 + c); };
  // DS: the dynamic schedule's ring of tile ids (never with a K pair, so after the turn
  // barriers): slot i's id, its full barrier (the producer published it) and its empty barrier
  // (every consumer thread that reads it has).
  constexpr int SCHED = 4;  // generator/family_wgmma_tma.cpp, kSchedSlots
  auto sfull = [&](int i) { return bars + 8u * unsigned(2 * STAGES + 2 + i); };
  auto sempty = [&](int i) { return bars + 8u * unsigned(2 * STAGES + 2 + SCHED + i); };
  volatile int* const sched_ids =
      reinterpret_cast<volatile int*>(smem + (bars + 8u * unsigned(2 * STAGES + 2 + 2 * SCHED) - smem_addr(smem)));

  const long long M = args.m;
  const long long N = N_ ? N_ : args.n;
  const long long K = K_ ? K_ : args.k;
  const int X_ROWS = wg::x_box_rows(BM, M);  // the x map's box (operand_tensor_maps on the host)
  // Tile counts fit 32 bits (the host refuses M past 2^31 - 1; N and K are far smaller).
  const int tiles_m = int((M + BM - 1) / BM), tiles_n = int((N + BN - 1) / BN);
  const int ktiles = int((K + BK - 1) / BK);
  const bool along_n = M < N;  // group tile columns (re-reading x) when x is the smaller operand
  // 0 producer, 1 and 2 consumers. Broadcast from lane 0 (as CUTLASS's warp-group index is) so
  // that the compiler knows it is the same in every lane: then the ring position and the smem
  // descriptors, which derive from it, live in uniform registers (SASS: 17 R2UR instead of 66,
  // no per-wgmma descriptor moves in the K loop).
  const int role = __shfl_sync(0xffffffffu, int(threadIdx.x / wg::kWarpgroup), 0);
  const int t = threadIdx.x % wg::kWarpgroup;

  // Work units. With a cluster (CM = 2; wgmma_frag.h, unit_tile) the CM blocks of a cluster walk
  // the same units, a unit being CM tiles of one tile column, the block of rank r taking the
  // unit's r-th tile row. So they load the same w tile and the same number of K tiles, in lock
  // step (the multicast and the shared empty barriers need it). When CM does not divide
  // tiles_m, the last unit row's rank-1 tile lies past M: that block loads and computes as its
  // partner does and stores nothing. With split-K (tma::unit_of) a unit is one K slice of a
  // tile; otherwise a tile, and a "cluster" a block. Never both.
  // With a K pair (CK = 2) both blocks of a cluster walk the same tiles, the block of rank r
  // over K slice r of 2 (tma::unit_of): rank 1 hands its sums to rank 0 through shared memory,
  // which stores the tile.
  constexpr bool CLUSTERED = CM * CK > 1;
  const unsigned rank = CLUSTERED ? tma::cluster_rank() : 0u;
  const int cluster = CLUSTERED ? int(tma::cluster_index()) : int(blockIdx.x);
  const int clusters = CLUSTERED ? int(tma::cluster_count()) : int(gridDim.x);
  const int units = CM > 1 ? wg::cluster_units_m(tiles_m, CM) * tiles_n : tiles_m * tiles_n * SPLIT_K;
  struct Work {
    int tm, tn;       // this block's tile
    int tile, slice;  // split-K: the tile's index in the grouped order and the slice
    int k0, n;        // the unit's K tiles [k0, k0 + n)
  };
  auto work_of = [&](int u) {
    Work w{0, 0, 0, 0, 0, ktiles};
    if constexpr (CM > 1) {
      wg::unit_tile(u, int(rank), tiles_m, tiles_n, GROUP_M, CM, along_n, w.tm, w.tn);
    } else if constexpr (CK > 1) {
      const tma::Unit s = tma::unit_of<CK>(u * CK + int(rank), ktiles);
      wg::grouped_tile(s.tile, tiles_m, tiles_n, GROUP_M, along_n, w.tm, w.tn);
      w.k0 = s.k0;
      w.n = s.n;
    } else {
      const tma::Unit s = tma::unit_of<SPLIT_K>(u, ktiles);
      wg::grouped_tile(s.tile, tiles_m, tiles_n, GROUP_M, along_n, w.tm, w.tn);
      w.tile = s.tile;
      w.slice = s.slice;
      w.k0 = s.k0;
      w.n = s.n;
    }
    return w;
  };

  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      tma::mbar_init(full(s), 1);   // the producer's arrive.expect_tx
      // One arrival per consumer warpgroup reading the stage, in every block of the cluster:
      // the stage is refilled by multicasts from each of them.
      tma::mbar_init(empty(s), CM * READERS);
    }
    tma::mbar_init(turn(0), 1);
    tma::mbar_init(turn(1), 1);
    if (DS)
      for (int i = 0; i < SCHED; ++i) {
        tma::mbar_init(sfull(i), 1);                         // the producer's arrival
        tma::mbar_init(sempty(i), READERS * wg::kWarpgroup);  // every thread that reads the id
      }
    if (CK > 1)
      for (int c = 0; c < 2; ++c) {
        tma::mbar_init(xfull(c), 1);   // rank 0's arrive.expect_tx, plus rank 1's stored bytes
        tma::mbar_init(xempty(c), 1);  // rank 0's remote arrival once it has read them
      }
    tma::mbar_fence_init();
    tma::prefetch_map(&xmap);
    if (!PW) tma::prefetch_map(&wmap);  // a packed weight has no map
    if (ES && reinterpret_cast<unsigned long long>(args.out) % 16 == 0) tma::prefetch_map(&omap);  // encoded
  }
  // No block of a cluster may multicast into, or arrive on, the other's barriers before they are
  // initialized: the whole cluster meets once here.
  if (CLUSTERED)
    tma::cluster_sync_after_init();
  else
    __syncthreads();
  // The barriers' setup (shared memory only) and the maps' prefetch (kernel parameters) may
  // overlap the previous kernel's tail; nothing global is touched before this (grid_order.cuh).
  grid_order();
  if constexpr (TRIG == 1) launch_dependents();

  if (role == 0) {
    tma::lower_registers<40>();
    if (t != 0) return;
    // L2H: the L2 eviction policies of the operand loads (x kept: it is read once per tile column;
    // w first out: each w tile's readers run in the same wave).
    const unsigned long long xpol = (L2H & 1) ? tma::l2_policy(2) : 0ull;
    const unsigned long long wpol = (L2H & 2) ? tma::l2_policy(1) : 0ull;
    int stage = 0;
    unsigned phase = 0;
    // DS: slot i % SCHED of the id ring gets the i-th unit this block works on (-1: none left),
    // once its consumers have read what the slot held before.
    auto publish = [&](int i, int id) {
      const int slot = i % SCHED;
      tma::mbar_wait(sempty(slot), ((unsigned(i) / SCHED) & 1u) ^ 1u);
      sched_ids[slot] = id;
      tma::mbar_arrive(sfull(slot));
    };
    // DS: args.workspace[0] counts the units handed out past the first wave, [1] the blocks done.
    int* const sched = args.workspace;
    int u = cluster;  // the first unit: fixed (block b takes unit b), then as the schedule says
    for (int i = 0;; ++i) {
      if constexpr (DS) {
        publish(i, u < units ? u : -1);
        if (u >= units) {
          if (PP) publish(i + 1, -1);  // the other consumer waits on the next slot
          break;
        }
      } else if (u >= units) {
        break;
      }
      // DS: claim the next unit now; the atomic's round trip overlaps this unit's loads.
      const int next = DS ? int(gridDim.x) + atomicAdd(sched, 1) : u + clusters;
      const Work w = work_of(u);
      const int tm = w.tm, tn = w.tn;
      // Box origins. With a cluster a box could lie wholly past the tensor (the rank-1 tile of
      // an odd tiles_m; the second half of a last tile column past N); such a box is clamped
      // into it, so that every box overlaps the tensor as without clusters. What it brings is
      // never stored: that tile's rows are all >= M, those w rows feed only columns >= N.
      const int x_row = CM > 1 && tm >= tiles_m ? (tiles_m - 1) * BM : tm * BM;
      int w_row = tn * BN + int(CM > 1 ? rank : 0u) * W_ROWS;  // a K pair's blocks load the same w rows
      if (CM > 1 && w_row >= N) w_row = int(N) - 1;
      // A packed weight: the tile's rows in the pack (BN, fewer in a last tile column past N).
      const int packed_bytes = PW ? wg::packed_tile_bytes(BN, w_row, N, KP) : 0;
      for (int kt = w.k0; kt < w.k0 + w.n; kt += KP) {
        const int subs = min(KP, w.k0 + w.n - kt);  // a unit's last stage may hold one K tile
        tma::mbar_wait(empty(stage), phase ^ 1u);
        // Each block expects all of the stage's bytes on its own full barrier: its x boxes, its w
        // shares and the other block's w shares, whose bytes may land before this arrive (the
        // barrier's tx count then runs negative until it; the phase cannot complete without it).
        tma::mbar_arrive_expect_tx(full(stage), PW ? subs * X_ROWS * BK + packed_bytes
                                                   : subs * (SUB_BYTES - (BM - X_ROWS) * BK));
        const unsigned sbase = base + unsigned(stage) * STAGE_BYTES;
#pragma unroll
        for (int j = 0; j < KP; ++j) {
          if (j >= subs) break;
          if constexpr ((L2H & 1) != 0)
            tma::load_box_hint(sbase + unsigned(j * X_STEP), &xmap, full(stage), (kt + j) * BK, x_row, xpol);
          else
            tma::load_box(sbase + unsigned(j * X_STEP), &xmap, full(stage), (kt + j) * BK, x_row);
          if (PW) continue;  // the w tiles: one copy below
          const unsigned wdst = sbase + unsigned(W_BASE + j * W_STEP);
          if (CM > 1 && (L2H & 2) != 0)
            tma::load_box_multicast_hint(wdst + rank * W_BOX_BYTES, &wmap, full(stage), (kt + j) * BK, w_row,
                                         (unsigned short)((1u << CM) - 1u), wpol);
          else if (CM > 1)
            tma::load_box_multicast(wdst + rank * W_BOX_BYTES, &wmap, full(stage), (kt + j) * BK, w_row,
                                    (unsigned short)((1u << CM) - 1u));
          else if constexpr ((L2H & 2) != 0)
            tma::load_box_hint(wdst, &wmap, full(stage), (kt + j) * BK, w_row, wpol);
          else
            tma::load_box(wdst, &wmap, full(stage), (kt + j) * BK, w_row);
        }
        if (PW)  // the tile's rows of stage kt / KP, contiguous in the pack (every K tile of it)
          tma::bulk_load(sbase + unsigned(W_BASE), args.w + wg::packed_tile_offset(kt / KP, w_row, N, KP),
                         unsigned(packed_bytes), full(stage));
        if (++stage == STAGES) {
          stage = 0;
          phase ^= 1u;
        }
      }
      u = next;
    }
    if constexpr (DS) {
      // The last block to finish claiming resets both counters: the workspace is zero again for
      // the next launch (eager or graph replay), as split-K's counters are.
      __threadfence();
      if (atomicAdd(sched + 1, 1) == int(gridDim.x) - 1) {
        __threadfence();
        sched[0] = 0;
        sched[1] = 0;
      }
    }
    if constexpr (TRIG == 2) launch_dependents();  // the late trigger: every load is issued
    // Stay until the whole cluster is done (see the consumers' end).
    if (CLUSTERED) tma::cluster_sync();
    return;
  }

  tma::raise_registers<232>();
  const int c = role - 1;  // consumer index
  // Each stage is released on this block's empty barrier and, with a cluster, on the same
  // barrier of the other block (whose producer multicasts into this block's ring too).
  auto release = [&](int s) {
    tma::mbar_arrive(empty(s));
    if (CM > 1) tma::mbar_arrive_remote(tma::map_to_rank(empty(s), rank ^ 1u));
  };
  int acc[MI][R];
  // ES: the host encoded the output map (the output 16-byte aligned); else stores from registers.
  const bool staged = ES && reinterpret_cast<unsigned long long>(args.out) % 16 == 0;
  int stage = 0;
  unsigned phase = 0;
  // Ping-pong: skip the K tiles of unit u in the ring (the other consumer's unit).
  auto skip = [&](int u) {
    const int to = stage + (work_of(u).n + KP - 1) / KP;
    phase ^= unsigned(to / STAGES) & 1u;
    stage = to % STAGES;
  };
  // The i-th unit of this block (units: none left). Fixed: unit cluster + i * clusters. DS: the id
  // the producer published in slot i % SCHED, read by every thread of each consumer that works
  // on it (ping-pong: consumer i % 2; cooperative: both).
  auto unit_at = [&](int i) {
    if constexpr (DS) {
      const int slot = i % SCHED;
      tma::mbar_wait(sfull(slot), (unsigned(i) / SCHED) & 1u);
      const int id = sched_ids[slot];
      tma::mbar_arrive(sempty(slot));
      return id < 0 ? units : id;
    } else {
      return cluster + i * clusters;
    }
  };
  // Ping-pong: consumer c works on the block's units c, c + 2, ...; the ring holds the other's
  // K tiles in between (skip: every unit has the same K tiles where the schedule is dynamic).
  if (PP && c == 1) skip(cluster);
  unsigned turns = 0;  // ping-pong: units this consumer has started
  for (int i = PP ? c : 0;; i += PP ? 2 : 1, ++turns) {
    const int u = unit_at(i);
    if (u >= units) break;
    const Work w = work_of(u);
    const int tm = w.tm, tn = w.tn;
    // Ping-pong: wait for the other consumer's last K tile of the unit before this one (consumer
    // 0's first unit has none). Its n-th signal completes phase n of our turn barrier.
    if (PP && (c == 1 || turns > 0)) tma::mbar_wait(turn(c), (c == 1 ? turns : turns - 1) & 1u);
    // No group is in flight here (wait_group 0 ended the last tile), so zeroing is safe.
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
      for (int r = 0; r < R; ++r) acc[i][r] = 0;
    // The epilogue's operands are requested now: their round trips overlap the main loop.
    const long long row0 = (long long)tm * BM + (PP ? 0 : c * RM);
    const auto ops = load_epi_operands<MI, BN, PRE_EPI, ACT, WSC, OUT, BIAS, ASYM>(args, row0, (long long)tn * BN,
                                                                                  M, N, t);
    int held = -1;  // the stage whose wgmma group may still be reading it
    for (int kt = 0; kt < w.n; kt += KP) {
      tma::mbar_wait(full(stage), phase);
      if (PP && kt + KP >= w.n && t == 0) tma::mbar_arrive(turn(1 - c));  // the other may start
      const unsigned sa = base + unsigned(stage) * STAGE_BYTES + unsigned(PP ? 0 : c * RM * BK);
      const unsigned sb = base + unsigned(stage) * STAGE_BYTES + unsigned(W_BASE);
      // One commit group per K tile; waiting until only this stage's groups may be in flight
      // completes the previous stage's: its slot is free.
      if (KP == 1 || kt + 1 == w.n) {
        mma_k_tile<MI, BN, W_SBO>(acc, sa, sb);
        tma::wgmma_wait<1>();
      } else {
#pragma unroll
        for (int j = 0; j < KP; ++j)
          mma_k_tile<MI, BN, W_SBO>(acc, sa + unsigned(j * X_STEP), sb + unsigned(j * W_STEP));
        tma::wgmma_wait<KP>();
      }
#pragma unroll
      for (int i = 0; i < MI; ++i) fence_operands(acc[i]);
      if (held >= 0 && t == 0) release(held);
      held = stage;
      if (++stage == STAGES) {
        stage = 0;
        phase ^= 1u;
      }
    }
    tma::wgmma_wait<0>();
#pragma unroll
    for (int i = 0; i < MI; ++i) fence_operands(acc[i]);
    if (t == 0) release(held);
    if (PP) skip(u + clusters);  // the other consumer's next unit

    if constexpr (CK > 1) {
      // The K pair meets: rank 1 stores its sums into rank 0's exchange buffer (int4 v of
      // thread t at int4 index v * 128 + t), counted on rank 0's xfull barrier, once rank 0 has
      // read the previous tile's; rank 0 adds them to its own and stores the tile. `turns`:
      // tiles this consumer finished before this one (the barriers' phases).
      constexpr int V = MI * R / 4;
      const int* a = &acc[0][0];
      if (rank != 0) {
        tma::mbar_wait_cluster(xempty(c), (turns & 1u) ^ 1u);
        const unsigned dst = tma::map_to_rank(xbuf + unsigned(c * XBUF_ONE), 0u);
        const unsigned bar = tma::map_to_rank(xfull(c), 0u);
#pragma unroll
        for (int v = 0; v < V; ++v)
          tma::store_remote(dst + unsigned(v * wg::kWarpgroup + t) * 16u, a[4 * v], a[4 * v + 1], a[4 * v + 2],
                            a[4 * v + 3], bar);
        continue;  // rank 0 stores the tile
      }
      if (t == 0) tma::mbar_arrive_expect_tx(xfull(c), unsigned(XBUF_ONE));
      tma::mbar_wait_cluster(xfull(c), turns & 1u);
      int* sum = &acc[0][0];
#pragma unroll
      for (int v = 0; v < V; ++v) {
        const int4 q = lds_128(xbuf + unsigned(c * XBUF_ONE) + unsigned(v * wg::kWarpgroup + t) * 16u);
        sum[4 * v] += q.x;
        sum[4 * v + 1] += q.y;
        sum[4 * v + 2] += q.z;
        sum[4 * v + 3] += q.w;
      }
      // Every thread of the warpgroup has read the buffer (named barrier 1 + c) before rank 1
      // may fill it again.
      named_group_or<wg::kWarpgroup>(1 + c, false);
      if (t == 0) tma::mbar_arrive_remote(tma::map_to_rank(xempty(c), 1u));
    }

    if constexpr (SPLIT_K > 1) {
      // This consumer's rows of the tile are one reduction group (cooperative: half h = c of the
      // tile, with its own counter, so the two halves finish independently; ping-pong: the whole
      // tile). Named barrier 1 + c: this warpgroup only.
      const int h = PP ? 0 : c;
      int* block = args.workspace + (long long)w.tile * splitk::tile_words(SPLIT_K, BM, BN);
      int4* parts = reinterpret_cast<int4*>(block + splitk::kCounterWords) + h * (RM * BN / 4);
      auto group_or = [&](bool p) { return named_group_or<wg::kWarpgroup>(1 + c, p); };
      // Up to 32 int4s of the other slices' partials in flight (the consumer's 232 registers
      // hold them beside at most 64 accumulators; the compile test checks for spills).
      if (!splitk_reduce<MI * R / 4, wg::kWarpgroup, SPLIT_K, 32>(&acc[0][0], block + h, parts, BM * BN / 4, w.slice,
                                                                   t, group_or))
        continue;  // another slice finishes these rows
    }

    // Epilogue: register r of instruction i holds row c*RM + 64*i + d_row(t, r) and column
    // d_col(t, r) of the tile (wgmma_frag.h), as in the wgmma family. A cluster's tile past the
    // last tile row (odd tiles_m) has nothing to store.
    if (CM > 1 && tm >= tiles_m) continue;
    if constexpr (ES) {
      if (staged) {
        store_tile_tma<MI, BN, PRE_EPI, WSC, OUT, BIAS, ASYM>(args, acc, ops, &omap, xbuf + unsigned(c * XBUF_ONE),
                                                              int(row0), tn * BN, N, t, 1 + c);
        continue;
      }
    }
    store_tile<MI, BN, PRE_EPI, WSC, OUT, BIAS, ASYM>(args, acc, ops, row0, (long long)tn * BN, M, N, t);
  }
  // ES: the last store has read this consumer's buffer before the block may exit (its global
  // writes complete with the grid).
  if (ES && staged && t == 0) tma::store_wait_read();
  // With a cluster, no block exits while the other may still arrive on its empty barriers (the
  // other's consumers release every stage here too, up to their last K tile) or multicast into
  // its ring: every remaining thread of both blocks meets here once its role is done. (Loads
  // into this block all complete before its consumers finish: they wait on every one.)
  if (CLUSTERED) tma::cluster_sync();
}

}  // namespace i8g

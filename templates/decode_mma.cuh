// decode_mma: the weight-streaming family for small M (decode, M <= 64), sm_80+, [N,K] weights.
//
// out^T = W . X^T with mma.sync m16n8k32: BN weight rows are the A operand (BN / 16 tiles of 16
// rows), BM activation rows the B operand (BM / 8 tiles of 8), every index in decode_frag.h. A
// block of WK warps owns a BN x BM output tile and one split-K slice of K (grid z); its warps
// take the slice's BK-byte chunks in turn (warp w: chunks w, w + WK, ...), so together they
// sweep each weight row front to back. RING = 0: each lane loads 16-byte pieces straight into
// registers, the weight with ld.global.nc.L1::no_allocate.L2::256B (read once, keep it out of
// L1, fetch whole 256-byte blocks into L2), the activations with ld.global.nc (tiny, re-read by
// every block: L1 and L2 serve them); a ring of STAGES chunks per warp keeps STAGES * BN * BK
// bytes of weight in flight per warp while it multiplies the oldest one. RING = 1: each warp
// stages its chunks in STAGES slots of shared memory with cp.async, whole row pieces per copy
// instruction (decode_frag.h), and reads the same fragments back. No block barrier in the main
// loop either way.
//
// Then the WK warps' int32 tiles meet in shared memory and the first G threads sum them
// (decode_frag.h's group); with SPLIT_K > 1 those threads run splitk_reduce (splitk.cuh: the
// slices' partials in the workspace, an arrival counter, the last slice sums and resets it, so
// graph replays need no memset); then the fused epilogue (epilogue.cuh; its scales requested
// before the main loop), element by element, in the reference's order, each output stored with
// an L2 evict_last policy. Integer sums are exact in any order, so the result is bit-identical to
// every other family and the same on every run.
//
// Tails: weight rows past N and activation rows past M are clamped to the last row (their
// sums land in outputs that are never stored); K must be a multiple of 16 (a 16-byte piece is
// wholly in or out), and pieces past K load nothing for the weight and zeros for the
// activation, whose zero products then add nothing.
#pragma once
#include "decode_frag.h"
#include "epilogue.cuh"
#include "grid_order.cuh"
#include "mma_s8.cuh"
#include "splitk.cuh"
#include "tile_copy.cuh"

namespace i8g {
namespace dec {

// 16 bytes of the weight: read once, so not allocated in L1; L2 fetches the 256 bytes around
// them from memory at once (.L2::256B). A warp's load covers 8 rows x 64 bytes, and the hint
// was worth 0-12% of a pure weight stream in this pattern on the H200 (bench/stream_patterns.cu,
// docs/decode_mma.md "Measured … session 15").
__device__ __forceinline__ int4 load_weight(const signed char* p) {
  int4 v;
  asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.s32 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
}
// 16 bytes of the activations: every block of the column re-reads them, so L1 may keep them.
__device__ __forceinline__ int4 load_act(const signed char* p) {
  int4 v;
  asm volatile("ld.global.nc.v4.s32 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
}
__device__ __forceinline__ unsigned word(const int4& v, int i) {
  return unsigned(i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w);
}

// One chunk of one warp: per 64 bytes of k (u), two weight loads (rows g, g + 8) of each 16-row
// tile and one activation load of each 8-row tile.
template <int RT, int NT, int U>
struct Chunk {
  int4 w[RT][2][U];
  int4 x[NT][U];
};

}  // namespace dec

template <int BM, int BN, int BK, int WK, int STAGES, int RING, int SPLIT_K, int TRIG, long long N_, long long K_,
          int ACT, int WSC, int OUT, int BIAS, int ASYM>
__global__ void __launch_bounds__(32 * WK) decode_mma_kernel(const __grid_constant__ I8gArgs args) {
  constexpr int THREADS = 32 * WK;
  constexpr int RT = BN / dec::kRows;  // 16-row weight tiles
  constexpr int NT = BM / dec::kCols;  // 8-row activation tiles
  constexpr int U = BK / dec::kStep;   // 64-byte steps per chunk
  constexpr int V = dec::group_vectors(BM, BN, THREADS);
  constexpr int G = dec::group_threads(BM, BN, THREADS);
  static_assert(BN % dec::kRows == 0 && BN >= 16 && BN <= 64, "BN: 16, 32 or 64 weight rows");
  static_assert(BM % dec::kCols == 0 && BM >= 8 && BM <= 64, "BM: 8 to 64 activation rows, a multiple of 8");
  static_assert(BK % dec::kStep == 0 && BK <= 256, "BK: 64, 128 or 256 bytes of k per chunk");
  static_assert(WK >= 1 && WK <= 8, "1 to 8 warps");
  static_assert(STAGES >= 1 && STAGES <= 4, "1 to 4 chunks in flight per warp");
  static_assert(SPLIT_K >= 1 && SPLIT_K <= splitk::kMaxSplit, "1 to 16 K slices");
  static_assert(G % 32 == 0 && G <= THREADS && 4 * V * G == BM * BN, "the reducing group is whole warps");
  static_assert(K_ % dec::kLoad == 0, "K must be a multiple of 16 (16-byte loads)");
  constexpr bool K_WHOLE = K_ > 0 && K_ % BK == 0;  // no chunk runs past K
  constexpr bool N_WHOLE = N_ > 0 && N_ % BN == 0;  // no weight row past N

  extern __shared__ __align__(16) int red[];
  grid_order();  // nothing global is touched before it (grid_order.cuh)
  if constexpr (TRIG == 1) launch_dependents();

  const long long M = args.m;
  const long long N = N_ ? N_ : args.n;
  const long long K = K_ ? K_ : args.k;
  const long long n0 = (long long)blockIdx.x * BN;
  const long long m0 = (long long)blockIdx.y * BM;
  const int tid = threadIdx.x;
  const int lane = tid & 31;
  const int warp = tid >> 5;

  // This warp's chunks: first, first + WK, ... (iters of them) of its block's slice.
  const int slice = SPLIT_K == 1 ? 0 : int(blockIdx.z);
  const long long first = dec::slice_begin(K, BK, SPLIT_K, slice) + warp;
  const int iters = int(dec::warp_chunks(K, BK, SPLIT_K, slice, warp, WK));

  // The scales of this thread's words (threads < G: int4 v is 4 consecutive n of one m),
  // requested before the main loop so that their round trips overlap it rather than follow it
  // one column at a time (each column's load would wait for the store before it, which may
  // alias it for all the compiler knows). Bias, column sums and zero points (fewer users, more
  // registers) are loaded in the epilogue, a word's four columns before its stores. Zero past
  // M and N, never stored there.
  float e_sx[V], e_sw[V][4];
#pragma unroll
  for (int v = 0; v < V; ++v) {
    const int q = dec::group_word(v, tid, BM, BN, THREADS);
    const long long m = m0 + q / BN, n = n0 + q % BN;
    const bool in = tid < G && m < M;
    e_sx[v] = in ? row_scale<ACT, OUT>(args, m) : 0.0f;
#pragma unroll
    for (int e = 0; e < 4; ++e) e_sw[v][e] = in && n + e < N ? col_scale<WSC, OUT>(args, n + e) : 0.0f;
  }

  int acc[RT][NT][4];
#pragma unroll
  for (int r = 0; r < RT; ++r)
#pragma unroll
    for (int j = 0; j < NT; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[r][j][e] = 0;
  auto multiply = [&](const dec::Chunk<RT, NT, U>& c) {
#pragma unroll
    for (int u = 0; u < U; ++u)
#pragma unroll
      for (int s = 0; s < 2; ++s)
#pragma unroll
        for (int r = 0; r < RT; ++r) {
          unsigned a[4];
#pragma unroll
          for (int q = 0; q < 4; ++q) a[q] = dec::word(c.w[r][dec::a_load(q)][u], dec::a_word(q, s));
#pragma unroll
          for (int j = 0; j < NT; ++j)
            mma_s8(acc[r][j], a, dec::word(c.x[j][u], dec::b_word(0, s)), dec::word(c.x[j][u], dec::b_word(1, s)));
        }
  };

  if constexpr (RING == 0) {
    // Row pointers at this lane's k offset; rows past N or M read the last row instead.
    const signed char* wrow[RT][2];
    const signed char* xrow[NT];
#pragma unroll
    for (int r = 0; r < RT; ++r)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const long long n = n0 + dec::w_row(r, h, lane);
        wrow[r][h] = args.w + (N_WHOLE ? n : min(n, N - 1)) * K + dec::load_k(0, lane);
      }
#pragma unroll
    for (int j = 0; j < NT; ++j)
      xrow[j] = args.x + min(m0 + dec::x_row(j, lane), M - 1) * K + dec::load_k(0, lane);

    dec::Chunk<RT, NT, U> ring[STAGES];
#pragma unroll
    for (int s = 0; s < STAGES; ++s)
#pragma unroll
      for (int u = 0; u < U; ++u) {
#pragma unroll
        for (int r = 0; r < RT; ++r) ring[s].w[r][0][u] = ring[s].w[r][1][u] = make_int4(0, 0, 0, 0);
#pragma unroll
        for (int j = 0; j < NT; ++j) ring[s].x[j][u] = make_int4(0, 0, 0, 0);
      }
    auto load = [&](dec::Chunk<RT, NT, U>& c, int i) {
      const long long kb = (first + (long long)i * WK) * BK;
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const bool in = K_WHOLE || kb + dec::load_k(u, lane) < K;
#pragma unroll
        for (int r = 0; r < RT; ++r)
#pragma unroll
          for (int h = 0; h < 2; ++h)
            if (in) c.w[r][h][u] = dec::load_weight(wrow[r][h] + kb + dec::kStep * u);
#pragma unroll
        for (int j = 0; j < NT; ++j)
          c.x[j][u] = in ? dec::load_act(xrow[j] + kb + dec::kStep * u) : make_int4(0, 0, 0, 0);
      }
    };

    // The ring: STAGES - 1 chunks ahead, then per chunk one load issued and the oldest multiplied.
    // The slot index is a compile-time constant in every unrolled step (no local memory).
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s)
      if (s < iters) load(ring[s], s);
    for (int i0 = 0; i0 < iters; i0 += STAGES) {
#pragma unroll
      for (int s = 0; s < STAGES; ++s) {
        const int i = i0 + s;
        if (i + STAGES - 1 < iters) load(ring[(s + STAGES - 1) % STAGES], i + STAGES - 1);
        if (i < iters) multiply(ring[s]);
      }
    }

  } else {
    // The shared-memory ring (decode_frag.h): this warp's STAGES slots after the reduction
    // tiles. Per chunk: wait until every lane is done with the slot the next copy overwrites,
    // copy chunk i + STAGES - 1 (rows of x past M and pieces past K zero-filled, rows of w past
    // N clamped like the register loads), then wait for chunk i, read its fragments, multiply.
    constexpr int SLOT = dec::ring_slot_bytes(BM, BN, BK);
    constexpr int OPS = dec::copy_ops(BM, BN, BK);
    static_assert(BK == 128 || BK == 256, "the shared-memory ring copies rows of 128 or 256 bytes");
    static_assert(BN % dec::copy_rows_per_op(BK) == 0, "a copy instruction is all weight or all activation rows");
    const unsigned ring = smem_addr(red + WK * dec::red_words(BM, BN)) + warp * dec::ring_warp_bytes(BM, BN, BK, STAGES);
    const int unit = dec::copy_unit(lane, BK);
    auto issue = [&](int slot, int i) {
      const long long kb = (first + (long long)i * WK) * BK + dec::kLoad * unit;
      const bool k_in = K_WHOLE || kb < K;
      const unsigned dst = ring + slot * SLOT;
#pragma unroll
      for (int op = 0; op < OPS; ++op) {
        const int row = dec::copy_row(op, lane, BK);
        if (op * dec::copy_rows_per_op(BK) < BN) {
          const long long n = n0 + row;
          cp_async_16<true>(dst + dec::ring_offset(row, unit, BK), args.w + (N_WHOLE ? n : min(n, N - 1)) * K + kb,
                             k_in);
        } else {
          const long long m = m0 + row - BN;
          cp_async_16(dst + dec::ring_offset(row, unit, BK), args.x + min(m, M - 1) * K + kb, k_in && m < M);
        }
      }
    };
    auto fetch = [&](dec::Chunk<RT, NT, U>& c, int slot) {
      const unsigned src = ring + slot * SLOT;
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int k_unit = dec::load_k(u, lane) / dec::kLoad;
#pragma unroll
        for (int r = 0; r < RT; ++r)
#pragma unroll
          for (int h = 0; h < 2; ++h) c.w[r][h][u] = lds_128(src + dec::ring_offset(dec::w_row(r, h, lane), k_unit, BK));
#pragma unroll
        for (int j = 0; j < NT; ++j) c.x[j][u] = lds_128(src + dec::ring_offset(BN + dec::x_row(j, lane), k_unit, BK));
      }
    };
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
      if (s < iters) issue(s, s);
      cp_async_commit();
    }
    for (int i = 0; i < iters; ++i) {
      __syncwarp();
      if (i + STAGES - 1 < iters) issue((i + STAGES - 1) % STAGES, i + STAGES - 1);
      cp_async_commit();
      cp_async_wait<STAGES - 1>();
      __syncwarp();
      dec::Chunk<RT, NT, U> c;
      fetch(c, i % STAGES);
      multiply(c);
    }
  }

  if constexpr (TRIG == 2) launch_dependents();  // the late trigger (grid_order.cuh)
  // The warps' tiles meet in shared memory; the group sums them (int32: exact in any order).
#pragma unroll
  for (int r = 0; r < RT; ++r)
#pragma unroll
    for (int j = 0; j < NT; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e)
        red[dec::red_offset(warp, dec::c_m(j, lane, e), dec::c_n(r, lane, e), BM, BN)] = acc[r][j][e];
  __syncthreads();
  if (tid >= G) return;
  int sum[4 * V];
#pragma unroll
  for (int v = 0; v < V; ++v) {
    const int q = dec::group_word(v, tid, BM, BN, THREADS);
    int4 t = make_int4(0, 0, 0, 0);
#pragma unroll
    for (int w = 0; w < WK; ++w) {
      const int4 p = *reinterpret_cast<const int4*>(red + dec::red_offset(w, q / BN, q % BN, BM, BN));
      t.x += p.x;
      t.y += p.y;
      t.z += p.z;
      t.w += p.w;
    }
    sum[4 * v] = t.x;
    sum[4 * v + 1] = t.y;
    sum[4 * v + 2] = t.z;
    sum[4 * v + 3] = t.w;
  }

  if constexpr (SPLIT_K > 1) {
    // Tile blockIdx.y * gridDim.x + blockIdx.x (splitk.h); its partials hold the group's int4s.
    int* block = args.workspace + ((long long)blockIdx.y * gridDim.x + blockIdx.x) *
                                      splitk::tile_words(SPLIT_K, BM, BN);
    if (!splitk_reduce<V, G, SPLIT_K>(sum, block, reinterpret_cast<int4*>(block + splitk::kCounterWords),
                                      BM * BN / 4, slice, tid,
                                      [](bool p) { return named_group_or<G>(1, p); }))
      return;  // another slice finishes this tile
  }

  // Epilogue: int4 v of this thread is 4 consecutive n of one m. The outputs are stored with an
  // L2 evict_last policy, so that the weight streaming past does not push them out first.
  const unsigned long long out_policy = l2_evict_last_policy();
#pragma unroll
  for (int v = 0; v < V; ++v) {
    const int q = dec::group_word(v, tid, BM, BN, THREADS);
    const long long m = m0 + q / BN;
    const long long n = n0 + q % BN;
    if (m >= M) continue;
    const int zp = row_zero_point<ACT, ASYM>(args, m);
    float b[4];
    int colsum[4];
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      b[e] = n + e < N ? col_bias<BIAS>(args, n + e) : 0.0f;
      colsum[e] = n + e < N ? col_sum<ASYM>(args, n + e) : 0;
    }
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      if (n + e >= N) break;
      finish_l2<OUT, BIAS, ASYM>(args.out, m * N + n + e, sum[4 * v + e], e_sx[v], zp, e_sw[v][e], b[e], colsum[e],
                                 out_policy);
    }
  }
}

}  // namespace i8g

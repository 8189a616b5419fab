// mma_sync: the Ampere-style tensor-core family (sm_80+). A block computes a BM x BN output
// tile with WM x WN warps; each warp owns a (BM/WM) x (BN/WN) tile of m16n8k32 int8 MMAs.
//
// Data path: x [M,K] and w [N,K] tiles (k contiguous) stream through a STAGES-deep ring in
// dynamic shared memory with 16-byte cp.async.cg copies (bypassing L1: every byte is used
// once per block); ldmatrix.x4 turns the swizzled tiles into A and B fragments (mma_frag.h
// holds and the host tests check every index formula). [N,K] rows are exactly the .col B
// operand, so neither operand is transposed. [K,N] weights (n contiguous) are stored as BK
// rows of BN bytes with the k rows permuted at copy time, and read with ldmatrix.x4.trans +
// prmt, which feeds two n8 tiles (the even and the odd columns of 16) per instruction, as
// ldmatrix.x4 does for [N,K]; the epilogue maps the columns back (mma_frag.h, "[K,N]").
//
// Tails: rows past M or N and chunks past K are zero-filled by cp.async's src-size = 0 (a zero
// adds nothing to the dot product); K must be a multiple of 16 so a chunk is never partial
// (and N too for [K,N] weights, whose chunks run along n). Split-K (SPLIT_K > 1, grid z =
// slice) sums the slices' int32 tiles exactly before the epilogue (splitk_reduce, splitk.cuh).
// Output stores are guarded per element. The epilogue is epilogue.cuh's, element by element,
// so results are bit-identical to simt_dp4a and the CPU reference.
#pragma once
#include "epilogue.cuh"
#include "grid_order.cuh"
#include "mma_frag.h"
#include "mma_s8.cuh"
#include "splitk.cuh"
#include "tile_copy.cuh"

namespace i8g {

__device__ __forceinline__ void ldsm_x4(unsigned addr, unsigned (&r)[4]) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr)
               : "memory");
}

// ---- [K,N] weights -------------------------------------------------------------------------
// Streams the BK x BN tile at (k0, n0) of a row-major [K,N] int8 matrix into a swizzled shared
// tile of BK rows x BN bytes, global k row r at shared row kn_smem_row(r). Thread tid copies
// n chunk tid % CPR of shared rows r0 + s * RSTEP, read from global rows kn_src_row(r0) +
// kn_src_row(s * RSTEP): one pointer plus a constant per step. Chunks past N and rows past K
// are zero-filled; K % 16 == 0, so a 16-row group is either all in or all out.
template <int BK, int BN, int THREADS>
struct KnTileLoader {
  static constexpr int CPR = BN / mma::kChunk;  // chunks per k row
  static constexpr int RSTEP = THREADS / CPR;   // shared rows between a thread's copies
  static constexpr int STEPS = (BK + RSTEP - 1) / RSTEP;
  static_assert(THREADS % CPR == 0 && (RSTEP & (RSTEP - 1)) == 0,
                "[K,N] copies need a power-of-two row step (BN a power of two)");

  const signed char* base;  // the matrix; also the (never read) address of zero-fill copies
  const signed char* p;     // global row kn_src_row(r0), column n0 + 16 * ch
  long long N, K;
  int r0, ch;
  bool n_in;

  __device__ __forceinline__ KnTileLoader(const signed char* src, long long n0, long long N_,
                                          long long K_, int tid)
      : base(src), N(N_), K(K_), r0(mma::copy_row<BN>(tid)), ch(mma::copy_chunk<BN>(tid)) {
    n_in = n0 + ch * mma::kChunk < N;
    p = src + mma::kn_src_row(r0) * N + n0 + ch * mma::kChunk;
  }

  __device__ __forceinline__ void load(unsigned dst, long long k0) const {
    const signed char* pk = p + k0 * N;
    const long long k_left = K - k0;
#pragma unroll
    for (int s = 0; s < STEPS; ++s) {
      const int row = r0 + s * RSTEP;
      if (BK % RSTEP != 0 && row >= BK) break;  // past the tile: no copy at all
      const bool in = n_in && (row & ~15) < k_left;
      cp_async_16(dst + mma::tile_offset<BN>(row, ch),
                  in ? pk + (long long)mma::kn_src_row(s * RSTEP) * N : base, in);
    }
  }
};

// The weight tile's loader: rows of [N,K], or the k-row-permuted tile of [K,N].
template <bool KN, int BN, int BK, int THREADS>
struct WeightLoader {
  using type = TileLoader<BN, BK, THREADS>;
};
template <int BN, int BK, int THREADS>
struct WeightLoader<true, BN, BK, THREADS> {
  using type = KnTileLoader<BK, BN, THREADS>;
};

// B fragments of two n8 tiles from a [K,N] tile: lane l addresses shared row l of the k32 step
// at one 16-byte n chunk; b = {b0, b1} of the even-column tile, then {b0, b1} of the odd one.
__device__ __forceinline__ void ldsm_x4_trans_kn(unsigned addr, unsigned (&b)[4]) {
  unsigned r0, r1, r2, r3;
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
               : "r"(addr)
               : "memory");
  b[0] = __byte_perm(r0, r1, mma::kPrmtEven);
  b[1] = __byte_perm(r2, r3, mma::kPrmtEven);
  b[2] = __byte_perm(r0, r1, mma::kPrmtOdd);
  b[3] = __byte_perm(r2, r3, mma::kPrmtOdd);
}

template <int BM, int BN, int BK, int WM, int WN, int STAGES, int SPLIT_K, long long N_,
          long long K_, int LAYOUT, int ACT, int WSC, int OUT, int BIAS, int ASYM>
__global__ void __launch_bounds__(32 * WM * WN)
    mma_sync_kernel(const __grid_constant__ I8gArgs args) {
  constexpr int THREADS = 32 * WM * WN;
  constexpr int WTM = BM / WM;  // warp tile
  constexpr int WTN = BN / WN;
  constexpr int MT = WTM / mma::kM;  // m16 tiles per warp
  constexpr int NT = WTN / mma::kN;  // n8 tiles per warp
  constexpr int A_BYTES = BM * BK;
  constexpr int STAGE_BYTES = (BM + BN) * BK;
  constexpr bool KN = LAYOUT == kLayoutKN;
  static_assert(LAYOUT == kLayoutNK || LAYOUT == kLayoutKN, "unknown weight layout");
  static_assert(!KN || N_ % mma::kChunk == 0, "[K,N] weights need N % 16 == 0 (16-byte n chunks)");
  static_assert(SPLIT_K >= 1 && SPLIT_K <= 16, "1 to 16 K slices");
  static_assert(BM % WM == 0 && WTM % mma::kM == 0, "warp tile M must be a multiple of 16");
  static_assert(BN % WN == 0 && WTN % (2 * mma::kN) == 0,
                "warp tile N must be a multiple of 16 (one ldmatrix.x4 feeds two n8 tiles)");
  static_assert(BK % mma::kK == 0, "BK must be a multiple of the mma K (32)");
  static_assert(STAGES >= 2 && STAGES <= 6, "2 to 6 pipeline stages");
  static_assert(K_ % mma::kChunk == 0, "K must be a multiple of 16 (16-byte cp.async rows)");
  static_assert(A_BYTES % 128 == 0 && STAGE_BYTES % 128 == 0,
                "tiles must be whole 128-byte lines (swizzle and ldmatrix alignment)");

  extern __shared__ __align__(128) unsigned char smem[];
  grid_order();  // nothing global is touched before it (grid_order.cuh)

  const long long M = args.m;
  const long long N = N_ ? N_ : args.n;
  const long long K = K_ ? K_ : args.k;
  const long long m0 = (long long)blockIdx.y * BM;
  const long long n0 = (long long)blockIdx.x * BN;
  const int tid = threadIdx.x;
  const int lane = tid & 31;
  const int warp = tid >> 5;
  const int wrow = mma::warp_m(warp, WN) * WTM;  // warp tile origin inside the block tile
  const int wcol = mma::warp_n(warp, WN) * WTN;
  const unsigned base = smem_addr(smem);

  int acc[MT][NT][4];
#pragma unroll
  for (int i = 0; i < MT; ++i)
#pragma unroll
    for (int j = 0; j < NT; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[i][j][e] = 0;

  // This block's K slice: tiles [kt0, kt0 + ktiles) of the whole K (blockIdx.z = slice).
  const int all_ktiles = int((K + BK - 1) / BK);
  const int per_slice = SPLIT_K == 1 ? all_ktiles : (all_ktiles + SPLIT_K - 1) / SPLIT_K;
  const int kt0 = SPLIT_K == 1 ? 0 : int(blockIdx.z) * per_slice;
  const int ktiles = SPLIT_K == 1 ? all_ktiles : max(0, min(per_slice, all_ktiles - kt0));
  const TileLoader<BM, BK, THREADS> xload(args.x, m0, M, K, tid);
  const typename WeightLoader<KN, BN, BK, THREADS>::type wload(args.w, n0, N, K, tid);
  auto load_stage = [&](int stage, int kt) {
    const unsigned sa = base + stage * STAGE_BYTES;
    const long long k0 = (long long)(kt0 + kt) * BK;
    xload.load(sa, k0);
    wload.load(sa + A_BYTES, k0);
  };

  // Prologue: STAGES-1 tiles in flight. Every iteration commits one group (empty ones too),
  // so "wait until at most STAGES-2 groups are pending" always means "tile kt has landed".
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < ktiles) load_stage(s, s);
    cp_async_commit();
  }

  int stage = 0;
  for (int kt = 0; kt < ktiles; ++kt) {
    cp_async_wait<STAGES - 2>();
    // Makes tile kt visible to every warp, and ends every warp's reads of tile kt-1, whose
    // slot the prefetch below overwrites.
    __syncthreads();
    const int pf = kt + STAGES - 1;
    if (pf < ktiles) load_stage(pf % STAGES, pf);
    cp_async_commit();

    const unsigned sa = base + stage * STAGE_BYTES;
    const unsigned sb = sa + A_BYTES;
#pragma unroll
    for (int kk = 0; kk < BK / mma::kK; ++kk) {
      unsigned a[MT][4];
      unsigned b[NT / 2][4];
#pragma unroll
      for (int i = 0; i < MT; ++i)
        ldsm_x4(sa + mma::tile_offset<BK>(wrow + i * mma::kM + mma::ldsm_a_row(lane),
                                          2 * kk + mma::ldsm_a_chunk(lane)),
                a[i]);
#pragma unroll
      for (int j = 0; j < NT / 2; ++j)
        if constexpr (KN)
          ldsm_x4_trans_kn(sb + mma::tile_offset<BN>(kk * mma::kK + mma::ldsm_kn_row(lane),
                                                     wcol / mma::kChunk + j),
                           b[j]);
        else
          ldsm_x4(sb + mma::tile_offset<BK>(wcol + j * 2 * mma::kN + mma::ldsm_b_row(lane),
                                            2 * kk + mma::ldsm_b_chunk(lane)),
                  b[j]);
#pragma unroll
      for (int i = 0; i < MT; ++i)
#pragma unroll
        for (int j = 0; j < NT; ++j)
          mma_s8(acc[i][j], a[i], b[j / 2][2 * (j & 1)], b[j / 2][2 * (j & 1) + 1]);
    }
    stage = stage + 1 == STAGES ? 0 : stage + 1;
  }
  cp_async_wait<0>();  // only empty groups can remain; leave nothing in flight at exit
  if constexpr (SPLIT_K > 1) {
    // The whole block is one reduction group; tile blockIdx.y * gridDim.x + blockIdx.x.
    int* block = args.workspace + ((long long)blockIdx.y * gridDim.x + blockIdx.x) *
                                      splitk::tile_words(SPLIT_K, BM, BN);
    if (!splitk_reduce<MT * NT, THREADS, SPLIT_K>(&acc[0][0][0], block,
                                                  reinterpret_cast<int4*>(block + splitk::kCounterWords),
                                                  BM * BN / 4, int(blockIdx.z), tid,
                                                  [](bool p) { return __syncthreads_or(p) != 0; }))
      return;  // another slice finishes this tile
  }

  // Epilogue: thread owns rows wrow + 16i + {g, g+8} and columns wcol + acc_col(j, e): 8j +
  // {2t, 2t+1} for [N,K]; 16(j/2) + {4t, 4t+2} + (j&1) for [K,N] (even/odd-column tiles).
  float sx[MT][2];
  int zp[MT][2];
#pragma unroll
  for (int i = 0; i < MT; ++i)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const long long m = m0 + wrow + i * mma::kM + mma::c_row(lane, 2 * h);
      sx[i][h] = 0.0f;
      zp[i][h] = 0;
      if (m < M) load_row_operands<ACT, OUT, ASYM>(args, m, sx[i][h], zp[i][h]);
    }
  // The column operands are requested CH column tiles at a time, all before those tiles' stores:
  // a load after a store that may alias it (for all the compiler knows) would wait a round trip
  // per column. CH: the most tiles (a divisor of NT) whose operands fit 16 registers.
  constexpr int PER_COL = (OUT == kOutI32 ? 0 : 1) + BIAS + ASYM;
  constexpr int CH = [] {
    int c = NT;
    while (c > 1 && (2 * c * PER_COL > 16 || NT % c != 0)) --c;
    return c;
  }();
  // Column of register e of column tile j.
  auto col_of = [&](int j, int e) -> long long {
    return KN ? n0 + wcol + mma::acc_col_kn(j, lane, e) : n0 + wcol + j * mma::kN + mma::c_col(lane, e);
  };
#pragma unroll
  for (int j0 = 0; j0 < NT; j0 += CH) {
    float sw[CH][2], b[CH][2];
    int colsum[CH][2];
#pragma unroll
    for (int jj = 0; jj < CH; ++jj)
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const long long n = col_of(j0 + jj, e);
        sw[jj][e] = b[jj][e] = 0.0f;
        colsum[jj][e] = 0;
        if (n < N) load_col_operands<WSC, OUT, BIAS, ASYM>(args, n, sw[jj][e], b[jj][e], colsum[jj][e]);
      }
#pragma unroll
    for (int jj = 0; jj < CH; ++jj)
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const int j = j0 + jj;
        const long long n = col_of(j, e);
        if (n >= N) continue;
#pragma unroll
        for (int i = 0; i < MT; ++i)
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            const long long m = m0 + wrow + i * mma::kM + mma::c_row(lane, 2 * h);
            if (m < M)
              finish<OUT, BIAS, ASYM>(args.out, m * N + n, acc[i][j][2 * h + e], sx[i][h], zp[i][h], sw[jj][e],
                                      b[jj][e], colsum[jj][e]);
          }
      }
  }
}

}  // namespace i8g

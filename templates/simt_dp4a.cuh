// simt_dp4a: the portable reference family (sm_75+). Each thread owns a TM x TN grid of
// outputs strided across the block tile (conflict-free shared-memory reads, coalesced
// stores) and accumulates in int32 with __dp4a over 4-byte packs along K.
//
// Shared memory holds both tiles as packed words, k-word-major: word (kw, r) = the four
// int8 values k = 4kw..4kw+3 of row r (a row of x, or an output column n of w). Rows are
// padded by one word so that the transposing stores spread over the banks.
//
// Shapes: N_ and K_ are compile-time constants (0 = read from args at run time); M is always
// a run-time value. Tails in M, N and K are zero-filled in shared memory, so any shape works;
// VEC-byte vector loads need K % VEC == 0 (and N % VEC == 0 for the [K,N] layout).
#pragma once
#include "epilogue.cuh"
#include "grid_order.cuh"

namespace i8g {

// VEC bytes of one row (a row of x, or of w in [N,K]) starting at k, or zeros past the
// matrix; stored as VEC/4 packed words (bytes for VEC == 1) of tile row r at pack kc/4.
template <int VEC>
__device__ __forceinline__ void load_rows_k(const signed char* src, long long row, long long rows,
                                            long long k, long long K, int* tile, int kc, int r,
                                            int pitch) {
  const bool in = row < rows && k < K;
  const signed char* p = src + row * K + k;
  if constexpr (VEC == 16) {
    const int4 v = in ? *reinterpret_cast<const int4*>(p) : make_int4(0, 0, 0, 0);
    tile[(kc / 4 + 0) * pitch + r] = v.x;
    tile[(kc / 4 + 1) * pitch + r] = v.y;
    tile[(kc / 4 + 2) * pitch + r] = v.z;
    tile[(kc / 4 + 3) * pitch + r] = v.w;
  } else if constexpr (VEC == 8) {
    const int2 v = in ? *reinterpret_cast<const int2*>(p) : make_int2(0, 0);
    tile[(kc / 4 + 0) * pitch + r] = v.x;
    tile[(kc / 4 + 1) * pitch + r] = v.y;
  } else if constexpr (VEC == 4) {
    tile[(kc / 4) * pitch + r] = in ? *reinterpret_cast<const int*>(p) : 0;
  } else {
    reinterpret_cast<signed char*>(tile)[((kc / 4) * pitch + r) * 4 + (kc & 3)] = in ? *p : 0;
  }
}

// VEC bytes along n of row k of w in [K,N], scattered into the packs of columns nc..nc+VEC.
template <int VEC>
__device__ __forceinline__ void load_kn(const signed char* w, long long k, long long K,
                                        long long n, long long N, int* tile, int kk, int nc,
                                        int pitch) {
  const bool in = k < K && n < N;
  alignas(16) signed char v[VEC];
  if constexpr (VEC == 16) {
    *reinterpret_cast<int4*>(v) = in ? *reinterpret_cast<const int4*>(w + k * N + n)
                                     : make_int4(0, 0, 0, 0);
  } else if constexpr (VEC == 8) {
    *reinterpret_cast<int2*>(v) = in ? *reinterpret_cast<const int2*>(w + k * N + n)
                                     : make_int2(0, 0);
  } else if constexpr (VEC == 4) {
    *reinterpret_cast<int*>(v) = in ? *reinterpret_cast<const int*>(w + k * N + n) : 0;
  } else {
    v[0] = in ? w[k * N + n] : 0;
  }
  signed char* bytes = reinterpret_cast<signed char*>(tile);
#pragma unroll
  for (int b = 0; b < VEC; ++b) bytes[((kk / 4) * pitch + nc + b) * 4 + (kk & 3)] = v[b];
}

template <int BM, int BN, int BK, int TM, int TN, int VEC, long long N_, long long K_,
          int LAYOUT, int ACT, int WSC, int OUT, int BIAS, int ASYM>
__global__ void __launch_bounds__((BM / TM) * (BN / TN))
    simt_dp4a_kernel(const __grid_constant__ I8gArgs args) {
  constexpr int THREADS = (BM / TM) * (BN / TN);
  constexpr int KW = BK / 4;  // packed words per row of a tile
  constexpr int AP = BM + 1;  // padded row pitch (words)
  constexpr int BP = BN + 1;
  static_assert(BM % TM == 0 && BN % TN == 0, "thread tile must divide the block tile");
  static_assert(BK % 4 == 0 && BK % VEC == 0, "BK must hold whole 4-byte packs and vectors");
  static_assert(VEC == 1 || VEC == 4 || VEC == 8 || VEC == 16, "VEC is 1, 4, 8 or 16 bytes");
  static_assert(THREADS % 32 == 0, "whole warps only");

  __shared__ int As[KW * AP];
  __shared__ int Bs[KW * BP];
  grid_order();  // nothing global is touched before it (grid_order.cuh)

  const long long M = args.m;
  const long long N = N_ ? N_ : args.n;
  const long long K = K_ ? K_ : args.k;
  const long long m0 = (long long)blockIdx.y * BM;
  const long long n0 = (long long)blockIdx.x * BN;
  const int tid = threadIdx.x;
  const int tx = tid % (BN / TN);
  const int ty = tid / (BN / TN);

  int acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = 0;

  for (long long k0 = 0; k0 < K; k0 += BK) {
    // x tile: BM rows of BK bytes, VEC bytes per load.
    for (int c = tid; c < BM * (BK / VEC); c += THREADS) {
      const int r = c / (BK / VEC);
      const int kc = (c % (BK / VEC)) * VEC;
      load_rows_k<VEC>(args.x, m0 + r, M, k0 + kc, K, As, kc, r, AP);
    }
    if constexpr (LAYOUT == kLayoutNK) {
      for (int c = tid; c < BN * (BK / VEC); c += THREADS) {
        const int r = c / (BK / VEC);
        const int kc = (c % (BK / VEC)) * VEC;
        load_rows_k<VEC>(args.w, n0 + r, N, k0 + kc, K, Bs, kc, r, BP);
      }
    } else {
      // w is [K,N]: read VEC bytes along n from one k row, scatter them into the packs.
      for (int c = tid; c < BK * (BN / VEC); c += THREADS) {
        const int kk = c / (BN / VEC);
        const int nc = (c % (BN / VEC)) * VEC;
        load_kn<VEC>(args.w, k0 + kk, K, n0 + nc, N, Bs, kk, nc, BP);
      }
    }
    __syncthreads();
#pragma unroll 4
    for (int kw = 0; kw < KW; ++kw) {
      int a[TM], b[TN];
#pragma unroll
      for (int i = 0; i < TM; ++i) a[i] = As[kw * AP + ty + i * (BM / TM)];
#pragma unroll
      for (int j = 0; j < TN; ++j) b[j] = Bs[kw * BP + tx + j * (BN / TN)];
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = __dp4a(a[i], b[j], acc[i][j]);
    }
    __syncthreads();
  }

  float sw[TN], bias[TN];
  int colsum[TN];
#pragma unroll
  for (int j = 0; j < TN; ++j) {
    const long long n = n0 + tx + j * (BN / TN);
    if (n < N) load_col_operands<WSC, OUT, BIAS, ASYM>(args, n, sw[j], bias[j], colsum[j]);
  }
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const long long m = m0 + ty + i * (BM / TM);
    if (m >= M) continue;
    float sx;
    int zp;
    load_row_operands<ACT, OUT, ASYM>(args, m, sx, zp);
#pragma unroll
    for (int j = 0; j < TN; ++j) {
      const long long n = n0 + tx + j * (BN / TN);
      if (n < N)
        finish<OUT, BIAS, ASYM>(args.out, m * N + n, acc[i][j], sx, zp, sw[j], bias[j],
                                colsum[j]);
    }
  }
}

}  // namespace i8g

// mfma: the int8 matrix-core family for CDNA (gfx908, gfx90a), wavefront 64.
//
// A workgroup of WM x WN waves computes a BM x BN tile; each wave owns (BM/WM) x (BN/WN),
// made of FM x FN blocks of one MFMA instruction (INSTR = 32: v_mfma_i32_32x32x8i8, INSTR =
// 16: v_mfma_i32_16x16x16i8). Accumulators stay in registers for the whole K loop and go
// straight from the lanes to the fused epilogue (no LDS round trip), by the lane layout in
// mfma_layout.h.
//
// LDS holds both tiles k-contiguous: row r of x (or output column n of w) is BK bytes plus one
// pad word, so the 32 lanes reading one k word of 32 rows hit 32 different banks. STAGES = 2
// double-buffers LDS: the next tile's global loads are issued before this tile's MFMAs and
// written to the other buffer after them, one barrier per K step.
//
// Shapes: N_ and K_ are compile-time constants (0 = from args); M is a run-time value. Tails
// in M, N and K are zero-filled in LDS. Global loads move U = max(VEC, 4) bytes; VEC-byte
// vectors need K % VEC == 0 (and N % VEC == 0 for [K,N] weights); VEC < 4 loads bytes.
#pragma once
#include "epilogue.hip.h"
#include "mfma_layout.h"

namespace i8g {

typedef int mfma_v4i __attribute__((ext_vector_type(4)));
typedef int mfma_v16i __attribute__((ext_vector_type(16)));

template <int INSTR> struct MfmaAcc;
template <> struct MfmaAcc<32> { typedef mfma_v16i type; };
template <> struct MfmaAcc<16> { typedef mfma_v4i type; };

template <int INSTR>
__device__ __forceinline__ typename MfmaAcc<INSTR>::type mfma_step(int a, int b,
                                                                   typename MfmaAcc<INSTR>::type c) {
  if constexpr (INSTR == 32) {
    return __builtin_amdgcn_mfma_i32_32x32x8i8(a, b, c, 0, 0, 0);
  } else {
    return __builtin_amdgcn_mfma_i32_16x16x16i8(a, b, c, 0, 0, 0);
  }
}

// U bytes along k of one row (x, or w in [N,K]) as U/4 words, zeros outside the matrix.
template <int VEC, int UW>
__device__ __forceinline__ void load_row_words(const signed char* src, long long row, long long rows,
                                               long long k, long long K, int* w) {
  const signed char* p = src + row * K + k;
  if constexpr (VEC >= 4) {
    const bool in = row < rows && k < K;
    if constexpr (VEC == 16) {
      const mfma_v4i v = in ? *reinterpret_cast<const mfma_v4i*>(p) : mfma_v4i{0, 0, 0, 0};
      w[0] = v.x; w[1] = v.y; w[2] = v.z; w[3] = v.w;
    } else if constexpr (VEC == 8) {
      const int2 v = in ? *reinterpret_cast<const int2*>(p) : make_int2(0, 0);
      w[0] = v.x; w[1] = v.y;
    } else {
      w[0] = in ? *reinterpret_cast<const int*>(p) : 0;
    }
  } else {
    unsigned word = 0;
#pragma unroll
    for (int b = 0; b < 4; ++b)
      if (row < rows && k + b < K) word |= (unsigned)(unsigned char)p[b] << (8 * b);
    w[0] = (int)word;
  }
}

// U bytes along n of row k of w in [K,N], zeros outside the matrix.
template <int VEC, int UW>
__device__ __forceinline__ void load_kn_words(const signed char* w, long long k, long long K,
                                              long long n, long long N, int* out) {
  if constexpr (VEC >= 4) {
    load_row_words<VEC, UW>(w, k, K, n, N, out);  // a row of [K,N] is contiguous along n
  } else {
    unsigned word = 0;
#pragma unroll
    for (int b = 0; b < 4; ++b)
      if (k < K && n + b < N) word |= (unsigned)(unsigned char)w[k * N + n + b] << (8 * b);
    out[0] = (int)word;
  }
}

template <int BM, int BN, int BK, int INSTR, int WM, int WN, int STAGES, int VEC, long long N_,
          long long K_, int LAYOUT, int ACT, int WSC, int OUT, int BIAS, int ASYM>
__global__ void __launch_bounds__(64 * WM * WN) mfma_kernel(const I8gArgs args) {
  constexpr int THREADS = 64 * WM * WN;
  constexpr int KI = mfma::k_per_instr(INSTR);
  constexpr int FM = BM / WM / INSTR;
  constexpr int FN = BN / WN / INSTR;
  constexpr int U = VEC >= 4 ? VEC : 4;  // bytes per staged unit
  constexpr int UW = U / 4;
  constexpr int PW = BK / 4 + 1;         // LDS row pitch in words (one pad word)
  constexpr int A_UNITS = BM * (BK / U);
  constexpr int B_UNITS = LAYOUT == kLayoutNK ? BN * (BK / U) : BK * (BN / U);
  constexpr int A_PER = (A_UNITS + THREADS - 1) / THREADS;
  constexpr int B_PER = (B_UNITS + THREADS - 1) / THREADS;
  static_assert(INSTR == 32 || INSTR == 16, "INSTR is 32 (32x32x8i8) or 16 (16x16x16i8)");
  static_assert(BM % (WM * INSTR) == 0 && BN % (WN * INSTR) == 0, "waves must tile the block by whole MFMA blocks");
  static_assert(BK % KI == 0 && BK % U == 0 && BN % U == 0, "BK must hold whole MFMA k steps and load units");
  static_assert(VEC == 1 || VEC == 2 || VEC == 4 || VEC == 8 || VEC == 16, "VEC is 1, 2, 4, 8 or 16 bytes");
  static_assert(STAGES == 1 || STAGES == 2, "one LDS buffer, or two (double buffering)");
  static_assert(STAGES * (BM + BN) * PW * 4 <= 65536, "LDS tiles above 64 KiB");
  typedef typename MfmaAcc<INSTR>::type acc_t;

  __shared__ int lds[STAGES][(BM + BN) * PW];

  const long long M = args.m;
  const long long N = N_ ? N_ : args.n;
  const long long K = K_ ? K_ : args.k;
  const long long m0 = (long long)blockIdx.y * BM;
  const long long n0 = (long long)blockIdx.x * BN;
  const int tid = threadIdx.x;
  const int lane = tid % 64;
  const int wave = tid / 64;

  int a_st[A_PER][UW], b_st[B_PER][UW];  // staged global loads
  auto load_tiles = [&](long long k0) {
#pragma unroll
    for (int i = 0; i < A_PER; ++i) {
      const int c = tid + i * THREADS;
      if (c < A_UNITS)
        load_row_words<VEC, UW>(args.x, m0 + c / (BK / U), M, k0 + (c % (BK / U)) * U, K, a_st[i]);
    }
#pragma unroll
    for (int i = 0; i < B_PER; ++i) {
      const int c = tid + i * THREADS;
      if (c >= B_UNITS) continue;
      if constexpr (LAYOUT == kLayoutNK)
        load_row_words<VEC, UW>(args.w, n0 + c / (BK / U), N, k0 + (c % (BK / U)) * U, K, b_st[i]);
      else
        load_kn_words<VEC, UW>(args.w, k0 + c / (BN / U), K, n0 + (c % (BN / U)) * U, N, b_st[i]);
    }
  };
  auto store_tiles = [&](int s) {
    int* As = lds[s];
    int* Bs = lds[s] + BM * PW;
#pragma unroll
    for (int i = 0; i < A_PER; ++i) {
      const int c = tid + i * THREADS;
      if (c >= A_UNITS) continue;
#pragma unroll
      for (int j = 0; j < UW; ++j) As[(c / (BK / U)) * PW + (c % (BK / U)) * UW + j] = a_st[i][j];
    }
#pragma unroll
    for (int i = 0; i < B_PER; ++i) {
      const int c = tid + i * THREADS;
      if (c >= B_UNITS) continue;
      if constexpr (LAYOUT == kLayoutNK) {
#pragma unroll
        for (int j = 0; j < UW; ++j) Bs[(c / (BK / U)) * PW + (c % (BK / U)) * UW + j] = b_st[i][j];
      } else {
        // U bytes along n of one k: scatter into the k-contiguous rows of U columns.
        const int kk = c / (BN / U), nc = (c % (BN / U)) * U;
        unsigned char* bytes = reinterpret_cast<unsigned char*>(Bs);
#pragma unroll
        for (int b = 0; b < U; ++b)
          bytes[(nc + b) * PW * 4 + kk] = (unsigned char)(b_st[i][b / 4] >> (8 * (b % 4)));
      }
    }
  };

  acc_t acc[FM][FN];
#pragma unroll
  for (int i = 0; i < FM; ++i)
#pragma unroll
    for (int j = 0; j < FN; ++j) acc[i][j] = acc_t{};

  auto compute = [&](int s) {
    const int* As = lds[s];
    const int* Bs = lds[s] + BM * PW;
    const int row0 = (wave / WN) * (BM / WM) + mfma::operand_row(INSTR, lane);
    const int col0 = (wave % WN) * (BN / WN) + mfma::operand_row(INSTR, lane);
    const int kw0 = mfma::operand_k(INSTR, lane) / 4;
#pragma unroll
    for (int kk = 0; kk < BK; kk += KI) {
      int a[FM], b[FN];
#pragma unroll
      for (int i = 0; i < FM; ++i) a[i] = As[(row0 + i * INSTR) * PW + kk / 4 + kw0];
#pragma unroll
      for (int j = 0; j < FN; ++j) b[j] = Bs[(col0 + j * INSTR) * PW + kk / 4 + kw0];
#pragma unroll
      for (int i = 0; i < FM; ++i)
#pragma unroll
        for (int j = 0; j < FN; ++j) acc[i][j] = mfma_step<INSTR>(a[i], b[j], acc[i][j]);
    }
  };

  const long long KT = (K + BK - 1) / BK;
  if constexpr (STAGES == 1) {
    for (long long kt = 0; kt < KT; ++kt) {
      load_tiles(kt * BK);
      store_tiles(0);
      __syncthreads();
      compute(0);
      __syncthreads();
    }
  } else {
    load_tiles(0);
    store_tiles(0);
    __syncthreads();
    for (long long kt = 0; kt < KT; ++kt) {
      const int cur = int(kt & 1);
      const bool more = kt + 1 < KT;
      if (more) load_tiles((kt + 1) * BK);  // in flight during this tile's MFMAs
      compute(cur);
      if (more) store_tiles(cur ^ 1);  // that buffer's readers passed the previous barrier
      __syncthreads();
    }
  }

  float sw[FN], bias[FN];
  int colsum[FN];
#pragma unroll
  for (int j = 0; j < FN; ++j) {
    const long long n = n0 + mfma::tile_col(BN, WN, INSTR, wave, j, lane);
    sw[j] = bias[j] = 0.0f;
    colsum[j] = 0;
    if (n < N) load_col_operands<WSC, OUT, BIAS, ASYM>(args, n, sw[j], bias[j], colsum[j]);
  }
#pragma unroll
  for (int i = 0; i < FM; ++i) {
#pragma unroll
    for (int r = 0; r < mfma::acc_per_lane(INSTR); ++r) {
      const long long m = m0 + mfma::tile_row(BM, WM, WN, INSTR, wave, i, lane, r);
      if (m >= M) continue;
      float sx;
      int zp;
      load_row_operands<ACT, OUT, ASYM>(args, m, sx, zp);
#pragma unroll
      for (int j = 0; j < FN; ++j) {
        const long long n = n0 + mfma::tile_col(BN, WN, INSTR, wave, j, lane);
        if (n < N) finish<OUT, BIAS, ASYM>(args.out, m * N + n, acc[i][j][r], sx, zp, sw[j], bias[j], colsum[j]);
      }
    }
  }
}

}  // namespace i8g

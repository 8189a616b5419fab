// Utility kernels beside the GEMM: weight column sums (for asymmetric activations) and
// activation quantization (docs/quantization.md has the formulas these follow exactly).
#pragma once

namespace i8g {

enum { kInBF16 = 0, kInF16 = 1, kInF32 = 2 };

template <int IN>
__device__ __forceinline__ float load_in(const void* x, long long i) {
  if constexpr (IN == kInF32) {
    return static_cast<const float*>(x)[i];
  } else if constexpr (IN == kInBF16) {
    return __uint_as_float(unsigned(static_cast<const unsigned short*>(x)[i]) << 16);
  } else {
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(static_cast<const unsigned short*>(x)[i]));
    return f;
  }
}

// colsum[n] = sum_k w(n,k). [N,K]: one warp per n; [K,N]: one thread per n (coalesced).
template <int LAYOUT>
__device__ __forceinline__ void colsum_body(const signed char* w, int* colsum, long long N, long long K) {
  if constexpr (LAYOUT == 0) {
    const long long n = (long long)blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    if (n >= N) return;
    int s = 0;
    for (long long k = threadIdx.x % 32; k < K; k += 32) s += w[n * K + k];
    for (int o = 16; o > 0; o /= 2) s += __shfl_xor_sync(0xffffffffu, s, o);
    if (threadIdx.x % 32 == 0) colsum[n] = s;
  } else {
    const long long n = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (n >= N) return;
    int s = 0;
    for (long long k = 0; k < K; ++k) s += w[k * N + n];
    colsum[n] = s;
  }
}

// Order-preserving map of floats onto unsigned ints, so atomicMax/atomicMin can reduce them.
__device__ __forceinline__ unsigned float_order(float f) {
  const unsigned b = __float_as_uint(f);
  return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}
__device__ __forceinline__ float float_unorder(unsigned u) {
  return __uint_as_float((u & 0x80000000u) ? (u & 0x7fffffffu) : ~u);
}

// Scale (and zero point) from the range [lo, hi] that always contains 0.
template <int ASYM>
__device__ __forceinline__ void scale_from_range(float lo, float hi, float* s, int* z) {
  if constexpr (ASYM) {
    lo = fminf(lo, 0.0f);
    hi = fmaxf(hi, 0.0f);
    const float sc = hi > lo ? __fdiv_rn(__fsub_rn(hi, lo), 255.0f) : 1.0f;
    *s = sc;
    *z = max(-128, min(127, -128 - __float2int_rn(__fdiv_rn(lo, sc))));
  } else {
    const float amax = fmaxf(-lo, hi);
    *s = amax > 0.0f ? __fdiv_rn(amax, 127.0f) : 1.0f;
    *z = 0;
  }
}

template <int ASYM>
__device__ __forceinline__ signed char quantize_one(float x, float s, int z) {
  const int q = __float2int_rn(__fdiv_rn(x, s)) + z;
  return (signed char)(ASYM ? max(-128, min(127, q)) : max(-127, min(127, q)));
}

// Per token: one block per row; block-wide min/max, then the row's quantization.
template <int IN, int ASYM>
__device__ __forceinline__ void quantize_rows_body(const void* x, signed char* q, float* scale,
                                                   int* zero_point, long long K) {
  __shared__ float lo_s[8], hi_s[8];
  const long long row = blockIdx.x;
  const void* xr = x;
  float lo = 0.0f, hi = 0.0f;
  for (long long k = threadIdx.x; k < K; k += blockDim.x) {
    const float v = load_in<IN>(xr, row * K + k);
    lo = fminf(lo, v);
    hi = fmaxf(hi, v);
  }
  for (int o = 16; o > 0; o /= 2) {
    lo = fminf(lo, __shfl_xor_sync(0xffffffffu, lo, o));
    hi = fmaxf(hi, __shfl_xor_sync(0xffffffffu, hi, o));
  }
  if (threadIdx.x % 32 == 0) {
    lo_s[threadIdx.x / 32] = lo;
    hi_s[threadIdx.x / 32] = hi;
  }
  __syncthreads();
  lo = lo_s[0];
  hi = hi_s[0];
  for (int i = 1; i < (int)blockDim.x / 32; ++i) {
    lo = fminf(lo, lo_s[i]);
    hi = fmaxf(hi, hi_s[i]);
  }
  float s;
  int z;
  scale_from_range<ASYM>(lo, hi, &s, &z);
  if (threadIdx.x == 0) {
    scale[row] = s;
    if (ASYM) zero_point[row] = z;
  }
  for (long long k = threadIdx.x; k < K; k += blockDim.x)
    q[row * K + k] = quantize_one<ASYM>(load_in<IN>(xr, row * K + k), s, z);
}

// Per tensor, three steps on the caller's stream, with the outputs as reduction slots (no
// workspace): scale[0] <- ordered max (max|x| when symmetric), zero_point[0] <- ordered min
// (asymmetric only); one thread turns them into s and z; then every element is quantized.
// The caller first sets scale[0] to 0 and zero_point[0] to 0xffffffff.
template <int IN, int ASYM>
__device__ __forceinline__ void range_body(const void* x, unsigned* hi_slot, unsigned* lo_slot, long long total) {
  float lo = 0.0f, hi = 0.0f;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total;
       i += (long long)gridDim.x * blockDim.x) {
    const float v = load_in<IN>(x, i);
    lo = fminf(lo, v);
    hi = fmaxf(hi, ASYM ? v : fabsf(v));
  }
  for (int o = 16; o > 0; o /= 2) {
    lo = fminf(lo, __shfl_xor_sync(0xffffffffu, lo, o));
    hi = fmaxf(hi, __shfl_xor_sync(0xffffffffu, hi, o));
  }
  if (threadIdx.x % 32 == 0) {
    atomicMax(hi_slot, float_order(hi));
    if (ASYM) atomicMin(lo_slot, float_order(lo));
  }
}

template <int ASYM>
__device__ __forceinline__ void finalize_range_body(float* scale, int* zero_point, const unsigned* hi_slot,
                                      const unsigned* lo_slot) {
  float s;
  int z;
  const float hi = float_unorder(*hi_slot);
  scale_from_range<ASYM>(ASYM ? float_unorder(*lo_slot) : -hi, hi, &s, &z);
  scale[0] = s;
  if (ASYM) zero_point[0] = z;
}

template <int IN, int ASYM>
__device__ __forceinline__ void quantize_tensor_body(const void* x, signed char* q, const float* scale,
                                       const int* zero_point, long long total) {
  const float s = scale[0];
  const int z = ASYM ? zero_point[0] : 0;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total;
       i += (long long)gridDim.x * blockDim.x)
    q[i] = quantize_one<ASYM>(load_in<IN>(x, i), s, z);
}

}  // namespace i8g

// Plain C entry points (one module holds them all; the runtime looks them up by name).
#ifdef I8G_UTILITY_MODULE
#define I8G_COLSUM(L, NAME)                                                               \
  extern "C" __global__ void __launch_bounds__(256)                                      \
      NAME(const signed char* w, int* colsum, long long N, long long K) {                \
    i8g::colsum_body<L>(w, colsum, N, K);                                                 \
  }
I8G_COLSUM(0, i8g_colsum_nk)
I8G_COLSUM(1, i8g_colsum_kn)

#define I8G_QUANT(IN, ASYM, SUFFIX)                                                       \
  extern "C" __global__ void __launch_bounds__(256) i8g_quantize_rows_##SUFFIX(           \
      const void* x, signed char* q, float* scale, int* zp, long long K) {                \
    i8g::quantize_rows_body<IN, ASYM>(x, q, scale, zp, K);                                \
  }                                                                                       \
  extern "C" __global__ void __launch_bounds__(256) i8g_range_##SUFFIX(                   \
      const void* x, unsigned* hi, unsigned* lo, long long total) {                       \
    i8g::range_body<IN, ASYM>(x, hi, lo, total);                                          \
  }                                                                                       \
  extern "C" __global__ void __launch_bounds__(256) i8g_quantize_tensor_##SUFFIX(         \
      const void* x, signed char* q, const float* scale, const int* zp, long long total) { \
    i8g::quantize_tensor_body<IN, ASYM>(x, q, scale, zp, total);                          \
  }
I8G_QUANT(0, 0, bf16_sym)
I8G_QUANT(1, 0, f16_sym)
I8G_QUANT(2, 0, f32_sym)
I8G_QUANT(0, 1, bf16_asym)
I8G_QUANT(1, 1, f16_asym)
I8G_QUANT(2, 1, f32_asym)

extern "C" __global__ void i8g_finalize_range_sym(float* scale, int* zp, const unsigned* hi,
                                                  const unsigned* lo) {
  i8g::finalize_range_body<0>(scale, zp, hi, lo);
}
extern "C" __global__ void i8g_finalize_range_asym(float* scale, int* zp, const unsigned* hi,
                                                   const unsigned* lo) {
  i8g::finalize_range_body<1>(scale, zp, hi, lo);
}
#endif

// ---------------------------------------------------------------------------------------------
// Dequant of an int32 accumulator matrix (the cuBLASLt baseline's second kernel): the same
// epilogue, element for element, as every GEMM family, 8 consecutive outputs per thread.
#include "epilogue.cuh"

namespace i8g {

// Eight consecutive values of a per-column operand (n % 8 == 0, p 16-byte aligned), or eight
// copies of p[0] for a per-tensor one.
template <typename T>
__device__ __forceinline__ void load8(const T* p, long long n, bool per_column, T (&v)[8]) {
  static_assert(sizeof(T) == 4, "float or int");
  if (per_column) {
    const int4 lo = *reinterpret_cast<const int4*>(p + n), hi = *reinterpret_cast<const int4*>(p + n + 4);
    const int w[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
#pragma unroll
    for (int j = 0; j < 8; ++j) v[j] = reinterpret_cast<const T&>(w[j]);
  } else {
#pragma unroll
    for (int j = 0; j < 8; ++j) v[j] = p[0];
  }
}

// The vector path: one row segment of 8 outputs with 16-byte loads of the accumulator and the
// per-column operands and 16-byte stores (two for 4-byte outputs). Same values as finish().
template <int OUT, int BIAS, int ASYM>
__device__ __forceinline__ void dequant_row8(const int (&v)[8], const I8gArgs& a, long long first,
                                             long long n, float sx, int zp, bool per_channel) {
  float sw[8], b[8] = {}, y[8];
  int cs[8] = {}, c[8];
  if constexpr (OUT != kOutI32) load8(a.w_scale, n, per_channel, sw);
  else for (int j = 0; j < 8; ++j) sw[j] = 0.0f;
  if constexpr (BIAS) load8(a.bias, n, true, b);
  if constexpr (ASYM) load8(a.w_colsum, n, true, cs);
#pragma unroll
  for (int j = 0; j < 8; ++j) {
    c[j] = v[j];
    y[j] = epilogue_value<OUT, BIAS, ASYM>(c[j], sx, zp, sw[j], b[j], cs[j]);
  }
  if constexpr (OUT == kOutBF16 || OUT == kOutF16) {
    unsigned h[4];
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const unsigned lo = OUT == kOutBF16 ? f32_to_bf16_rne(y[2 * j]) : f32_to_f16_rne(y[2 * j]);
      const unsigned hi = OUT == kOutBF16 ? f32_to_bf16_rne(y[2 * j + 1]) : f32_to_f16_rne(y[2 * j + 1]);
      h[j] = lo | (hi << 16);
    }
    *reinterpret_cast<uint4*>(static_cast<unsigned short*>(a.out) + first) = make_uint4(h[0], h[1], h[2], h[3]);
  } else if constexpr (OUT == kOutF32) {
    float4* o = reinterpret_cast<float4*>(static_cast<float*>(a.out) + first);
    o[0] = make_float4(y[0], y[1], y[2], y[3]);
    o[1] = make_float4(y[4], y[5], y[6], y[7]);
  } else {
    int4* o = reinterpret_cast<int4*>(static_cast<int*>(a.out) + first);
    o[0] = make_int4(c[0], c[1], c[2], c[3]);
    o[1] = make_int4(c[4], c[5], c[6], c[7]);
  }
}

// The vector kernel: one row per blockIdx.x, blockDim.x * 8 columns per blockIdx.y, 8
// consecutive outputs per thread, so neither a division nor a check of the pointers is on the
// way to the first load: at small M the dequant is a few blocks and its time is latency. The
// host launches it only where N % 8 == 0 and every pointer read or written 16 bytes at a time
// is 16-byte aligned; elsewhere the element kernel below.
template <int OUT, int BIAS, int ASYM, bool per_token, bool per_channel>
__device__ __forceinline__ void dequant_body(const int* acc, const I8gArgs& a) {
  const long long N = a.n;
  const long long n = ((long long)blockIdx.y * blockDim.x + threadIdx.x) * 8;
  if (n >= N) return;
  const long long m = blockIdx.x;
  const long long first = m * N + n;
  // Every load issued before any is used: the accumulator, the row's and the columns' operands.
  const int4 lo = *reinterpret_cast<const int4*>(acc + first);
  const int4 hi = *reinterpret_cast<const int4*>(acc + first + 4);
  float sx;
  int zp;
  if (per_token) load_row_operands<kActPerToken, OUT, ASYM>(a, m, sx, zp);
  else load_row_operands<kActPerTensor, OUT, ASYM>(a, m, sx, zp);
  const int v[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
  dequant_row8<OUT, BIAS, ASYM>(v, a, first, n, sx, zp, per_channel);
}

// The element kernel: any N, any alignment (user buffers in serving need not be 16-byte
// aligned); 8 consecutive outputs of the flattened [M,N] matrix per thread, 1D grid.
template <int OUT, int BIAS, int ASYM>
__device__ __forceinline__ void dequant_elements(const int* acc, const I8gArgs& a, bool per_token,
                                                 bool per_channel) {
  const long long N = a.n, total = a.m * a.n;
  const long long first = ((long long)blockIdx.x * blockDim.x + threadIdx.x) * 8;
  if (first >= total) return;
  long long m = first / N, n = first - m * N;
  float sx;
  int zp;
  if (per_token) load_row_operands<kActPerToken, OUT, ASYM>(a, m, sx, zp);
  else load_row_operands<kActPerTensor, OUT, ASYM>(a, m, sx, zp);
  for (int j = 0; j < 8 && first + j < total; ++j) {
    if (n == N) {  // next row
      n = 0;
      ++m;
      if (per_token) load_row_operands<kActPerToken, OUT, ASYM>(a, m, sx, zp);
    }
    float sw, b;
    int cs;
    if (per_channel) load_col_operands<kWeightPerChannel, OUT, BIAS, ASYM>(a, n, sw, b, cs);
    else load_col_operands<kWeightPerTensor, OUT, BIAS, ASYM>(a, n, sw, b, cs);
    finish<OUT, BIAS, ASYM>(a.out, first + j, acc[first + j], sx, zp, sw, b, cs);
    ++n;
  }
}

}  // namespace i8g

#ifdef I8G_UTILITY_MODULE
// One vector entry per problem epilogue: i8g_dequant_<act scale>_<weight scale>_<out>[_bias][_asym]
// (i8g_dequant_tok_ch_bf16, ...; the host's dequant_entry() names it), each a small straight
// kernel with no option read at run time. Grid (M, ceil(N / 1024)), 128 threads.
#define I8G_DQ(OUT, BIAS, ASYM, TOK, CH, NAME)                                                 \
  extern "C" __global__ void __launch_bounds__(128)                                            \
      NAME(const int* acc, const __grid_constant__ I8gArgs a) {                                \
    i8g::dequant_body<i8g::OUT, BIAS, ASYM, TOK, CH>(acc, a);                                   \
  }
// int32 output: the raw accumulator (plus the zero-point correction); no scales, no bias.
#define I8G_DQ_OUT(TOK, CH, NAME)                                                              \
  I8G_DQ(kOutBF16, 0, 0, TOK, CH, NAME##_bf16) I8G_DQ(kOutBF16, 1, 0, TOK, CH, NAME##_bf16_bias) \
  I8G_DQ(kOutBF16, 0, 1, TOK, CH, NAME##_bf16_asym)                                            \
  I8G_DQ(kOutBF16, 1, 1, TOK, CH, NAME##_bf16_bias_asym)                                       \
  I8G_DQ(kOutF16, 0, 0, TOK, CH, NAME##_f16) I8G_DQ(kOutF16, 1, 0, TOK, CH, NAME##_f16_bias)   \
  I8G_DQ(kOutF16, 0, 1, TOK, CH, NAME##_f16_asym) I8G_DQ(kOutF16, 1, 1, TOK, CH, NAME##_f16_bias_asym) \
  I8G_DQ(kOutF32, 0, 0, TOK, CH, NAME##_f32) I8G_DQ(kOutF32, 1, 0, TOK, CH, NAME##_f32_bias)   \
  I8G_DQ(kOutF32, 0, 1, TOK, CH, NAME##_f32_asym) I8G_DQ(kOutF32, 1, 1, TOK, CH, NAME##_f32_bias_asym) \
  I8G_DQ(kOutI32, 0, 0, TOK, CH, NAME##_i32) I8G_DQ(kOutI32, 0, 0, TOK, CH, NAME##_i32_bias)   \
  I8G_DQ(kOutI32, 0, 1, TOK, CH, NAME##_i32_asym) I8G_DQ(kOutI32, 0, 1, TOK, CH, NAME##_i32_bias_asym)
I8G_DQ_OUT(true, true, i8g_dequant_tok_ch)
I8G_DQ_OUT(true, false, i8g_dequant_tok_tens)
I8G_DQ_OUT(false, true, i8g_dequant_tens_ch)
I8G_DQ_OUT(false, false, i8g_dequant_tens_tens)
#undef I8G_DQ_OUT
#undef I8G_DQ

// The element entries, one per output type, bias and asymmetry (dequant_any_entry() names
// them: i8g_dequant_any_bf16_bias, ...); the scale granularities are arguments. Grid
// ceil(M * N / 2048), 256 threads.
#define I8G_DQ_ANY(OUT, BIAS, ASYM, NAME)                                                      \
  extern "C" __global__ void __launch_bounds__(256)                                            \
      NAME(const int* acc, const __grid_constant__ I8gArgs a, int per_token, int per_channel) { \
    i8g::dequant_elements<i8g::OUT, BIAS, ASYM>(acc, a, per_token != 0, per_channel != 0);     \
  }
#define I8G_DQ_ANY_OUT(OUT, NAME)                                                              \
  I8G_DQ_ANY(OUT, 0, 0, NAME) I8G_DQ_ANY(OUT, 1, 0, NAME##_bias) I8G_DQ_ANY(OUT, 0, 1, NAME##_asym) \
  I8G_DQ_ANY(OUT, 1, 1, NAME##_bias_asym)
I8G_DQ_ANY_OUT(kOutBF16, i8g_dequant_any_bf16)
I8G_DQ_ANY_OUT(kOutF16, i8g_dequant_any_f16)
I8G_DQ_ANY_OUT(kOutF32, i8g_dequant_any_f32)
I8G_DQ_ANY(kOutI32, 0, 0, i8g_dequant_any_i32) I8G_DQ_ANY(kOutI32, 0, 0, i8g_dequant_any_i32_bias)
I8G_DQ_ANY(kOutI32, 0, 1, i8g_dequant_any_i32_asym) I8G_DQ_ANY(kOutI32, 0, 1, i8g_dequant_any_i32_bias_asym)
#undef I8G_DQ_ANY_OUT
#undef I8G_DQ_ANY
#endif

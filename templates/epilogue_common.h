// The parts of the epilogue that CUDA and HIP share word for word: the zero-point correction,
// the operand loads and the store (the problem codes they test are in i8g_codes.h). The including
// header defines f32_to_bf16_rne / f32_to_f16_rne first (their instructions differ by vendor);
// dequant() and finish() stay there, since HIP needs a pragma where CUDA uses __fmul_rn.
#pragma once
#include "i8g_args.h"
#include "i8g_codes.h"

namespace i8g {

// Zero-point correction in wrapping int32 arithmetic (no signed-overflow UB).
__device__ __forceinline__ int zero_point_correct(int acc, int zp, int colsum) {
  return (int)((unsigned)acc - (unsigned)zp * (unsigned)colsum);
}

// Stores one output element; `idx` = m * N + n.
template <int OUT>
__device__ __forceinline__ void store_out(void* out, long long idx, int acc, float y) {
  if constexpr (OUT == kOutI32) {
    static_cast<int*>(out)[idx] = acc;
  } else if constexpr (OUT == kOutF32) {
    static_cast<float*>(out)[idx] = y;
  } else if constexpr (OUT == kOutBF16) {
    static_cast<unsigned short*>(out)[idx] = f32_to_bf16_rne(y);
  } else {
    static_cast<unsigned short*>(out)[idx] = f32_to_f16_rne(y);
  }
}

// Bytes per output element.
template <int OUT>
__device__ __forceinline__ constexpr int out_bytes() {
  return (OUT == kOutI32 || OUT == kOutF32) ? 4 : 2;
}
// Stores two adjacent output elements idx and idx + 1 as one access: idx must be even and `out`
// aligned to 2 * out_bytes<OUT>() (the caller checks). The bytes equal two store_out calls.
template <int OUT>
__device__ __forceinline__ void store_out2(void* out, long long idx, int acc0, int acc1, float y0, float y1) {
  if constexpr (OUT == kOutI32) {
    reinterpret_cast<int2*>(static_cast<int*>(out) + idx)[0] = make_int2(acc0, acc1);
  } else if constexpr (OUT == kOutF32) {
    reinterpret_cast<float2*>(static_cast<float*>(out) + idx)[0] = make_float2(y0, y1);
  } else if constexpr (OUT == kOutBF16) {
    static_cast<unsigned*>(out)[idx / 2] = unsigned(f32_to_bf16_rne(y0)) | (unsigned(f32_to_bf16_rne(y1)) << 16);
  } else {
    static_cast<unsigned*>(out)[idx / 2] = unsigned(f32_to_f16_rne(y0)) | (unsigned(f32_to_f16_rne(y1)) << 16);
  }
}
// Per-row and per-column epilogue operands, one at a time or together. Raw i32 output reads no
// scales (they may be null); per-tensor operands are element 0.
template <int ACT, int OUT>
__device__ __forceinline__ float row_scale(const I8gArgs& a, long long m) {
  return OUT == kOutI32 ? 0.0f : a.x_scale[ACT == kActPerToken ? m : 0];
}
template <int ACT, int ASYM>
__device__ __forceinline__ int row_zero_point(const I8gArgs& a, long long m) {
  return ASYM ? a.x_zero_point[ACT == kActPerToken ? m : 0] : 0;
}
template <int WSC, int OUT>
__device__ __forceinline__ float col_scale(const I8gArgs& a, long long n) {
  return OUT == kOutI32 ? 0.0f : a.w_scale[WSC == kWeightPerChannel ? n : 0];
}
template <int BIAS>
__device__ __forceinline__ float col_bias(const I8gArgs& a, long long n) {
  return BIAS ? a.bias[n] : 0.0f;
}
template <int ASYM>
__device__ __forceinline__ int col_sum(const I8gArgs& a, long long n) {
  return ASYM ? a.w_colsum[n] : 0;
}

template <int ACT, int OUT, int ASYM>
__device__ __forceinline__ void load_row_operands(const I8gArgs& a, long long m, float& sx,
                                                  int& zp) {
  sx = row_scale<ACT, OUT>(a, m);
  zp = row_zero_point<ACT, ASYM>(a, m);
}

template <int WSC, int OUT, int BIAS, int ASYM>
__device__ __forceinline__ void load_col_operands(const I8gArgs& a, long long n, float& sw,
                                                  float& b, int& colsum) {
  sw = col_scale<WSC, OUT>(a, n);
  b = col_bias<BIAS>(a, n);
  colsum = col_sum<ASYM>(a, n);
}

}  // namespace i8g

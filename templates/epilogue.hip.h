// The fused dequant epilogue for the HIP families: the same contract, in the same order, as
// epilogue.cuh and docs/quantization.md (the CPU reference repeats it exactly):
//   acc' = acc - zp_x[m] * colsum_w[n]            int32, wrapping (exact while |result| < 2^31)
//   y    = ((float(acc') * s_x[m|0]) * s_w[n|0])  each step rounded to nearest even, no FMA
//   y    = y + bias[n]                            (optional)
//   out  = bf16 / f16 (round to nearest even) or f32;  i32 output stores acc' itself
// Not shared text with epilogue.cuh: the conversions differ (PTX cvt there, plain clang here)
// and HIP clang contracts a*b+c into FMA by default, which the pragma below forbids.
#pragma once
#include "i8g_args.h"

namespace i8g {

enum { kLayoutNK = 0, kLayoutKN = 1 };
enum { kActPerTensor = 0, kActPerToken = 1 };
enum { kWeightPerTensor = 0, kWeightPerChannel = 1 };
enum { kOutBF16 = 0, kOutF16 = 1, kOutF32 = 2, kOutI32 = 3 };

__device__ __forceinline__ unsigned short f32_to_bf16_rne(float f) {
  unsigned u = __builtin_bit_cast(unsigned, f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((u >> 16) | 0x40u);  // quiet NaN
  u += 0x7fffu + ((u >> 16) & 1u);
  return (unsigned short)(u >> 16);
}

// IEEE conversion in the default rounding mode (nearest even); overflow becomes +-inf.
__device__ __forceinline__ unsigned short f32_to_f16_rne(float f) {
  return __builtin_bit_cast(unsigned short, (_Float16)f);
}

__device__ __forceinline__ int zero_point_correct(int acc, int zp, int colsum) {
  return (int)((unsigned)acc - (unsigned)zp * (unsigned)colsum);
}

__device__ __forceinline__ float dequant(int acc, float sx, float sw) {
#pragma clang fp contract(off)
  const float a = (float)acc;  // int -> float rounds to nearest even
  return (a * sx) * sw;
}

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

// Raw i32 output reads no scales (they may be null).
template <int ACT, int OUT, int ASYM>
__device__ __forceinline__ void load_row_operands(const I8gArgs& a, long long m, float& sx,
                                                  int& zp) {
  const long long r = (ACT == kActPerToken) ? m : 0;
  sx = OUT == kOutI32 ? 0.0f : a.x_scale[r];
  zp = ASYM ? a.x_zero_point[r] : 0;
}

template <int WSC, int OUT, int BIAS, int ASYM>
__device__ __forceinline__ void load_col_operands(const I8gArgs& a, long long n, float& sw,
                                                  float& b, int& colsum) {
  sw = OUT == kOutI32 ? 0.0f : a.w_scale[(WSC == kWeightPerChannel) ? n : 0];
  b = BIAS ? a.bias[n] : 0.0f;
  colsum = ASYM ? a.w_colsum[n] : 0;
}

template <int OUT, int BIAS, int ASYM>
__device__ __forceinline__ void finish(void* out, long long idx, int acc, float sx, int zp,
                                       float sw, float b, int colsum) {
#pragma clang fp contract(off)
  if (ASYM) acc = zero_point_correct(acc, zp, colsum);
  float y = 0.0f;
  if constexpr (OUT != kOutI32) {
    y = dequant(acc, sx, sw);
    if (BIAS) y = y + b;
  }
  store_out<OUT>(out, idx, acc, y);
}

}  // namespace i8g

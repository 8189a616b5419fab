// The fused dequant epilogue for the HIP families: the same contract, in the same order, as
// epilogue.cuh and docs/quantization.md (the CPU reference repeats it exactly):
//   acc' = acc - zp_x[m] * colsum_w[n]            int32, wrapping (exact while |result| < 2^31)
//   y    = ((float(acc') * s_x[m|0]) * s_w[n|0])  each step rounded to nearest even, no FMA
//   y    = y + bias[n]                            (optional)
//   out  = bf16 / f16 (round to nearest even) or f32;  i32 output stores acc' itself
// Shared text with epilogue.cuh lives in epilogue_common.h; here: the conversions (plain
// clang, not PTX cvt) and dequant/finish, since HIP clang contracts a*b+c into FMA by default,
// which the pragma below forbids.
#pragma once
#include "i8g_args.h"

namespace i8g {

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

}  // namespace i8g

#include "epilogue_common.h"

namespace i8g {

__device__ __forceinline__ float dequant(int acc, float sx, float sw) {
#pragma clang fp contract(off)
  const float a = (float)acc;  // int -> float rounds to nearest even
  return (a * sx) * sw;
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

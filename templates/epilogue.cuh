// The fused dequant epilogue shared by every family. The order of operations is the contract
// (docs/quantization.md) and the CPU reference repeats it exactly:
//   acc' = acc - zp_x[m] * colsum_w[n]            int32, wrapping (exact while |result| < 2^31)
//   y    = ((float(acc') * s_x[m|0]) * s_w[n|0])  each step rounded to nearest even, no FMA
//   y    = y + bias[n]                            (optional)
//   out  = bf16 / f16 (round to nearest even) or f32;  i32 output stores acc' itself
#pragma once
#include "i8g_args.h"

namespace i8g {

__device__ __forceinline__ unsigned short f32_to_bf16_rne(float f) {
#if __CUDA_ARCH__ >= 800
  unsigned short h;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return h;
#else
  unsigned u = __float_as_uint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((u >> 16) | 0x40u);  // quiet NaN
  u += 0x7fffu + ((u >> 16) & 1u);
  return (unsigned short)(u >> 16);
#endif
}

__device__ __forceinline__ unsigned short f32_to_f16_rne(float f) {
  unsigned short h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return h;
}

}  // namespace i8g

#include "epilogue_common.h"

namespace i8g {

__device__ __forceinline__ float dequant(int acc, float sx, float sw) {
  return __fmul_rn(__fmul_rn(__int2float_rn(acc), sx), sw);
}

// One element's epilogue: corrects `acc` in place (what i32 output stores) and returns y.
template <int OUT, int BIAS, int ASYM>
__device__ __forceinline__ float epilogue_value(int& acc, float sx, int zp, float sw, float b,
                                                int colsum) {
  if (ASYM) acc = zero_point_correct(acc, zp, colsum);
  float y = 0.0f;
  if constexpr (OUT != kOutI32) {
    y = dequant(acc, sx, sw);
    if (BIAS) y = __fadd_rn(y, b);
  }
  return y;
}

template <int OUT, int BIAS, int ASYM>
__device__ __forceinline__ void finish(void* out, long long idx, int acc, float sx, int zp,
                                       float sw, float b, int colsum) {
  const float y = epilogue_value<OUT, BIAS, ASYM>(acc, sx, zp, sw, b, colsum);
  store_out<OUT>(out, idx, acc, y);
}

}  // namespace i8g

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

// An L2 policy that keeps the lines it touches in L2 ahead of normally cached ones (sm_80+).
__device__ __forceinline__ unsigned long long l2_evict_last_policy() {
  unsigned long long p;
  asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;\n" : "=l"(p));
  return p;
}
// store_out's bytes, stored with an L2 cache policy (sm_80+). Decode streams the whole weight
// through L2 past its outputs; with evict_last the outputs stay there instead (session 41:
// decode_mma 28672x4096 M = 16 ran 1.04x faster on an H100, docs/decode_mma.md).
template <int OUT>
__device__ __forceinline__ void store_out_l2(void* out, long long idx, int acc, float y, unsigned long long policy) {
  if constexpr (out_bytes<OUT>() == 4) {
    const unsigned bits = OUT == kOutI32 ? unsigned(acc) : __float_as_uint(y);
    asm volatile("st.global.L2::cache_hint.b32 [%0], %1, %2;\n" ::"l"(static_cast<unsigned*>(out) + idx), "r"(bits),
                 "l"(policy) : "memory");
  } else {
    const unsigned short h = OUT == kOutBF16 ? f32_to_bf16_rne(y) : f32_to_f16_rne(y);
    asm volatile("st.global.L2::cache_hint.b16 [%0], %1, %2;\n" ::"l"(static_cast<unsigned short*>(out) + idx), "h"(h),
                 "l"(policy) : "memory");
  }
}
template <int OUT, int BIAS, int ASYM>
__device__ __forceinline__ void finish_l2(void* out, long long idx, int acc, float sx, int zp, float sw, float b,
                                          int colsum, unsigned long long policy) {
  const float y = epilogue_value<OUT, BIAS, ASYM>(acc, sx, zp, sw, b, colsum);
  store_out_l2<OUT>(out, idx, acc, y, policy);
}

}  // namespace i8g

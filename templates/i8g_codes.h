/* Numbers that cross the host/device line: the template-argument codes of the problem options
 * (the generator writes them into each instantiation, generator/problem_enums.hpp; the
 * templates test them) and the flag word of the utility module's i8g_dequant (built by the
 * generator's dequant_flags(), decoded in utility.cuh). Plain C, no includes: the host
 * includes it as is and it is embedded for NVRTC / hipRTC like every template. */
#ifndef I8G_CODES_H
#define I8G_CODES_H

#ifdef __cplusplus
namespace i8g {
#endif

enum { kLayoutNK = 0, kLayoutKN = 1 };
enum { kActPerTensor = 0, kActPerToken = 1 };
enum { kWeightPerTensor = 0, kWeightPerChannel = 1 };
enum { kOutBF16 = 0, kOutF16 = 1, kOutF32 = 2, kOutI32 = 3 };

/* i8g_dequant's flags: one bit per option, and the output's kOut* code in bits 4-5. Bias and
 * asymmetry stay the two lowest bits: the kernel switches on (out * 4 + those two bits). */
enum {
  kDequantBias = 1,
  kDequantAsym = 2,
  kDequantPerToken = 4,
  kDequantPerChannel = 8,
  kDequantOutShift = 4,
  kDequantOutMask = 3
};

#ifdef __cplusplus
}  /* namespace i8g */
#endif

#endif

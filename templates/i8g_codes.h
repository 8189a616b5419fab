/* Numbers that cross the host/device line: the template-argument codes of the problem options
 * (the generator writes them into each instantiation, generator/problem_enums.hpp; the
 * templates test them). Plain C, no includes: the host
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

#ifdef __cplusplus
}  /* namespace i8g */
#endif

#endif

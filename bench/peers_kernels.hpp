// Device code of the peers program (bench/peers_kernels.cu, nvcc, sm_90a): random fill, the
// plain configuration's dequant, the read ceiling and the int8 wgmma compute ceiling.
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace i8g::peers {

// Bytes from a hash of (index, seed): uniform int8, never a constant pattern.
void fill_random_bytes(void* p, size_t bytes, uint32_t seed, cudaStream_t s);
// Floats uniform in [lo, hi) from the same hash.
void fill_random_floats(float* p, size_t count, float lo, float hi, uint32_t seed, cudaStream_t s);
// e4m3 values from random bytes with the exponent bounded (|v| <= 4).
void fill_random_fp8(void* p, size_t count, uint32_t seed, cudaStream_t s);

// What a user of cuBLASLt int8 writes beside it: out[m,n] = bf16(acc[m,n] * xs[m] * ws[n]),
// 8 outputs per thread with 16-byte loads and stores (N % 8 == 0).
void plain_dequant(const int32_t* acc, const float* xs, const float* ws, void* out_bf16, int64_t m, int64_t n,
                   cudaStream_t s);

// Reads `bytes` (a multiple of 16) once with 16-byte loads over every SM; the xor of what it
// read goes to *sink so that nothing is optimized away.
void read_once(const void* p, size_t bytes, uint32_t* sink, int sms, cudaStream_t s);

// Issues wgmma m64n256k32 s8 x s8 -> s32 on random operands already in shared memory, two
// warpgroups per SM on every SM, `iters` groups of 4 per warpgroup. Returns the ops issued.
// *check gets a sum of the accumulators (never read for the timing).
double wgmma_issue(int iters, int sms, uint32_t* check, cudaStream_t s);

}  // namespace i8g::peers

// CPU reference of the operator, in the documented order of operations (docs/quantization.md),
// so that bf16/f16/f32 outputs can be compared bit for bit with any kernel family.
#pragma once
#include <cstdint>
#include <vector>

#include "generator/types.hpp"

namespace i8g {

struct HostOperands {
  int64_t m = 0;
  std::vector<int8_t> x;        // [M,K]
  std::vector<int8_t> w;        // [N,K] or [K,N] per problem.layout
  std::vector<float> x_scale;   // [1] or [M]
  std::vector<float> w_scale;   // [1] or [N]
  std::vector<float> bias;      // [N] or empty
  std::vector<int32_t> x_zero_point;  // [1] or [M], asymmetric only
  std::vector<int32_t> w_colsum;      // [N], asymmetric only
};

// int32 accumulators acc[m*N+n] = sum_k x[m,k] * w(n,k), exact.
std::vector<int32_t> reference_accumulate(const GemmProblem& p, const HostOperands& in);

// Output as raw bytes of p.out's element type (2 bytes bf16/f16, 4 bytes f32/i32), row-major.
std::vector<uint8_t> reference_output(const GemmProblem& p, const HostOperands& in);

// sum over k of w(n,k), for asymmetric activations.
std::vector<int32_t> weight_colsum(const GemmProblem& p, const std::vector<int8_t>& w);

uint16_t f32_to_bf16_rne(float f);
uint16_t f32_to_f16_rne(float f);
float bf16_to_f32(uint16_t h);
float f16_to_f32(uint16_t h);

}  // namespace i8g

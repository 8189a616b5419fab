// cuBLASLt called the way its best users call it (linked, not through i8gemm's LtGemm): the
// int8 -> int32 GEMM, and fp8 e4m3 -> bf16 with per-tensor scales and fast accumulation. Up to
// 16 heuristic algorithms with a 64 MB workspace; the caller times each and keeps the best.
// Row-major x[M,K] . w[N,K]^T maps to column-major C^T[N,M] = W . X^T ("TN").
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <string>

namespace i8g::peers {

class PlainLt {
 public:
  enum class Kind { i8_i32, fp8_bf16 };
  static constexpr size_t kWorkspaceBytes = size_t(64) << 20;
  // fp8: a_scale / b_scale are device floats (per-tensor scales of w and x). Throws
  // std::runtime_error when cuBLASLt offers no algorithm.
  PlainLt(Kind kind, int64_t m, int64_t n, int64_t k, const float* w_scale = nullptr, const float* x_scale = nullptr);
  ~PlainLt();
  int algo_count() const;
  void run(int algo, const void* x, const void* w, void* out, void* workspace, cudaStream_t s) const;
  static std::string version();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace i8g::peers

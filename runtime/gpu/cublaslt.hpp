// cuBLASLt, opened with dlopen like libcuda, for the baseline (int8 x int8 -> int32 on the
// tensor cores, then i8g_dequant) and the bf16 peer in `bench`. Row-major problems map to
// cuBLASLt's column-major "TN" case: C^T[N,M] = W[N,K] . X^T (docs/tuning.md).
#pragma once
#include <cuda.h>

#include <memory>
#include <string>
#include <vector>

#include "generator/types.hpp"

namespace i8g {

class LtGemm {
 public:
  enum class Kind { i8_i32, bf16_bf16 };
  static constexpr size_t kWorkspaceBytes = size_t(32) << 20;

  // Whether libcublasLt.so.13 could be opened (reason in *why).
  static bool available(std::string* why);
  // Descriptors and up to `max_algos` heuristic algorithms for out[M,N] = x[M,K] . w^T.
  // Throws Error when cuBLASLt offers none (e.g. a layout its int8 path does not support).
  LtGemm(Kind kind, int64_t m, int64_t n, int64_t k, WeightLayout layout, int max_algos = 8);
  ~LtGemm();
  LtGemm(const LtGemm&) = delete;
  LtGemm& operator=(const LtGemm&) = delete;

  int algo_count() const;
  size_t workspace_bytes(int algo) const;
  // c[M,N] (int32 or bf16, row-major) = x . w^T with algorithm `algo`, asynchronously.
  void run(int algo, const void* x, const void* w, void* c, void* workspace, CUstream s) const;
  std::string version() const;  // "cublasLt 13.0.x"

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace i8g

// cuBLASLt, opened with dlopen like NVRTC (libcublasLt.so.13, then .12; core/shared_library.hpp), for the baseline (int8 x int8 -> int32 on the
// tensor cores, then i8g_dequant) and the bf16 peer in `bench`. Row-major problems map to
// cuBLASLt's column-major "TN" case: C^T[N,M] = W[N,K] . X^T (docs/tuning.md).
#pragma once
#include <cuda.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "generator/types.hpp"

namespace i8g {

// One cuBLASLt algorithm kept by value: its opaque configuration (cublasLtMatmulAlgo_t) and the
// workspace it asked for, not an index into a heuristic list (another M's list can order its
// algorithms differently).
struct LtAlgorithm {
  std::array<uint64_t, 8> data{};
  size_t workspace = 0;
};

class LtGemm {
 public:
  enum class Kind { i8_i32, bf16_bf16 };
  static constexpr size_t kWorkspaceBytes = size_t(32) << 20;

  // Whether cuBLASLt could be opened and a handle created (reason in *why).
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

  // The heuristic list's algorithm `algo`, by value.
  LtAlgorithm algorithm(int algo) const;
  // Whether cuBLASLt accepts `a` for this GEMM over m rows (cublasLtMatmulAlgoCheck; host only).
  bool supports(const LtAlgorithm& a, int64_t m) const;
  // c = x . w^T over m rows with algorithm `a` and this object's descriptor: the m-row layouts
  // are built in place on the stack, so nothing is allocated and no heuristic is asked.
  void run(const LtAlgorithm& a, int64_t m, const void* x, const void* w, void* c, void* workspace,
           CUstream s) const;
  // The workspace bytes that run(a, ...) hands cuBLASLt: a's own need, at most kWorkspaceBytes.
  static size_t run_workspace_bytes(const LtAlgorithm& a);
  std::string version() const;  // "cublasLt 13.0.x"

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace i8g

// The cuBLASLt baseline, composed once: cuBLASLt int8 x int8 -> int32 on the tensor cores into
// an accumulator, then the dequant kernel applies the problem's epilogue (scales, zero points,
// bias, output type). The tuner races it, bench times it, and a bucket cuBLASLt won serves with
// it. It owns the accumulator and cuBLASLt's workspace; the dequant launch is the caller's
// (the engine's utility module).
#pragma once
#include <cuda.h>

#include <cstdint>
#include <functional>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>

#include "generator/types.hpp"
#include "runtime/gpu/cublaslt.hpp"
#include "runtime/gpu/device_buffer.hpp"
#include "templates/i8g_args.h"

namespace i8g {

class LtDequant {
 public:
  // out = epilogue(acc) over a.m rows, enqueued on `stream`.
  using Dequant = std::function<void(const int32_t* acc, const I8gArgs& a, CUstream stream)>;

  // Allocates the int32 accumulator for up to max_m rows and LtGemm::kWorkspaceBytes of
  // cuBLASLt workspace. cuBLASLt's descriptors and algorithms are made per M on first use.
  LtDequant(const GemmProblem& p, int64_t max_m, Dequant dequant);
  LtDequant(const LtDequant&) = delete;
  LtDequant& operator=(const LtDequant&) = delete;

  // The number of heuristic algorithms cuBLASLt offers for m rows (made on first use, host
  // only). Throws Error when cuBLASLt is missing or offers none.
  int algo_count(int64_t m) const;
  // x . w^T with algorithm `algo` (< algo_count(a.m)), then the dequant, both on `stream`.
  // No device allocation or synchronization, so a capturing stream records two nodes; the
  // first run of an M also asks cuBLASLt's heuristic (host only).
  void run(int algo, const I8gArgs& a, CUstream stream) const;
  // The two halves of run(), for benchmarks that report them apart: cuBLASLt's int8 -> int32
  // into the accumulator alone, and the dequant of whatever the accumulator holds.
  void run_gemm(int algo, const I8gArgs& a, CUstream stream) const;
  void run_dequant(const I8gArgs& a, CUstream stream) const;

  // For serving, at prepare: the algorithm `index` of the heuristic list at `tuned_m` rows (the
  // M a tune chose it at), by value, after cuBLASLt accepted it for m_lo and m_hi rows, the ends
  // of the bucket it will serve. Throws Error (unsupported) naming the rows it refuses, or when
  // the list is shorter than index + 1 (another cuBLASLt version).
  LtAlgorithm pick(int index, int64_t tuned_m, int64_t m_lo, int64_t m_hi) const;
  // The run path: cuBLASLt with that algorithm over a.m rows (layouts built in place from the
  // descriptor made at prepare: no allocation, no heuristic), then the dequant.
  void run(const LtAlgorithm& algo, const I8gArgs& a, CUstream stream) const;
  // The same with a caller's scratch memory instead of this object's accumulator and cuBLASLt
  // workspace: at least scratch_bytes(n, a.m, algo) bytes at a 256-byte aligned `scratch`, the
  // accumulator first (its bytes rounded up to 256), then cuBLASLt's workspace.
  void run(const LtAlgorithm& algo, const I8gArgs& a, CUstream stream, void* scratch) const;
  static size_t scratch_bytes(int64_t n, int64_t m, const LtAlgorithm& algo);

 private:
  void run_into(const LtAlgorithm& algo, const I8gArgs& a, CUstream stream, int32_t* acc, void* workspace) const;
  const LtGemm& gemm(int64_t m) const;
  void check_rows(int64_t m) const;

  GemmProblem p_;
  int64_t max_m_ = 0;
  Dequant dequant_;
  DeviceBuffer acc_, workspace_;
  mutable std::mutex mu_;
  mutable std::map<int64_t, std::unique_ptr<LtGemm>> by_m_;
  mutable std::atomic<const LtGemm*> base_{nullptr};  // the descriptor run(LtAlgorithm) uses (set by pick)
};

}  // namespace i8g

// CUTLASS 3.x sm90 INT8 W8A8 GEMM: a benchmark peer (the recipe of vLLM's cutlass_scaled_mm and
// SGLang's int8_scaled_mm on Hopper). Nothing in i8gemm links it; bench/ times it.
//
//   x[M,K] int8 row-major, w[N,K] int8 row-major, int32 accumulation,
//   out[M,N] bf16 row-major, out[m,n] = bf16( xs[m] * (ws[n] * float(acc[m,n])) )
//   (fp32 products in that order, one rounding to bf16 at the end, as vLLM's epilogue tree),
//   xs: float[M] per-token scales, ws: float[N] per-channel scales. No bias, no zero points.
//
// Requirements: an sm_90 device (the kernels are built for sm_90a only); K % 16 == 0 and
// N % 8 == 0 (TMA: 16-byte rows for x, w and out); x, w, out 16-byte aligned, xs and ws
// 8-byte aligned (cudaMalloc pointers are).
//
// What run() does: it builds CUTLASS's kernel parameters for the given pointers and launches
// exactly one kernel on `stream` (cudaLaunchKernelExC with a cluster; cudaLaunchKernelEx for the
// 1x1x1 cluster of vllm_M64). No allocation, no synchronization, no memset or copy: these kernels
// need no workspace (workspace_bytes() is 0 for all ten), so CUTLASS's workspace initialization
// does no device work. Besides the launch it makes host-side runtime calls that enqueue nothing:
// cudaFuncSetAttribute (dynamic shared memory; non-portable cluster size) and, per TMA
// descriptor, cudaGetDriverEntryPointByVersion + cuTensorMapEncodeTiled. vLLM and SGLang make the
// same calls per GEMM, inside their CUDA graphs too. So run() may be captured, with different
// pointers on each call: the descriptors travel in each launch's parameters.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace i8g::peers {

struct CutlassConfig {
  std::string name;      // "vllm_M128", "sglang_M32_NBig", ...
  std::string source;    // "vllm" or "sglang"
  std::string tile;      // CTA tile MxNxK, "128x128x128"
  std::string cluster;   // "2x1x1"
  std::string schedule;  // kernel schedule: "TmaWarpSpecialized" or "TmaWarpSpecializedPingpong"
                         // (the epilogue schedule is always TmaWarpSpecialized)
  std::string when;      // the problems for which its source's dispatch picks it, "64<M<=128"
};

// The ten compiled configurations: vLLM's five, then SGLang's five that differ from vLLM's.
const std::vector<CutlassConfig>& cutlass_configs();

// The name of the configuration vLLM's int8 sm90 dispatch picks for this problem.
std::string cutlass_vllm_pick(int64_t m, int64_t n, int64_t k);

// One configuration bound to one problem size, on the device current at construction.
class CutlassGemm {
 public:
  // Checks the device (sm_90), the problem (CUTLASS can_implement) and sizes the workspace; sets
  // the kernel's dynamic shared memory limit. Throws std::runtime_error naming the reason when the
  // configuration cannot run the problem, std::out_of_range for a bad index.
  CutlassGemm(size_t config_index, int64_t m, int64_t n, int64_t k);
  ~CutlassGemm();
  CutlassGemm(CutlassGemm&&) noexcept;
  CutlassGemm& operator=(CutlassGemm&&) noexcept;

  const CutlassConfig& config() const;
  size_t workspace_bytes() const;  // 0 for every configuration; pass nullptr then

  // Enqueues one GEMM on `stream`. Returns "" on success, otherwise what failed
  // (CUTLASS initialize/run status and the CUDA error). pdl: a programmatic dependent launch
  // (CUTLASS's launch_with_pdl; the kernels are built with CUTLASS_ENABLE_GDC_FOR_SM90, so they
  // wait for the previous grid before touching memory and let the next one launch early), as
  // i8gemm's own launches on sm_90.
  std::string run(const int8_t* x, const int8_t* w, const float* xs, const float* ws, void* out_bf16,
                  void* workspace, cudaStream_t stream, bool pdl = false) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace i8g::peers

// The configuration table of the CUTLASS peer, shared by the API (cutlass_i8.cu) and the kernel
// translation units (kernels_*.cu). Plain C++: no CUTLASS here.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace i8g::peers::detail {

enum class Source { kVllm, kSglang };
enum class Schedule { kWarpSpecialized, kPingpong };  // CUTLASS KernelTmaWarpSpecialized[Pingpong]

struct Spec {
  const char* name;
  Source source;
  int tile_m, tile_n, tile_k;
  int cluster_m, cluster_n, cluster_k;
  Schedule schedule;
  const char* when;  // the problems its source's dispatch sends to it
};

// vLLM: csrc/quantization/w8a8/cutlass/c3x/scaled_mm_sm90_int8_dispatch.cuh (vllm-project/vllm);
// its dispatch rounds M up: mp2 = max(32, next_pow2(M)).
// SGLang: sgl-kernel/csrc/gemm/int8_gemm_kernel.cu, sm90_dispatch_shape (sgl-project/sglang); only
// the five of its configurations that vLLM does not have (its M<=64 && N>=8192 and M>128 choices
// are vllm_M64 and vllm_default). Epilogue schedule: TmaWarpSpecialized for all.
inline constexpr Spec kSpecs[] = {
    {"vllm_M32_NSmall", Source::kVllm, 64, 64, 256, 1, 8, 1, Schedule::kWarpSpecialized, "M<=32 && N<8192"},
    {"vllm_M32_NBig", Source::kVllm, 64, 128, 256, 1, 4, 1, Schedule::kWarpSpecialized, "M<=32 && N>=8192"},
    {"vllm_M64", Source::kVllm, 64, 64, 256, 1, 1, 1, Schedule::kWarpSpecialized, "32<M<=64"},
    {"vllm_M128", Source::kVllm, 64, 128, 128, 2, 1, 1, Schedule::kPingpong, "64<M<=128"},
    {"vllm_default", Source::kVllm, 128, 128, 128, 2, 1, 1, Schedule::kPingpong, "M>128"},
    {"sglang_M32_NSmall", Source::kSglang, 64, 64, 128, 1, 8, 1, Schedule::kWarpSpecialized, "M<=32 && N<8192"},
    {"sglang_M32_NBig", Source::kSglang, 64, 128, 128, 1, 8, 1, Schedule::kWarpSpecialized, "M<=32 && N>=8192"},
    {"sglang_M64_NSmall", Source::kSglang, 64, 64, 128, 1, 4, 1, Schedule::kWarpSpecialized, "32<M<=64 && N<8192"},
    {"sglang_M128_NSmall", Source::kSglang, 64, 64, 128, 2, 1, 1, Schedule::kWarpSpecialized, "64<M<=128 && N<=4096"},
    {"sglang_M128_NBig", Source::kSglang, 64, 128, 128, 2, 1, 1, Schedule::kWarpSpecialized, "64<M<=128 && N>4096"},
};
inline constexpr size_t kNumSpecs = sizeof(kSpecs) / sizeof(kSpecs[0]);

// One compiled kernel bound to one problem size (see CutlassGemm).
class Runner {
 public:
  virtual ~Runner() = default;
  virtual size_t workspace_bytes() const = 0;
  virtual std::string run(const int8_t* x, const int8_t* w, const float* xs, const float* ws, void* out,
                          void* workspace, cudaStream_t stream, bool pdl) const = 0;
};

// Defined by kernels_vllm.cu / kernels_sglang.cu for the specs of that source; throw
// std::runtime_error when the kernel cannot run the problem.
std::unique_ptr<Runner> make_vllm_runner(size_t index, int64_t m, int64_t n, int64_t k);
std::unique_ptr<Runner> make_sglang_runner(size_t index, int64_t m, int64_t n, int64_t k);

}  // namespace i8g::peers::detail

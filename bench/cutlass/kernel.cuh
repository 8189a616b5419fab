// The CUTLASS 3.x sm90 kernel behind every configuration, and its Runner. Included only by the
// kernel translation units (kernels_vllm.cu, kernels_sglang.cu); each instantiates its own specs.
//
// Assembly as vLLM's cutlass_3x_gemm (csrc/quantization/w8a8/cutlass/c3x/scaled_mm.cuh): A = x
// row-major, B = w "column-major" (K x N with K contiguous), int32 accumulators, float compute,
// no C operand (ElementC = void), D bf16 row-major with 16-byte alignment, EpilogueTileAuto,
// mainloop stages = StageCountAutoCarveout<epilogue shared storage>, persistent tile scheduler.
// SGLang's sm90 kernels differ only in declaring a bf16 C that they never read (a null pointer);
// that reserves epilogue shared memory for C, so here its configurations get void C as well.
//
// Epilogue visitor tree (vLLM's ScaledEpilogue, SGLang's EVTCompute1):
//   D = multiplies<bf16 out, float>( ColBroadcast(xs)[m], multiplies<float>( RowBroadcast(ws)[n], acc ) )
//   i.e. out[m,n] = bf16( xs[m] * (ws[n] * float(acc[m,n])) ), round to nearest.
#pragma once

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "cute/tensor.hpp"
#include "cutlass/cutlass.h"
#include "cutlass/epilogue/collective/collective_builder.hpp"
#include "cutlass/epilogue/fusion/sm90_callbacks_tma_warpspecialized.hpp"
#include "cutlass/gemm/collective/collective_builder.hpp"
#include "cutlass/gemm/device/gemm_universal_adapter.h"
#include "cutlass/gemm/kernel/gemm_universal.hpp"
#include "cutlass/numeric_types.h"
#include "cutlass/util/packed_stride.hpp"

#include "configs.hpp"

namespace i8g::peers::detail {

template <size_t I>
struct ScaledMm {
  static constexpr Spec kSpec = kSpecs[I];
  using Tile = cute::Shape<cute::Int<kSpec.tile_m>, cute::Int<kSpec.tile_n>, cute::Int<kSpec.tile_k>>;
  using Cluster = cute::Shape<cute::Int<kSpec.cluster_m>, cute::Int<kSpec.cluster_n>, cute::Int<kSpec.cluster_k>>;
  using KernelSchedule = std::conditional_t<kSpec.schedule == Schedule::kPingpong,
                                            cutlass::gemm::KernelTmaWarpSpecializedPingpong,
                                            cutlass::gemm::KernelTmaWarpSpecialized>;
  using EpilogueSchedule = cutlass::epilogue::TmaWarpSpecialized;

  using ElementD = cutlass::bfloat16_t;
  using StrideD = cute::Stride<int64_t, cute::Int<1>, cute::Int<0>>;
  static constexpr int kAlignAB = 16;  // int8 elements per 16 bytes
  static constexpr int kAlignD = 8;    // bf16 elements per 16 bytes

  // EVT nodes. Broadcast nodes: no smem pipelining (stages 0), 4-float vector alignment, no
  // null-pointer fallback.
  using Acc = cutlass::epilogue::fusion::Sm90AccFetch;
  using XScale = cutlass::epilogue::fusion::Sm90ColBroadcast<0, Tile, float, float,
                                                             cute::Stride<cute::Int<1>, cute::Int<0>, cute::Int<0>>, 4, false>;
  using WScale = cutlass::epilogue::fusion::Sm90RowBroadcast<0, Tile, float, float,
                                                             cute::Stride<cute::Int<0>, cute::Int<1>, cute::Int<0>>, 4, false>;
  using ScaleW = cutlass::epilogue::fusion::Sm90Compute<cutlass::multiplies, float, float,
                                                        cutlass::FloatRoundStyle::round_to_nearest>;
  using ScaleX = cutlass::epilogue::fusion::Sm90Compute<cutlass::multiplies, ElementD, float,
                                                        cutlass::FloatRoundStyle::round_to_nearest>;
  using EvtW = cutlass::epilogue::fusion::Sm90EVT<ScaleW, WScale, Acc>;
  using Evt = cutlass::epilogue::fusion::Sm90EVT<ScaleX, XScale, EvtW>;

  using Epilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, Tile, Cluster,
      cutlass::epilogue::collective::EpilogueTileAuto, int32_t, float, void, StrideD, kAlignD, ElementD, StrideD,
      kAlignD, EpilogueSchedule, Evt>::CollectiveOp;

  using Mainloop = typename cutlass::gemm::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, int8_t, cutlass::layout::RowMajor, kAlignAB, int8_t,
      cutlass::layout::ColumnMajor, kAlignAB, int32_t, Tile, Cluster,
      cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(sizeof(typename Epilogue::SharedStorage))>,
      KernelSchedule>::CollectiveOp;

  using Kernel = cutlass::gemm::kernel::GemmUniversal<cute::Shape<int, int, int, int>, Mainloop, Epilogue,
                                                      cutlass::gemm::PersistentScheduler>;
  using Gemm = cutlass::gemm::device::GemmUniversalAdapter<Kernel>;
};

template <size_t I>
class ScaledMmRunner final : public Runner {
  using K = ScaledMm<I>;
  using Gemm = typename K::Gemm;
  using Kernel = typename K::Kernel;

 public:
  ScaledMmRunner(int64_t m, int64_t n, int64_t k) : m_(int(m)), n_(int(n)), k_(int(k)) {
    const std::string what = std::string("CUTLASS peer ") + K::kSpec.name + " for M=" + std::to_string(m) +
                             " N=" + std::to_string(n) + " K=" + std::to_string(k) + ": ";
    if (m <= 0 || n <= 0 || k <= 0 || m > INT32_MAX || n > INT32_MAX || k > INT32_MAX)
      throw std::runtime_error(what + "sizes must be in [1, 2^31)");
    if (k % 16 != 0) throw std::runtime_error(what + "K must be a multiple of 16 (16-byte TMA rows of x and w)");
    if (n % 8 != 0) throw std::runtime_error(what + "N must be a multiple of 8 (16-byte TMA rows of out)");

    int major = 0, minor = 0, smem_optin = 0;
    cudaError_t e = cudaGetDevice(&hw_.device_id);
    if (e == cudaSuccess) e = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, hw_.device_id);
    if (e == cudaSuccess) e = cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, hw_.device_id);
    if (e == cudaSuccess) e = cudaDeviceGetAttribute(&hw_.sm_count, cudaDevAttrMultiProcessorCount, hw_.device_id);
    if (e == cudaSuccess)
      e = cudaDeviceGetAttribute(&smem_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, hw_.device_id);
    if (e != cudaSuccess) {
      cudaGetLastError();
      throw std::runtime_error(what + "no usable CUDA device (" + cudaGetErrorString(e) + ")");
    }
    if (major != 9 || minor != 0)
      throw std::runtime_error(what + "built for sm_90a only; the device is sm_" + std::to_string(major) +
                               std::to_string(minor));
    if (int(Kernel::SharedStorageSize) > smem_optin)
      throw std::runtime_error(what + "needs " + std::to_string(Kernel::SharedStorageSize) +
                               " bytes of shared memory; the device allows " + std::to_string(smem_optin));

    const auto args = arguments(nullptr, nullptr, nullptr, nullptr, nullptr);
    cutlass::Status s = Gemm::can_implement(args);
    if (s != cutlass::Status::kSuccess)
      throw std::runtime_error(what + "CUTLASS can_implement: " + cutlassGetStatusString(s));
    workspace_ = Gemm::get_workspace_size(args);
  }

  size_t workspace_bytes() const override { return workspace_; }

  std::string run(const int8_t* x, const int8_t* w, const float* xs, const float* ws, void* out, void* workspace,
                  cudaStream_t stream, bool pdl) const override {
    if (workspace_ > 0 && workspace == nullptr) return std::string(K::kSpec.name) + ": workspace is null";
    const auto args = arguments(x, w, xs, ws, static_cast<typename K::ElementD*>(out));
    Gemm op;
    // initialize(): workspace initialization (nothing to do: no workspace), Params with the TMA
    // descriptors (host), and cudaFuncSetAttribute for the dynamic shared memory (host).
    cutlass::Status s = op.initialize(args, workspace, stream);
    if (s != cutlass::Status::kSuccess)
      return std::string(K::kSpec.name) + ": CUTLASS initialize: " + cutlassGetStatusString(s) + " (" +
             cudaGetErrorString(cudaGetLastError()) + ")";
    s = op.run(stream, /*cuda_adapter=*/nullptr, pdl);
    if (s != cutlass::Status::kSuccess)
      return std::string(K::kSpec.name) + ": CUTLASS run: " + cutlassGetStatusString(s) + " (" +
             cudaGetErrorString(cudaGetLastError()) + ")";
    return {};
  }

 private:
  typename Gemm::Arguments arguments(const int8_t* x, const int8_t* w, const float* xs, const float* ws,
                                     typename K::ElementD* out) const {
    using StrideA = typename Kernel::StrideA;
    using StrideB = typename Kernel::StrideB;
    using StrideD = typename K::StrideD;
    const StrideA sa = cutlass::make_cute_packed_stride(StrideA{}, cute::make_shape(m_, k_, 1));
    const StrideB sb = cutlass::make_cute_packed_stride(StrideB{}, cute::make_shape(n_, k_, 1));
    const StrideD sd = cutlass::make_cute_packed_stride(StrideD{}, cute::make_shape(m_, n_, 1));
    // EVT arguments mirror the tree: {children..., node op}.
    typename K::Evt::Arguments evt{
        {xs, 0.f, {}},                      // XScale: pointer, null default, stride
        {{ws, 0.f, {}}, {}, {}},            // EvtW: WScale, Acc, ScaleW
        {}};                                // ScaleX
    return typename Gemm::Arguments{cutlass::gemm::GemmUniversalMode::kGemm,
                                    {m_, n_, k_, 1},
                                    {x, sa, w, sb},
                                    {evt, nullptr, sd, out, sd},
                                    hw_,
                                    {}};
  }

  int m_, n_, k_;
  cutlass::KernelHardwareInfo hw_{};
  size_t workspace_ = 0;
};

// The runner for spec `index`, among the specs of `source` (others are not instantiated here).
template <Source source, size_t... I>
std::unique_ptr<Runner> make_runner(size_t index, int64_t m, int64_t n, int64_t k, std::index_sequence<I...>) {
  std::unique_ptr<Runner> r;
  auto one = [&](auto i) {
    if constexpr (kSpecs[decltype(i)::value].source == source)
      if (index == decltype(i)::value) r = std::make_unique<ScaledMmRunner<decltype(i)::value>>(m, n, k);
  };
  (one(std::integral_constant<size_t, I>{}), ...);
  if (!r) throw std::logic_error("CUTLASS peer: configuration " + std::to_string(index) + " is not in this unit");
  return r;
}

}  // namespace i8g::peers::detail

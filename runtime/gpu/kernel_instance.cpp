#include "runtime/gpu/kernel_instance.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <string>

#include "core/options.hpp"
#include "generator/families.hpp"
#include "generator/generator.hpp"
#include "runtime/gpu/tensor_map.hpp"

namespace i8g {

namespace {

// A launch of shape s over `grid` blocks on `stream`: the config for cuLaunchKernelEx and
// cuOccupancyMaxActiveClusters, with the cluster shape where s has one and, where `programmatic`,
// programmatic stream serialization (the kernel may start before the previous kernel in the
// stream ends; templates/grid_order.cuh). Not copyable (config points at attrs).
struct ExLaunch {
  CUlaunchAttribute attrs[2]{};
  CUlaunchConfig config{};
  ExLaunch(const LaunchShape& s, const unsigned (&grid)[3], CUstream stream, bool programmatic) {
    config.gridDimX = grid[0];
    config.gridDimY = grid[1];
    config.gridDimZ = grid[2];
    config.blockDimX = s.block[0];
    config.blockDimY = s.block[1];
    config.blockDimZ = s.block[2];
    config.sharedMemBytes = s.dynamic_smem;
    config.hStream = stream;
    config.attrs = attrs;
    if (s.cluster[0] * s.cluster[1] * s.cluster[2] > 1) {
      CUlaunchAttribute& a = attrs[config.numAttrs++];
      a.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
      a.value.clusterDim.x = s.cluster[0];
      a.value.clusterDim.y = s.cluster[1];
      a.value.clusterDim.z = s.cluster[2];
    }
    if (programmatic) {
      CUlaunchAttribute& a = attrs[config.numAttrs++];
      a.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
      a.value.programmaticStreamSerializationAllowed = 1;
    }
  }
  ExLaunch(const ExLaunch&) = delete;
  ExLaunch& operator=(const ExLaunch&) = delete;
};

// Whether kernels for `arch` launch programmatically (sm_90 and later, where every generated
// kernel waits in grid_order() before touching memory), unless I8GEMM_PDL=0.
bool programmatic_launches(const std::string& arch) {
  int sm = 0;
  return options().pdl && std::sscanf(arch.c_str(), "sm_%d", &sm) == 1 && sm >= 90;
}

// How many blocks of `fn` can be resident at once when launched in clusters of `cluster`
// blocks: the driver's count of co-resident clusters (cuOccupancyMaxActiveClusters: the SMs of
// a GPC that fit a cluster, less any the GPC cannot pair) times the cluster size, at most
// sm_count; sm_count itself without clusters or where the driver cannot say. A persistent grid
// past it would run its last clusters in a second wave.
int resident_blocks(CUfunction fn, const LaunchShape& s, int sm_count) {
  const unsigned cluster = s.cluster[0] * s.cluster[1] * s.cluster[2];
  if (cluster <= 1 || !fn || sm_count <= 0) return sm_count;
  const ExLaunch one(s, s.cluster, nullptr, false);  // a grid of one cluster
  int clusters = 0;
  if (driver().cuOccupancyMaxActiveClusters(&clusters, fn, &one.config) != CUDA_SUCCESS || clusters <= 0)
    return sm_count;
  return int(std::min<int64_t>(sm_count, int64_t(clusters) * cluster));
}

}  // namespace

KernelInstance::KernelInstance(KernelSpec spec, CUfunction fn, int64_t max_m, int sm_count)
    : spec_(std::move(spec)), fn_(fn), max_m_(max_m),
      sm_count_(resident_blocks(fn, launch_shape(spec_, 1, sm_count), sm_count)),
      maps_(family_info(spec_.config.family).tma_operands ? std::make_unique<OperandMapCache>(spec_) : nullptr),
      programmatic_(programmatic_launches(spec_.arch)),
      workspace_(zeroed_device_buffer(workspace_bytes(spec_, max_m))) {}

void KernelInstance::launch(const I8gArgs& a, CUstream stream) const {
  launch_into(a, stream, workspace_.get<int>(), false);  // its counters are zero since the clear at allocation
}

void KernelInstance::launch(const I8gArgs& a, CUstream stream, void* workspace) const {
  launch_into(a, stream, static_cast<int*>(workspace), true);
}

void KernelInstance::launch_into(const I8gArgs& a, CUstream stream, int* workspace, bool clear_counters) const {
  // More rows than the workspace was sized for would run past its end (the caller's: past what
  // the engine checked it holds for a.m rows; this instance's own: past max_m's).
  if (a.m > max_m_)
    throw Error(ErrorKind::invalid_argument, "KernelInstance::launch",
                fmt::format("{} was made for at most {} rows (its workspace is sized for them), not M={}",
                            spec_.name(), max_m_, a.m));
  I8gArgs args = a;
  args.n = spec_.problem.n;
  args.k = spec_.problem.k;
  args.workspace = workspace;
  const LaunchShape s = launch_shape(spec_, a.m, sm_count_);
  OperandMaps maps;
  void* params[] = {&args, &maps.x, &maps.w, &maps.out};
  if (maps_) maps = maps_->maps(args);
  const SplitKCounters c = splitk_counters(spec_, a.m);
  const bool clear = clear_counters && c.blocks > 0;
  if (clear)
    check_cu(driver().cuMemsetD2D32Async(reinterpret_cast<CUdeviceptr>(workspace), c.pitch, 0u, c.words,
                                         size_t(c.blocks), stream),
             "cuMemsetD2D32Async");
  // Right after the memset the kernel launches plainly: programmatic serialization orders a
  // kernel after a kernel. Stream capture records either as a kernel node (with the cluster
  // shape, and a programmatic edge from the kernel before it).
  const ExLaunch launch(s, s.grid, stream, programmatic_ && !clear);
  if (launch.config.numAttrs == 0) {
    check_cu(driver().cuLaunchKernel(fn_, s.grid[0], s.grid[1], s.grid[2], s.block[0], s.block[1], s.block[2],
                                     s.dynamic_smem, stream, params, nullptr),
             "cuLaunchKernel");
    return;
  }
  check_cu(driver().cuLaunchKernelEx(&launch.config, fn_, params, nullptr), "cuLaunchKernelEx");
}

}  // namespace i8g

#include "runtime/gpu/kernel_instance.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "generator/families.hpp"
#include "generator/generator.hpp"
#include "runtime/gpu/tensor_map.hpp"

namespace i8g {

namespace {

// A launch of shape s in clusters, over `grid` blocks on `stream`: the config for
// cuLaunchKernelEx and cuOccupancyMaxActiveClusters. Not copyable (config points at attr).
struct ClusterLaunch {
  CUlaunchAttribute attr{};
  CUlaunchConfig config{};
  ClusterLaunch(const LaunchShape& s, const unsigned (&grid)[3], CUstream stream) {
    attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attr.value.clusterDim.x = s.cluster[0];
    attr.value.clusterDim.y = s.cluster[1];
    attr.value.clusterDim.z = s.cluster[2];
    config.gridDimX = grid[0];
    config.gridDimY = grid[1];
    config.gridDimZ = grid[2];
    config.blockDimX = s.block[0];
    config.blockDimY = s.block[1];
    config.blockDimZ = s.block[2];
    config.sharedMemBytes = s.dynamic_smem;
    config.hStream = stream;
    config.attrs = &attr;
    config.numAttrs = 1;
  }
  ClusterLaunch(const ClusterLaunch&) = delete;
  ClusterLaunch& operator=(const ClusterLaunch&) = delete;
};

// How many blocks of `fn` can be resident at once when launched in clusters of `cluster`
// blocks: the driver's count of co-resident clusters (cuOccupancyMaxActiveClusters: the SMs of
// a GPC that fit a cluster, less any the GPC cannot pair) times the cluster size, at most
// sm_count; sm_count itself without clusters or where the driver cannot say. A persistent grid
// past it would run its last clusters in a second wave.
int resident_blocks(CUfunction fn, const LaunchShape& s, int sm_count) {
  const unsigned cluster = s.cluster[0] * s.cluster[1] * s.cluster[2];
  if (cluster <= 1 || !fn || sm_count <= 0) return sm_count;
  const ClusterLaunch one(s, s.cluster, nullptr);  // a grid of one cluster
  int clusters = 0;
  if (driver().cuOccupancyMaxActiveClusters(&clusters, fn, &one.config) != CUDA_SUCCESS || clusters <= 0)
    return sm_count;
  return int(std::min<int64_t>(sm_count, int64_t(clusters) * cluster));
}

}  // namespace

KernelInstance::KernelInstance(KernelSpec spec, CUfunction fn, int64_t max_m, int sm_count)
    : spec_(std::move(spec)), fn_(fn), max_m_(max_m),
      sm_count_(resident_blocks(fn, launch_shape(spec_, 1, sm_count), sm_count)),
      tma_operands_(family_info(spec_.config.family).tma_operands),
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
  void* params[] = {&args, &maps.x, &maps.w};
  if (tma_operands_) maps = operand_tensor_maps(spec_, args);
  if (const SplitKCounters c = splitk_counters(spec_, a.m); clear_counters && c.blocks > 0)
    check_cu(driver().cuMemsetD2D32Async(reinterpret_cast<CUdeviceptr>(workspace), c.pitch, 0u, c.words,
                                         size_t(c.blocks), stream),
             "cuMemsetD2D32Async");
  if (s.cluster[0] * s.cluster[1] * s.cluster[2] == 1) {
    check_cu(driver().cuLaunchKernel(fn_, s.grid[0], s.grid[1], s.grid[2], s.block[0], s.block[1], s.block[2],
                                     s.dynamic_smem, stream, params, nullptr),
             "cuLaunchKernel");
    return;
  }
  // A cluster launch (stream capture records it as a kernel node with its cluster shape).
  const ClusterLaunch launch(s, s.grid, stream);
  check_cu(driver().cuLaunchKernelEx(&launch.config, fn_, params, nullptr), "cuLaunchKernelEx");
}

}  // namespace i8g

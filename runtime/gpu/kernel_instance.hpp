// A generated kernel ready to launch: its loaded function plus a split-K workspace of its own,
// zeroed once when the instance is made and sized for the most rows it will serve. A launch
// leaves the workspace's arrival counters at zero again (templates/mma_frag.h), so that one
// clear serves every later launch and graph replay; two kernels never share a workspace (one's
// partial tiles would be the other's counters). A launch into a caller's workspace instead
// (i8gemm_run_with_workspace) clears that launch's counters first, so any memory serves.
// Serving, tuning and bench all launch kernels through this type, so the workspace rule lives
// here only.
#pragma once
#include <cuda.h>

#include <cstdint>
#include <memory>

#include "generator/types.hpp"
#include "runtime/gpu/device_buffer.hpp"
#include "runtime/gpu/tensor_map.hpp"
#include "templates/i8g_args.h"

namespace i8g {

class KernelInstance {
 public:
  // `fn` is `spec`'s loaded entry point (dynamic shared memory already raised where needed);
  // whoever loaded it keeps the module alive as long as the instance. Allocates and clears
  // the workspace (synchronizes the context), so make instances at prepare time, never while a
  // stream captures.
  // A kernel launched in thread-block clusters (LaunchShape::cluster) gets the cluster launch,
  // and its persistent grid no more blocks than the driver says can be resident in clusters.
  // sm_count: the device's multiprocessors, for persistent families' grids (0: one block per
  // tile).
  KernelInstance(KernelSpec spec, CUfunction fn, int64_t max_m, int sm_count = 0);

  const KernelSpec& spec() const { return spec_; }
  // The loaded entry point (for diagnostics that read its module's globals: cuFuncGetModule).
  CUfunction function() const { return fn_; }
  int64_t max_m() const { return max_m_; }
  // The kernel over a.m rows (at most max_m) on `stream`; n, k and workspace come from the
  // instance; families that load with TMA get their two tensor maps from the instance's map
  // cache (encoded, host only, the first time an operand's address is seen: OperandMapCache).
  // Only a launch: no allocation, no synchronization, so it is safe while capturing. On sm_90
  // and later the launch is programmatic (it may start before the previous kernel in the stream
  // ends; every generated kernel waits for it before touching memory: templates/grid_order.cuh)
  // unless I8GEMM_PDL=0.
  void launch(const I8gArgs& a, CUstream stream) const;
  // The same into a caller's workspace of at least workspace_bytes(spec(), a.m) bytes, which
  // may hold anything: the launch's arrival counters are zeroed first on `stream` (one 2D
  // memset, captured as a memset node), so the caller needs no clear and may reuse the memory
  // for other kernels in between. Nothing is launched for a kernel without split-K's workspace.
  void launch(const I8gArgs& a, CUstream stream, void* workspace) const;
  // Empty when the kernel does not split K (tests read the counters back through it).
  const DeviceBuffer& workspace() const { return workspace_; }

 private:
  void launch_into(const I8gArgs& a, CUstream stream, int* workspace, bool clear_counters) const;

  KernelSpec spec_;
  CUfunction fn_ = nullptr;
  int64_t max_m_ = 0;
  int sm_count_ = 0;  // blocks resident at once: the SM count, or less where clusters do not tile the SMs
  // The family takes tensor maps (looked up once, not per launch): their cache; else empty.
  std::unique_ptr<OperandMapCache> maps_;
  bool programmatic_ = false;  // launched with programmatic stream serialization (sm_90+, not I8GEMM_PDL=0)
  DeviceBuffer workspace_;
};

}  // namespace i8g

#include "runtime/gpu/kernel_instance.hpp"

#include <fmt/format.h>

#include "generator/families.hpp"
#include "generator/generator.hpp"
#include "runtime/gpu/tensor_map.hpp"

namespace i8g {

KernelInstance::KernelInstance(KernelSpec spec, CUfunction fn, int64_t max_m, int sm_count)
    : spec_(std::move(spec)), fn_(fn), max_m_(max_m), sm_count_(sm_count),
      tma_operands_(family_info(spec_.config.family).tma_operands),
      workspace_(zeroed_device_buffer(workspace_bytes(spec_, max_m))) {}

void KernelInstance::launch(const I8gArgs& a, CUstream stream) const {
  // More rows than the workspace was sized for would run past its end.
  if (a.m > max_m_)
    throw Error(ErrorKind::invalid_argument, "KernelInstance::launch",
                fmt::format("{} was made for at most {} rows (its workspace is sized for them), not M={}",
                            spec_.name(), max_m_, a.m));
  I8gArgs args = a;
  args.n = spec_.problem.n;
  args.k = spec_.problem.k;
  args.workspace = workspace_.get<int>();
  const LaunchShape s = launch_shape(spec_, a.m, sm_count_);
  CUtensorMap xmap, wmap;
  void* params[] = {&args, &xmap, &wmap};
  if (tma_operands_) {
    xmap = operand_tensor_map(args.x, args.m, args.k, spec_.config.bm);
    wmap = operand_tensor_map(args.w, args.n, args.k, spec_.config.bn);
  }
  check_cu(driver().cuLaunchKernel(fn_, s.grid[0], s.grid[1], s.grid[2], s.block[0], s.block[1], s.block[2],
                                   s.dynamic_smem, stream, params, nullptr),
           "cuLaunchKernel");
}

}  // namespace i8g

// Launch geometry: grid, block and dynamic shared memory, the zeroed workspace a launch needs,
// and the M buckets prepare and tuning cover. Each family's record says its own.
#include <algorithm>

#include "generator/families.hpp"
#include "generator/generator.hpp"
#include "generator/rules.hpp"
#include "templates/splitk.h"
#include "templates/wgmma_frag.h"

namespace i8g {

LaunchShape FamilyInfo::tile_launch(const KernelSpec& spec, int64_t m, int) {
  const KernelConfig& c = spec.config;
  const FamilyInfo& f = family_info(c.family);
  LaunchShape s{};
  s.grid[0] = unsigned((spec.problem.n + c.bn - 1) / c.bn);
  s.grid[1] = unsigned((std::max<int64_t>(m, 1) + c.bm - 1) / c.bm);
  s.grid[2] = unsigned(c.split_k);
  s.block[0] = unsigned(f.threads(c));
  s.block[1] = s.block[2] = 1;
  s.dynamic_smem = unsigned(f.dynamic_smem(c));
  return s;
}

size_t FamilyInfo::tile_splitk_workspace(const KernelSpec& spec, int64_t m) {
  const LaunchShape s = tile_launch(spec, m);
  return splitk_workspace_bytes(int64_t(s.grid[0]) * s.grid[1], spec.config);
}

LaunchShape launch_shape(const KernelSpec& spec, int64_t m, int sm_count) {
  return family_info(spec.config.family).launch(spec, m, sm_count);
}

TmaBoxRows tma_box_rows(const KernelConfig& c, int64_t m) {
  TmaBoxRows b;
  b.x = wg::x_box_rows(c.bm, m);
  b.w = c.cluster_m > 1 ? c.bn / c.cluster_m : c.bn;
  // A consumer's rows (templates/wgmma_tma.cuh: ping-pong, schedule 2, owns whole tiles).
  if (c.epilogue_store) b.out = c.schedule == 2 ? c.bm : c.bm / 2;
  return b;
}

size_t workspace_bytes(const KernelSpec& spec, int64_t m) {
  return family_info(spec.config.family).workspace(spec, m);
}

SplitKCounters splitk_counters(const KernelSpec& spec, int64_t m) {
  const KernelConfig& c = spec.config;
  const size_t bytes = workspace_bytes(spec, m);
  if (c.dynamic_schedule && bytes > 0) return {1, size_t(splitk::kCounterWords), size_t(splitk::kCounterWords) * 4};
  if (c.split_k <= 1 || bytes == 0) return {};
  const size_t pitch = size_t(splitk::tile_words(c.split_k, c.bm, c.bn)) * 4;
  return {int64_t(bytes / pitch), size_t(splitk::kCounterWords), pitch};
}

std::vector<int64_t> m_buckets(int64_t max_m) {
  std::vector<int64_t> out;
  for (int64_t b : {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 3072, 4096, 8192}) {
    out.push_back(b);
    if (b >= max_m) return out;
  }
  out.push_back(max_m);
  return out;
}

}  // namespace i8g

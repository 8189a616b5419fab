// Occupancy as cuda_occupancy.h (CUDA 13.0) computes it, for the default carveout (the driver
// may use all of smem_per_sm) and kernels that opted in to the large smem limit:
// - threads: max_threads_per_sm / warp_size warps, a block takes ceil(threads / 32) warps;
//   a block over 1024 threads cannot launch.
// - registers: per warp, regs * 32 rounded up to 256 (the allocation unit). Registers live in
//   4 sub-partitions of regs_per_sm / 4; warps per sub-partition = floor((regs_per_sm / 4) /
//   regs_per_warp); blocks = (that * 4) / warps per block. A block fails to launch when
//   regs_per_warp * roundup(warps, 4) > regs per block (65536 = regs_per_sm on sm_75..90) or
//   regs > 255 (ptxas's limit, Target::max_regs_per_thread).
// - shared memory: per block, static + dynamic + the driver's reserved 1 KiB (sm_80+; 0 on
//   sm_75), rounded up to 128 B (sm_80+) or 256 B (sm_75); blocks = smem_per_sm / that. More
//   than smem_per_block_optin + reserved cannot launch.
// - barriers: an SM holds 2 * max_blocks_per_sm barriers (sm_75, 80, 90, 100) or
//   max_blocks_per_sm (sm_86, 87, 89, 120); blocks = that / barriers per block
//   (cudaOccMaxBlocksPerSMBlockBarrierLimit).
// - blocks: max_blocks_per_sm.
#include <algorithm>
#include <climits>

#include "core/occupancy.hpp"

namespace i8g {
namespace {

int round_up(int x, int unit) { return unit > 0 ? (x + unit - 1) / unit * unit : x; }

}  // namespace

int estimate_blocks_per_sm(const Target& t, int regs, int threads, int smem, std::string* limiter,
                           int barriers) {
  auto result = [&](int blocks, const char* why) {
    if (limiter) *limiter = why;
    return blocks;
  };
  const int warp = t.warp_size > 0 ? t.warp_size : 32;
  if (threads <= 0 || threads > 1024 || t.max_threads_per_sm <= 0) return result(0, "threads");
  const int warps = (threads + warp - 1) / warp;

  const int by_threads = (t.max_threads_per_sm / warp) / warps;
  const int by_blocks = t.max_blocks_per_sm > 0 ? t.max_blocks_per_sm : INT_MAX;

  int by_regs = INT_MAX;
  if (regs > 0) {
    const int partitions = 4;
    const int per_warp = round_up(regs * warp, 256);
    const int regs_per_block = t.regs_per_sm;  // 64 Ki on every supported NVIDIA arch
    if (regs > t.max_regs_per_thread || per_warp * round_up(warps, partitions) > regs_per_block)
      return result(0, "registers");
    by_regs = ((t.regs_per_sm / partitions) / per_warp) * partitions / warps;
  }

  int by_smem = INT_MAX;
  const bool ampere_plus = !t.amd && t.sm >= 80;
  const int reserved = ampere_plus ? 1024 : 0;
  const int allocated = round_up(std::max(smem, 0) + reserved, ampere_plus ? 128 : 256);
  if (allocated > t.smem_per_block_optin + reserved) return result(0, "shared memory");
  if (allocated > 0) by_smem = t.smem_per_sm / allocated;

  int by_barriers = INT_MAX;
  if (barriers > 0 && by_blocks != INT_MAX) {
    const bool one_set = t.sm == 86 || t.sm == 87 || t.sm == 89 || t.sm == 120;  // 8.x with minor != 0, 12.x
    by_barriers = (one_set ? by_blocks : 2 * by_blocks) / barriers;
  }

  // Ties go to the hardware caps first: "threads" at full occupancy says more than "registers".
  const int blocks = std::min({by_threads, by_blocks, by_regs, by_smem, by_barriers});
  if (blocks == by_threads) return result(blocks, "threads");
  if (blocks == by_blocks) return result(blocks, "blocks");
  if (blocks == by_regs) return result(blocks, "registers");
  if (blocks == by_smem) return result(blocks, "shared memory");
  return result(blocks, "barriers");
}

int estimate_amd_workgroups_per_cu(const Target& t, int vgprs, int agprs, int sgprs, int threads,
                                   int lds_bytes, std::string* limiter) {
  auto result = [&](int wgs, const char* why) {
    if (limiter) *limiter = why;
    return wgs;
  };
  if (threads <= 0 || threads > 1024 || t.simds_per_cu <= 0) return result(0, "workgroups");
  const int wave = t.warp_size > 0 ? t.warp_size : 64;
  const int waves_per_wg = (threads + wave - 1) / wave;
  // Per SIMD: the register files decide how many waves fit, capped by the wave slots.
  int by_vgpr = t.max_waves_per_simd;
  const int file = t.unified_vgprs ? t.vgprs_per_simd_lane : t.vgprs_per_simd_lane / 2;
  const int used = t.unified_vgprs ? std::max(vgprs, 0) : std::max(std::max(vgprs, 0), std::max(agprs, 0));
  if (used > 0) by_vgpr = std::min(by_vgpr, file / round_up(used, std::max(t.vgpr_granule, 1)));
  int by_sgpr = t.max_waves_per_simd;
  if (sgprs > 0) by_sgpr = std::min(by_sgpr, t.sgprs_per_simd / round_up(sgprs, 16));
  // Per CU: waves of a workgroup spread over the SIMDs.
  auto wgs_from_waves = [&](int per_simd) { return per_simd * t.simds_per_cu / waves_per_wg; };
  const int slots = wgs_from_waves(t.max_waves_per_simd);
  const int v = wgs_from_waves(by_vgpr), s = wgs_from_waves(by_sgpr);
  const int l = lds_bytes > 0 ? t.smem_per_sm / lds_bytes : INT_MAX;
  if (lds_bytes > t.smem_per_block_optin) return result(0, "LDS");
  const int g = t.max_blocks_per_sm > 0 ? t.max_blocks_per_sm : INT_MAX;
  const int wgs = std::min({slots, v, s, l, g});
  if (wgs == slots) return result(wgs, "wave slots");
  if (wgs == v) return result(wgs, "VGPRs");
  if (wgs == s) return result(wgs, "SGPRs");
  if (wgs == l) return result(wgs, "LDS");
  return result(wgs, "workgroups");
}

}  // namespace i8g

// The one occupancy model: resident blocks (AMD: workgroups) per multiprocessor from a kernel's
// registers, threads and shared memory. The generator's budgets and the resource report both
// call it, so a config the generator keeps and the report of its binary agree on the rules.
#pragma once
#include <string>

#include "core/target.hpp"

namespace i8g {

// Workgroups per CU for an AMD kernel (waves spread over the CU's SIMDs); *limiter names the
// tightest of "VGPRs", "SGPRs", "LDS", "wave slots", "workgroups".
int estimate_amd_workgroups_per_cu(const Target& t, int vgprs, int agprs, int sgprs, int threads,
                                   int lds_bytes, std::string* limiter);

// Resident blocks per SM by the CUDA occupancy calculator's rules (see core/occupancy.cpp).
// smem_per_block is the kernel's static + dynamic smem, without the driver's reserved block.
// `barriers` is ptxas's "used N barriers" (0: not limiting). *limiter names the tightest limit.
int estimate_blocks_per_sm(const Target& t, int regs_per_thread, int threads_per_block, int smem_per_block,
                           std::string* limiter, int barriers = 0);

}  // namespace i8g

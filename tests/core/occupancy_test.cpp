// Occupancy estimates against hand-worked cases of the CUDA occupancy calculator's rules.
#include <gtest/gtest.h>

#include "runtime/report/report.hpp"

namespace i8g {
namespace {

int blocks(const char* arch, int regs, int threads, int smem, std::string* limiter, int barriers = 0) {
  return estimate_blocks_per_sm(Target::from_arch(arch), regs, threads, smem, limiter, barriers);
}

TEST(Occupancy, Sm90With256ThreadsAnd64RegistersIsRegisterLimitedAtFourBlocks) {
  // 64 regs * 32 = 2048 per warp; 16384 per sub-partition -> 8 warps each, 32 per SM; 8 per block.
  std::string why;
  EXPECT_EQ(blocks("sm_90a", 64, 256, 0, &why), 4);
  EXPECT_EQ(why, "registers");
}

TEST(Occupancy, FullOccupancyIsAttributedToThreadsNotRegisters) {
  std::string why;
  EXPECT_EQ(blocks("sm_90a", 32, 256, 0, &why), 8);  // registers would also allow exactly 8
  EXPECT_EQ(why, "threads");
  EXPECT_EQ(blocks("sm_90a", 16, 32, 0, &why), 32);  // 64 warps allowed, 32 blocks max
  EXPECT_EQ(why, "blocks");
}

TEST(Occupancy, RegistersAreAllocatedPerSubPartition) {
  // 40 regs -> 1280 per warp; floor(16384 / 1280) = 12 warps per sub-partition = 48 per SM, so
  // 16 blocks of 3 warps (not 17 as 65536 / 1280 = 51 warps would suggest).
  std::string why;
  EXPECT_EQ(blocks("sm_90a", 40, 96, 0, &why), 16);
  EXPECT_EQ(why, "registers");
  // 72 regs round to 2304 per warp: 7 warps per sub-partition, 28 per SM, 3 blocks of 8 warps.
  EXPECT_EQ(blocks("sm_80", 72, 256, 0, &why), 3);
}

TEST(Occupancy, SharedMemoryIncludesTheDriversReservedKiBFromSm80) {
  std::string why;
  // sm_90: 100 KiB + 1 KiB reserved = 103424 B per block; 228 KiB per SM -> 2 blocks.
  EXPECT_EQ(blocks("sm_90a", 32, 128, 100 * 1024, &why), 2);
  EXPECT_EQ(why, "shared memory");
  // sm_80: 48 KiB + 1 KiB = 50176 B; 164 KiB per SM -> 3 blocks.
  EXPECT_EQ(blocks("sm_80", 32, 128, 48 * 1024, &why), 3);
  EXPECT_EQ(why, "shared memory");
  // 164 KiB / 4 = 41 KiB would fit 4 blocks without the reserve; with it only 3.
  EXPECT_EQ(blocks("sm_80", 32, 128, 41 * 1024, &why), 3);
  // sm_75 reserves nothing: 64 KiB per SM holds exactly two 32 KiB blocks.
  EXPECT_EQ(blocks("sm_75", 32, 128, 32 * 1024, &why), 2);
  EXPECT_EQ(why, "shared memory");
}

TEST(Occupancy, SharedMemoryIsRoundedToTheAllocationUnit) {
  std::string why;
  // sm_86: 100 KiB per SM; 9000 + 1024 -> 10112 (128 B unit) -> 10 blocks.
  EXPECT_EQ(blocks("sm_86", 32, 64, 9000, &why), 10);
  // sm_75: 8000 -> 8192 (256 B unit) -> 8 blocks, not 8.19.
  EXPECT_EQ(blocks("sm_75", 32, 64, 8000, &why), 8);
}

TEST(Occupancy, WhatCannotLaunchGivesZeroBlocksAndTheReason) {
  std::string why;
  EXPECT_EQ(blocks("sm_90a", 255, 1024, 0, &why), 0);
  EXPECT_EQ(why, "registers");
  EXPECT_EQ(blocks("sm_90a", 32, 128, 227 * 1024 + 1, &why), 0);
  EXPECT_EQ(why, "shared memory");
  EXPECT_EQ(blocks("sm_90a", 32, 128, 227 * 1024, &why), 1);  // exactly the opt-in limit fits
  EXPECT_EQ(blocks("sm_90a", 32, 2048, 0, &why), 0);
  EXPECT_EQ(why, "threads");
  EXPECT_EQ(blocks("sm_90a", 256, 32, 0, &why), 0);  // over 255 registers per thread
  EXPECT_EQ(why, "registers");
}

TEST(Occupancy, NamedBarriersLimitBlocksOnSm86) {
  std::string why;
  // sm_86 has 16 barrier sets per SM (one per resident block); 2 per block -> 8 blocks.
  EXPECT_EQ(blocks("sm_86", 16, 32, 0, &why, 2), 8);
  EXPECT_EQ(why, "barriers");
  // sm_80 has twice as many.
  EXPECT_EQ(blocks("sm_80", 16, 32, 0, &why, 2), 32);
  EXPECT_EQ(why, "blocks");
  // sm_120: one set per resident block (24); sm_100 two (cuda_occupancy.h, CUDA 13.0).
  EXPECT_EQ(blocks("sm_120", 16, 32, 0, &why, 2), 12);
  EXPECT_EQ(why, "barriers");
  EXPECT_EQ(blocks("sm_100", 16, 32, 0, &why, 2), 32);
  EXPECT_EQ(why, "blocks");
}

TEST(Occupancy, Sm120HasLessSharedMemoryAndFewerThreadsThanSm100) {
  std::string why;
  EXPECT_EQ(blocks("sm_120", 32, 128, 99 * 1024 + 1, &why), 0);  // over the 99 KiB opt-in
  EXPECT_EQ(why, "shared memory");
  EXPECT_EQ(blocks("sm_100", 32, 128, 99 * 1024 + 1, &why), 2);  // 228 KiB per SM
  EXPECT_EQ(blocks("sm_120", 32, 512, 0, &why), 3);                // 1536 threads
  EXPECT_EQ(why, "threads");
}

}  // namespace
}  // namespace i8g

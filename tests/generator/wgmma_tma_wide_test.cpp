// The wgmma_tma family's wide tiles (generator/family_wgmma_tma.cpp, wide_tile): bn 96, 160, 192,
// offered only where the width divides N, with 64 rows per consumer (cooperative 128, ping-pong
// 64); refused by invalid_reason at every other width; the untuned default where they pay.
#include <gtest/gtest.h>

#include <set>

#include "generator/generator.hpp"

using namespace i8g;

namespace {

const Target kHopper = Target::from_arch("sm_90a");

// "sc1_128x160", ... for every wgmma_tma candidate with bn 96, 160 or 192 (all unsplit, unclustered,
// with the plain ring).
std::set<std::string> wide_shapes(const GemmProblem& p) {
  std::set<std::string> out;
  for (const KernelConfig& c : candidates(p, kHopper))
    if (c.family == Family::wgmma_tma && (c.bn == 96 || c.bn == 160 || c.bn == 192)) {
      EXPECT_EQ(c.split_k, 1) << c;
      EXPECT_LE(c.stages, 8) << c;
      EXPECT_EQ(c.cluster_m, 1) << c;
      EXPECT_EQ(invalid_reason(p, c, kHopper), "") << c;
      out.insert("sc" + std::to_string(c.schedule) + "_" + std::to_string(c.bm) + "x" + std::to_string(c.bn));
    }
  return out;
}

}  // namespace

TEST(WgmmaTmaWide, OfferedWhereTheWidthDividesN) {
  EXPECT_EQ(wide_shapes({2560, 4096}), (std::set<std::string>{"sc1_128x160", "sc2_64x160"}));
  EXPECT_EQ(wide_shapes({6144, 4096}), (std::set<std::string>{"sc1_128x96", "sc1_128x192", "sc2_64x96", "sc2_64x192"}));
  EXPECT_EQ(wide_shapes({768, 4096}), (std::set<std::string>{"sc1_128x96", "sc1_128x192", "sc2_64x96", "sc2_64x192"}));
  EXPECT_EQ(wide_shapes({1920, 4096}), (std::set<std::string>{"sc1_128x96", "sc1_128x160", "sc1_128x192", "sc2_64x96",
                                                              "sc2_64x160", "sc2_64x192"}));
  EXPECT_TRUE(wide_shapes({4096, 4096}).empty());
  EXPECT_TRUE(wide_shapes({28672, 4096}).empty());
  EXPECT_TRUE(wide_shapes({100, 4096}).empty());
}

TEST(WgmmaTmaWide, TheRingFitsAndStagesFollowTheStageSize) {
  for (const KernelConfig& c : candidates({1920, 4096}, kHopper)) {
    if (c.family != Family::wgmma_tma || (c.bn != 96 && c.bn != 160 && c.bn != 192)) continue;
    const int stage = (c.bm + c.bn) * 128;
    EXPECT_EQ(c.stages, std::min(8, (kHopper.smem_per_block_optin - 1024 - 16) / (stage + 16))) << c;
    const LaunchShape s = launch_shape({{1920, 4096}, c, "sm_90a"}, 1024);
    EXPECT_LE(int(s.dynamic_smem), kHopper.smem_per_block_optin) << c;
    EXPECT_EQ(stage % 1024, 0) << c << ": every tile starts on a 1024-byte boundary";
  }
}

TEST(WgmmaTmaWide, InvalidReasonNamesOtherWidthsAndTooManyAccumulators) {
  const GemmProblem p{2560, 4096};
  KernelConfig c = KernelConfig::parse(Family::wgmma_tma, "bm128_bn160_bk128_wg2_s5_sc1_sk1");
  EXPECT_EQ(invalid_reason(p, c, kHopper), "");
  for (int bn : {80, 144, 224}) {
    c.bn = bn;
    EXPECT_NE(invalid_reason(p, c, kHopper).find("bn=" + std::to_string(bn)), std::string::npos) << bn;
  }
  // Ping-pong 128 rows x 192 columns: 192 accumulators per consumer thread.
  const KernelConfig pp = KernelConfig::parse(Family::wgmma_tma, "bm128_bn192_bk128_wg2_s4_sc2_sk1");
  EXPECT_NE(invalid_reason({6144, 4096}, pp, kHopper).find("accumulators"), std::string::npos);
}

// The untuned default takes a wide tile only where it divides N and its waves cost less than
// the bn 64/128 tiles' (the points measured are in wgmma_rules_test.cpp); 4096 x 4096 has none.
TEST(WgmmaTmaWide, TheUntunedDefaultTakesAWideTileOnlyWhereItDividesN) {
  for (int64_t m : {64, 128, 512, 1024, 4096}) {
    const KernelConfig c = heuristic_default({4096, 4096}, kHopper, m);
    EXPECT_TRUE(c.bn == 64 || c.bn == 128) << "M=" << m << ": " << c;
  }
  EXPECT_EQ(heuristic_default({2560, 4096}, kHopper, 1024).bn, 160);
  EXPECT_EQ(heuristic_default({6144, 4096}, kHopper, 512).bn, 192);
  EXPECT_EQ(heuristic_default({2560, 4096}, kHopper, 4096).bn, 128);
}

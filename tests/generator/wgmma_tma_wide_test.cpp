// The wgmma_tma family's wide tiles (generator/family_wgmma_tma.cpp, width_offered): bn 96, 160, 192,
// offered only where the width divides N, with 64 rows per consumer (cooperative 128, ping-pong
// 64); refused by invalid_reason at every other width; the untuned default where they pay. And
// the narrow ones: bn 48, 80 where the last tile column wastes at most 1/16 of N,
// with rings as deep as fit.
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
    const int stage = (c.bm + c.bn) * c.bk;  // bk 256: two K tiles a stage, as deep a ring as fits
    EXPECT_EQ(c.stages, std::min(c.bk == 128 ? 8 : 16, (kHopper.smem_per_block_optin - 1024 - 16) / (stage + 16))) << c;
    const LaunchShape s = launch_shape({{1920, 4096}, c, "sm_90a"}, 1024);
    EXPECT_LE(int(s.dynamic_smem), kHopper.smem_per_block_optin) << c;
    EXPECT_EQ(stage % 1024, 0) << c << ": every tile starts on a 1024-byte boundary";
  }
}

TEST(WgmmaTmaWide, InvalidReasonNamesOtherWidthsAndTooManyAccumulators) {
  const GemmProblem p{2560, 4096};
  KernelConfig c = KernelConfig::parse(Family::wgmma_tma, "bm128_bn160_bk128_wg2_s5_sc1_sk1");
  EXPECT_EQ(invalid_reason(p, c, kHopper), "");
  for (int bn : {72, 112, 144, 224}) {  // not widths the template has (72: not an s8 width)
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
    EXPECT_TRUE(c.bn != 96 && c.bn != 160 && c.bn != 192) << "M=" << m << ": " << c;
  }
  EXPECT_EQ(heuristic_default({2560, 4096}, kHopper, 1024).bn, 160);
  EXPECT_EQ(heuristic_default({6144, 4096}, kHopper, 512).bn, 192);
  EXPECT_EQ(heuristic_default({2560, 4096}, kHopper, 4096).bn, 128);
}

namespace {
// "sc2_64x48_s16", ... for every unsplit, unclustered wgmma_tma candidate with bn 48 or 80 and one K tile a
// stage (the 2x1-cluster twins: WgmmaTmaClusters) (the bn-48 ones' split variants: wgmma_tma_splitk_test.cpp; the bk-256 twins:
// WgmmaTmaTwoKTiles below).
std::set<std::string> narrow_shapes(const GemmProblem& p) {
  std::set<std::string> out;
  for (const KernelConfig& c : candidates(p, kHopper))
    if (c.family == Family::wgmma_tma && (c.bn == 48 || c.bn == 80) && c.split_k == 1 && c.bk == 128 &&
        c.cluster_m == 1) {
      EXPECT_EQ(invalid_reason(p, c, kHopper), "") << c;
      EXPECT_EQ(KernelSpec::parse_name(KernelSpec{p, c, "sm_90a"}.name()).config, c);
      out.insert("sc" + std::to_string(c.schedule) + "_" + std::to_string(c.bm) + "x" + std::to_string(c.bn) + "_s" +
                 std::to_string(c.stages));
    }
  return out;
}
}  // namespace

// Offered where the last tile column wastes at most 1/16 of N (2560 = 53.3 x 48: 1.2%; 768 =
// 9.6 x 80: 4.2%), each with as many stages as fit 227 KB (at most 16).
TEST(WgmmaTmaNarrow, OfferedWhereTheLastColumnWastesLittleWithDeepRings) {
  const std::set<std::string> all = {"sc1_128x48_s10", "sc1_128x80_s8", "sc2_64x48_s16", "sc2_64x80_s12"};
  EXPECT_EQ(narrow_shapes({2560, 4096}), all);
  EXPECT_EQ(narrow_shapes({768, 4096}), all);
  EXPECT_EQ(narrow_shapes({6144, 4096}), all);
  // 100 = 2.08 x 48 (44% wasted), 1.25 x 80 (60%): none.
  EXPECT_TRUE(narrow_shapes({100, 4096}).empty());
  // 4200 = 87.5 x 48 (0.6%), 52.5 x 80 (0.95%) with a K tail: both.
  EXPECT_EQ(narrow_shapes({4200, 4080}).size(), 4u);
  // 560 = 11.7 x 48 (2.9%: offered), 7 x 80 (exact).
  EXPECT_EQ(narrow_shapes({560, 4096}).size(), 4u);
  // 136 = 2.8 x 48 (5.9%: offered), 1.7 x 80 (17.6%: not).
  EXPECT_EQ(narrow_shapes({136, 4096}), (std::set<std::string>{"sc1_128x48_s10", "sc2_64x48_s16"}));
}

// The untuned default takes the narrow ping-pong tiles, or cooperative 128x80, where one wave of
// them fills more SMs than 64x64, 128x64 or 64x160 would (session 13 call 4, H200: the tune's
// winners there); since session 30 also cooperative 128x48 (deep ring), fitted to session 29's
// H200 races, where it won 2560 x 4096 M = 256 and 6144 x 4096 M = 128.
TEST(WgmmaTmaNarrow, TheUntunedDefaultTakesANarrowTileWhereItFillsOneWave) {
  EXPECT_EQ(heuristic_default({2560, 4096}, kHopper, 128).bn, 48);
  const KernelConfig m256 = heuristic_default({2560, 4096}, kHopper, 256);
  EXPECT_EQ(m256.bn, 48);
  EXPECT_EQ(m256.schedule, 1) << "cooperative 128x48: 108 tiles";
  EXPECT_EQ(m256.stages, 10) << "its deep ring";
  const KernelConfig m512 = heuristic_default({2560, 4096}, kHopper, 512);
  EXPECT_EQ(m512.bn, 80);
  EXPECT_EQ(m512.schedule, 1) << "cooperative 128x80: 128 tiles";
  EXPECT_EQ(heuristic_default({2560, 4096}, kHopper, 1024).bn, 160) << "one wave of 128x160, not two of 128x80";
  EXPECT_EQ(heuristic_default({768, 4096}, kHopper, 512).bn, 48);
  const KernelConfig q128 = heuristic_default({6144, 4096}, kHopper, 128);
  EXPECT_EQ(q128.bn, 48) << "128x48: one wave of 128 tiles";
  EXPECT_EQ(q128.bm, 128);
  for (const GemmProblem& p : {GemmProblem{2560, 4096}, GemmProblem{6144, 4096}, GemmProblem{768, 4096}})
    for (int64_t m : {64, 128, 256, 512, 1024, 2048, 4096}) {
      const KernelConfig c = heuristic_default(p, kHopper, m);
      if (c.bn == 48) EXPECT_EQ(c.schedule == 2, c.bm == 64) << p.key() << " M=" << m << ": " << c;
    }
}

namespace i8g {
namespace {

// The bk-256 twins (two 128-byte K tiles a stage): one for each ping-pong tile of 64 rows and at
// most 128 columns the shape is offered, with as deep a ring as fits; the untuned default's
// 64-row ping-pong tiles of 48, 64 and 80 columns where K >= 2048 (session 30), no other.
TEST(WgmmaTmaTwoKTiles, TwinsOfThePingPong64RowTilesWithDeepRings) {
  const GemmProblem p{2560, 4096};
  std::set<std::string> twins;
  for (const KernelConfig& c : candidates(p, kHopper)) {
    if (c.family != Family::wgmma_tma || c.bk == 128) continue;
    EXPECT_EQ(c.bk, 256) << c;
    EXPECT_EQ(invalid_reason(p, c, kHopper), "") << c;
    EXPECT_EQ(KernelSpec::parse_name(KernelSpec{p, c, "sm_90a"}.name()).config, c);
    const int stage = (c.bm + c.bn) * 256;
    EXPECT_EQ(c.stages, std::min(16, (kHopper.smem_per_block_optin - 1024 - 16) / (stage + 16))) << c;
    EXPECT_LE(int(launch_shape({p, c, "sm_90a"}, 64).dynamic_smem), kHopper.smem_per_block_optin) << c;
    bool has_twin = false;
    for (const KernelConfig& o : candidates(p, kHopper))
      has_twin = has_twin || (o.family == c.family && o.bk == 128 && o.bm == c.bm && o.bn == c.bn &&
                              o.schedule == c.schedule && o.split_k == 1 && o.cluster_m == 1);
    EXPECT_TRUE(has_twin) << c << ": a twin of an offered one-K-tile config";
    twins.insert("sc" + std::to_string(c.schedule) + "_" + std::to_string(c.bm) + "x" + std::to_string(c.bn) + "_s" +
                 std::to_string(c.stages));
  }
  EXPECT_EQ(twins, (std::set<std::string>{"sc2_64x48_s8", "sc2_64x64_s7", "sc2_64x80_s6", "sc2_64x128_s4"}));
  for (const GemmProblem& q : {p, GemmProblem{4096, 2048}, GemmProblem{4096, 1920}, GemmProblem{4096, 384}})
    for (int64_t m : {33, 64, 128, 256, 1024, 4096}) {
      const KernelConfig c = heuristic_default(q, kHopper, m);
      const bool twin = q.k >= 2048 && c.schedule == 2 && c.bm == 64 && c.bn <= 80;
      EXPECT_EQ(c.bk, twin ? 256 : 128) << q.key() << " M=" << m << ": " << c;
    }
  EXPECT_EQ(heuristic_default(p, kHopper, 64).bk, 256) << "64x48 at M = 64";
  EXPECT_EQ(heuristic_default(GemmProblem{4096, 384}, kHopper, 64).bk, 128) << "K = 384: one K tile a stage";
  KernelConfig bad;
  for (const KernelConfig& c : candidates(p, kHopper))
    if (c.family == Family::wgmma_tma) bad = c;
  bad.bk = 384;
  EXPECT_NE(invalid_reason(p, bad, kHopper).find("one or two 128-byte K tiles"), std::string::npos);
  // Only where it ran: not with a cluster, a K pair, split-K or the staged store.
  for (const KernelConfig& c : candidates(p, kHopper)) {
    if (c.family != Family::wgmma_tma || c.bk != 256) continue;
    for (int f = 0; f < 4; ++f) {
      KernelConfig v = c;
      (f == 0 ? v.cluster_m : f == 1 ? v.cluster_k : f == 2 ? v.split_k : v.epilogue_store) = f == 3 ? 1 : 2;
      EXPECT_NE(invalid_reason(p, v, kHopper).find("two K tiles a stage are for unclustered"), std::string::npos) << v;
    }
  }
}

}  // namespace
}  // namespace i8g

// wgmma_tma's tile-order twins: ping-pong 128x128's raster twin (raster_group, "_rg1") always,
// and with Target::experimental_tile_order (`tune --experimental-tile-order`) the raster twins of
// the other large tiles, L2 eviction hints on the operand loads
// (l2_hint, "_lh1" x evict_last, "_lh2" w evict_first, "_lh3" both) and the ping-pong 128x128
// dynamic schedule ("_ds1"): which configs get them, where they race, what the emitted source
// asks of the template, why a bad one is refused, and that the untuned default takes none.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "core/error.hpp"
#include "generator/generator.hpp"

using namespace i8g;

namespace {

const Target kHopper = Target::from_arch("sm_90a");

Target with_order() {
  Target t = kHopper;
  t.experimental_tile_order = true;
  return t;
}

// "sc2_128x128_cm1_rg1": the twin's base tile and what it changes.
std::string label(const KernelConfig& c) {
  std::string s = "sc" + std::to_string(c.schedule) + "_" + std::to_string(c.bm) + "x" + std::to_string(c.bn) +
                  "_cm" + std::to_string(c.cluster_m);
  if (c.raster_group) s += "_rg" + std::to_string(c.raster_group);
  if (c.l2_hint) s += "_lh" + std::to_string(c.l2_hint);
  if (c.dynamic_schedule) s += "_ds1";
  return s;
}

int64_t tiles(const GemmProblem& p, const KernelConfig& c, int64_t m) {
  return ((m + c.bm - 1) / c.bm) * ((p.n + c.bn - 1) / c.bn);
}

}  // namespace

// Without the flag: only ping-pong 128x128's raster twins, unclustered and (where its 2x1 cluster is
// offered) clustered.
TEST(WgmmaTmaOrder, WithoutTheFlagOnlyThePingPongRasterTwins) {
  for (const GemmProblem& p : {GemmProblem{4096, 4096}, GemmProblem{28672, 4096}, GemmProblem{768, 4096}}) {
    std::set<std::string> got, want = {"sc2_128x128_cm1_rg1"};
    for (const KernelConfig& c : candidates(p, kHopper)) {
      if (tile_order_twin(c))
        EXPECT_TRUE(got.insert(label(c)).second) << KernelSpec{p, c, "sm_90a"}.name();
      else if (label(c) == "sc2_128x128_cm2")
        want.insert("sc2_128x128_cm2_rg1");
    }
    EXPECT_EQ(got, want) << p.key();
  }
  // The square weight offers the cluster, so it has both twins.
  int clustered = 0;
  for (const KernelConfig& c : candidates(GemmProblem{4096, 4096}, kHopper))
    clustered += tile_order_twin(c) && c.cluster_m == 2;
  EXPECT_EQ(clustered, 1);
}

// The clustered raster twin races where M >= N and tiles outnumber the SMs (CUTLASS's order there;
// session 43 on the H100: ahead of its cm2 twin at 4096 x 4096 and 2560 x 4096 M = 4096, behind
// where M < N).
TEST(WgmmaTmaOrder, TheClusteredRasterTwinRacesWhereMReachesN) {
  const KernelConfig c = KernelConfig::parse(Family::wgmma_tma, "bm128_bn128_bk128_wg2_s7_sc2_sk1_cm2_rg1");
  for (const GemmProblem& p : {GemmProblem{4096, 4096}, GemmProblem{2560, 4096}, GemmProblem{6144, 4096}})
    for (int64_t m : {128, 1024, 2560, 4096, 8192}) {
      const KernelSpec s{p, c, kHopper.arch};
      EXPECT_EQ(raced_at(s, m), m >= p.n && tiles(p, c, m) > kHopper.sm_count) << s.name() << " M=" << m;
    }
  EXPECT_TRUE(raced_at({GemmProblem{4096, 4096}, c, kHopper.arch}, 4096));
  EXPECT_FALSE(raced_at({GemmProblem{6144, 4096}, c, kHopper.arch}, 4096));
  EXPECT_FALSE(raced_at({GemmProblem{2560, 4096}, c, kHopper.arch}, 1024));  // M < N
}

// The raster twin races where M < N with at most 8 tile rows and more tiles than SMs: 28672 x 4096
// at M = 128 to 1024 (224 tiles and more), not at 4096 (32 tile rows); 4096 x 4096 not at M = N.
TEST(WgmmaTmaOrder, TheRasterTwinRacesWhereFewTileRowsMeetManyColumns) {
  const GemmProblem wide{28672, 4096}, square{4096, 4096}, narrow{2560, 4096};
  for (const GemmProblem& p : {wide, square, narrow})
    for (const KernelConfig& c : candidates(p, kHopper)) {
      if (c.raster_group == 0 || c.cluster_m > 1) continue;  // cm2: TheClusteredRasterTwinRacesWhereMReachesN
      const KernelSpec s{p, c, kHopper.arch};
      for (int64_t m : {1, 128, 256, 1024, 1025, 4096})
        EXPECT_EQ(raced_at(s, m), m < p.n && (m + 127) / 128 <= 8 && tiles(p, c, m) > kHopper.sm_count)
            << s.name() << " M=" << m;
    }
  const KernelSpec s{wide, KernelConfig::parse(Family::wgmma_tma, "bm128_bn128_bk128_wg2_s7_sc2_sk1_rg1"), "sm_90a"};
  EXPECT_TRUE(raced_at(s, 128));
  EXPECT_TRUE(raced_at(s, 1024));
  EXPECT_FALSE(raced_at(s, 1025));  // 9 tile rows
  EXPECT_FALSE(raced_at(s, 4096));
  EXPECT_FALSE(raced_at({square, s.config, "sm_90a"}, 4096));  // M = N
}

// Ping-pong 128x128 (and its cm2), cooperative 256x128 (and its cm2) and 128x256: the raster group
// of 1 and the three hints for each, the dynamic schedule for the unclustered ping-pong one; each the same ring as its base tile (the dynamic twin at most that), raced past one wave.
TEST(WgmmaTmaOrder, TwinsOfTheLargeTilesRacedPastOneWave) {
  std::set<std::string> want;
  for (const char* tile : {"sc2_128x128_cm1", "sc2_128x128_cm2", "sc1_256x128_cm1", "sc1_256x128_cm2", "sc1_128x256_cm1"})
    for (const char* twin : {"_rg1", "_lh1", "_lh2", "_lh3"}) want.insert(std::string(tile) + twin);
  want.insert("sc2_128x128_cm1_ds1");
  for (const GemmProblem& p : {GemmProblem{4096, 4096}, GemmProblem{28672, 4096}, GemmProblem{1000, 4080}}) {
    const std::vector<KernelConfig> all = candidates(p, with_order());
    std::set<std::string> got;
    for (const KernelConfig& c : all) {
      if (!tile_order_twin(c)) continue;
      const KernelSpec s{p, c, kHopper.arch};
      EXPECT_TRUE(got.insert(label(c)).second) << s.name() << ": twice";
      EXPECT_EQ(KernelSpec::parse_name(s.name()), s) << s.name();
      EXPECT_EQ(invalid_reason(p, c, kHopper), "") << s.name();
      KernelConfig base = c;
      base.raster_group = base.l2_hint = base.dynamic_schedule = 0;
      bool found = false;
      for (const KernelConfig& o : all) {
        KernelConfig b = base;
        if (c.dynamic_schedule) b.stages = o.stages;  // the id ring may cost the dynamic twin a stage
        found = found || (o == b && o.stages >= c.stages);
      }
      EXPECT_TRUE(found) << s.name() << ": the twin of an offered config with its ring (or less, _ds1)";
      // The ping-pong raster twins: TheRasterTwinRacesWhereFewTileRowsMeetManyColumns and
      // TheClusteredRasterTwinRacesWhereMReachesN.
      if (c.raster_group && c.schedule == 2) continue;
      for (int64_t m : {1, 128, 1024, 4096, 16384})
        EXPECT_EQ(raced_at(s, m), tiles(p, c, m) > kHopper.sm_count) << s.name() << " M=" << m;
    }
    EXPECT_EQ(got, want) << p.key();
  }
}

// The template gets the group (0 stays the family's 8) and the hint bits as written.
TEST(WgmmaTmaOrder, TheSourceCarriesTheGroupAndTheHints) {
  const GemmProblem p{28672, 4096};
  int seen = 0;
  for (const KernelConfig& c : candidates(p, with_order())) {
    if (c.schedule != 2 || c.bm != 128 || c.bn != 128 || c.cluster_m != 1 || c.dynamic_schedule || c.split_k != 1 ||
        c.epilogue_store || c.bk != 128)
      continue;
    const std::string code = emit(KernelSpec{p, c, kHopper.arch}).code;
    const std::string group = std::to_string(c.raster_group ? c.raster_group : 8) + " /*GROUP_M*/";
    EXPECT_NE(code.find(group), std::string::npos) << code;
    EXPECT_NE(code.find(std::to_string(c.l2_hint) + " /*L2H*/"), std::string::npos) << code;
    ++seen;
  }
  EXPECT_EQ(seen, 5);  // the plain tile, rg1, lh1, lh2, lh3
}

TEST(WgmmaTmaOrder, BadGroupsAndHintsAreRefused) {
  const GemmProblem p{4096, 4096};
  KernelConfig c = heuristic_default(p, kHopper, 4096);
  ASSERT_EQ(c.family, Family::wgmma_tma);
  ASSERT_EQ(invalid_reason(p, c, kHopper), "");
  for (int g : {3, 8, 32, -1}) {
    KernelConfig v = c;
    v.raster_group = g;
    EXPECT_NE(invalid_reason(p, v, kHopper).find("raster_group=" + std::to_string(g)), std::string::npos) << g;
  }
  for (int h : {4, -1}) {
    KernelConfig v = c;
    v.l2_hint = h;
    EXPECT_NE(invalid_reason(p, v, kHopper).find("l2_hint=" + std::to_string(h)), std::string::npos) << h;
  }
  KernelConfig clustered = c;
  clustered.cluster_m = 2;
  clustered.l2_hint = 3;  // the w multicast takes the hint too
  EXPECT_EQ(invalid_reason(p, clustered, kHopper), "");
  KernelConfig packed = c;
  packed.packed_weight = 1;
  ASSERT_EQ(invalid_reason(p, packed, kHopper), "");
  packed.l2_hint = 2;
  EXPECT_NE(invalid_reason(p, packed, kHopper).find("l2_hint with cluster_k=1, packed_weight=1"), std::string::npos);
  // Names carry the fields only where they differ from 0.
  EXPECT_THROW(KernelConfig::parse(Family::wgmma_tma, "bm128_bn128_bk128_wg2_s7_sc2_sk1_rg0"), Error);
  EXPECT_THROW(KernelConfig::parse(Family::wgmma_tma, "bm128_bn128_bk128_wg2_s7_sc2_sk1_lh0"), Error);
  const KernelConfig both = KernelConfig::parse(Family::wgmma_tma, "bm128_bn128_bk128_wg2_s7_sc2_sk1_rg16_lh3");
  EXPECT_EQ(both.raster_group, 16);
  EXPECT_EQ(both.l2_hint, 3);
  // Other families do not use them.
  KernelConfig mma = heuristic_default(p, Target::from_arch("sm_80"), 4096);
  mma.raster_group = 1;
  EXPECT_NE(invalid_reason(p, mma, Target::from_arch("sm_80")).find("raster_group"), std::string::npos);
}

TEST(WgmmaTmaOrder, TheUntunedDefaultNeverTakesThem) {
  for (const GemmProblem& p : {GemmProblem{4096, 4096}, GemmProblem{28672, 4096}, GemmProblem{4096, 384}})
    for (int64_t m : {17, 256, 1024, 4096, 16384}) {
      const KernelConfig c = heuristic_default(p, with_order(), m);
      EXPECT_FALSE(tile_order_twin(c)) << p.key() << " M=" << m;
    }
}

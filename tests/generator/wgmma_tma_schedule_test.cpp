// wgmma_tma's dynamic schedule (dynamic_schedule = 1, names ending "_ds1"; templates/wgmma_tma.cuh):
// which configs get a twin, where they race, what they ask of shared memory and the workspace,
// why a dynamic config is refused, and that the untuned default never takes one.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "core/error.hpp"
#include "generator/generator.hpp"

using namespace i8g;

namespace {

const Target kHopper = Target::from_arch("sm_90a");

std::vector<KernelConfig> dynamic_of(const GemmProblem& p) {
  std::vector<KernelConfig> out;
  for (const KernelConfig& c : candidates(p, kHopper))
    if (c.family == Family::wgmma_tma && c.dynamic_schedule) out.push_back(c);
  return out;
}

std::string shape(const KernelConfig& c) {
  return "sc" + std::to_string(c.schedule) + "_" + std::to_string(c.bm) + "x" + std::to_string(c.bn);
}

int64_t tiles(const GemmProblem& p, const KernelConfig& c, int64_t m) {
  return ((m + c.bm - 1) / c.bm) * ((p.n + c.bn - 1) / c.bn);
}

}  // namespace

// The large cooperative tiles (128x256 and 256x128), unclustered with register stores, each with
// its plain ring (or as many stages as fit beside the id ring), raced only where their tiles
// outnumber the SMs. Not the ping-pong tiles: 128x128's twin ran 1.06-1.30x its static time on
// the H100 (session 33).
TEST(WgmmaTmaSchedule, TwinsOfTheLargeCooperativeTilesRacedPastOneWave) {
  for (const GemmProblem& p : {GemmProblem{4096, 4096}, GemmProblem{28672, 4096}, GemmProblem{1000, 4080}}) {
    const std::vector<KernelConfig> all = candidates(p, kHopper);
    std::set<std::string> got;
    for (const KernelConfig& c : dynamic_of(p)) {
      const KernelSpec s{p, c, kHopper.arch};
      got.insert(shape(c));
      EXPECT_EQ(s.name().substr(s.name().size() - 4), "_ds1") << s.name();
      EXPECT_EQ(KernelSpec::parse_name(s.name()), s) << s.name();
      EXPECT_EQ(c.cluster_m, 1) << s.name();
      EXPECT_EQ(c.split_k, 1) << s.name();
      EXPECT_EQ(c.epilogue_store, 0) << s.name();
      const auto twin = std::find_if(all.begin(), all.end(), [&](const KernelConfig& o) {
        return o.family == c.family && o.schedule == c.schedule && o.bm == c.bm && o.bn == c.bn && o.bk == c.bk &&
               o.cluster_m == 1 && o.epilogue_store == 0 && o.dynamic_schedule == 0 && o.split_k == 1;
      });
      ASSERT_NE(twin, all.end()) << s.name() << ": the twin of an offered config";
      EXPECT_LE(c.stages, twin->stages) << s.name();
      EXPECT_LE(int(launch_shape(s, 4096).dynamic_smem), kHopper.smem_per_block_optin) << s.name();
      // One block of 32 counter words, whatever M; cleared for a caller's workspace.
      EXPECT_EQ(workspace_bytes(s, 1), 128u) << s.name();
      EXPECT_EQ(workspace_bytes(s, 8192), 128u) << s.name();
      EXPECT_EQ(splitk_counters(s, 4096).blocks, 1) << s.name();
      for (int64_t m : {1, 128, 1024, 4096, 16384})
        EXPECT_EQ(raced_at(s, m), tiles(p, c, m) > kHopper.sm_count) << s.name() << " M=" << m;
    }
    EXPECT_EQ(got, (std::set<std::string>{"sc1_128x256", "sc1_256x128"})) << p.key();
  }
  // N = 100: bn 256 is past the padded N (128), so only the 128-wide tile.
  std::set<std::string> got;
  for (const KernelConfig& c : dynamic_of({100, 4096})) got.insert(shape(c));
  EXPECT_EQ(got, (std::set<std::string>{"sc1_256x128"}));
}

TEST(WgmmaTmaSchedule, RefusedWithClustersSplitsPairsOrAPackedWeight) {
  const GemmProblem p{4096, 4096};
  KernelConfig c = dynamic_of(p).front();
  EXPECT_EQ(invalid_reason(p, c, kHopper), "");
  for (int f = 0; f < 4; ++f) {
    KernelConfig v = c;
    (f == 0 ? v.cluster_m : f == 1 ? v.cluster_k : f == 2 ? v.split_k : v.packed_weight) = f == 3 ? 1 : 2;
    EXPECT_NE(invalid_reason(p, v, kHopper).find("dynamic_schedule"), std::string::npos) << v;
  }
  KernelConfig bad = c;
  bad.dynamic_schedule = 2;
  EXPECT_NE(invalid_reason(p, bad, kHopper).find("dynamic_schedule=2"), std::string::npos);
  // Names: "_ds1" only where it is 1; "_ds0" is not a name.
  EXPECT_THROW(KernelConfig::parse(Family::wgmma_tma, "bm128_bn128_bk128_wg2_s7_sc2_sk1_ds0"), Error);
  EXPECT_EQ(KernelConfig::parse(Family::wgmma_tma, "bm128_bn128_bk128_wg2_s7_sc2_sk1_ds1").dynamic_schedule, 1);
  // Other families do not use the field.
  KernelConfig mma = heuristic_default(p, Target::from_arch("sm_80"), 4096);
  mma.dynamic_schedule = 1;
  EXPECT_NE(invalid_reason(p, mma, Target::from_arch("sm_80")).find("dynamic_schedule"), std::string::npos);
}

TEST(WgmmaTmaSchedule, TheUntunedDefaultNeverTakesIt) {
  for (const GemmProblem& p : {GemmProblem{4096, 4096}, GemmProblem{6144, 4096}, GemmProblem{4096, 384}})
    for (int64_t m : {17, 256, 1024, 4096, 16384})
      EXPECT_EQ(heuristic_default(p, kHopper, m).dynamic_schedule, 0) << p.key() << " M=" << m;
}

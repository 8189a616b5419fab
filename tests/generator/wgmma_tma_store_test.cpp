// The staged store in the wgmma_tma family's generator rules (epilogue_store = 1,
// templates/tma_store.cuh): which configs get a staged twin (ping-pong 128x128 and 64x256, with
// and without cm2, for 2-byte outputs and N a multiple of 8; where K is short every ping-pong tile
// up to 128x128 of whole 64-column panels), their rings beside the two staging
// buffers, why a staged config is refused, the names, the output box, and that the untuned
// default never takes one.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "core/error.hpp"
#include "generator/generator.hpp"

using namespace i8g;

namespace {

// Where K is long the staged twins are offered only with the experimental flag (exact on the
// H200, not faster there); where it is short (<= 8 K tiles), without it.
const Target kHopper = [] {
  Target t = Target::from_arch("sm_90a");
  t.experimental_staged_store = true;
  return t;
}();

std::vector<KernelConfig> staged_of(const GemmProblem& p, const Target& t = kHopper) {
  std::vector<KernelConfig> out;
  for (const KernelConfig& c : candidates(p, t))
    if (c.family == Family::wgmma_tma && c.epilogue_store) out.push_back(c);
  return out;
}

GemmProblem problem(int64_t n, int64_t k, OutType out = OutType::bf16) {
  GemmProblem p{n, k};
  p.out = out;
  return p;
}

}  // namespace

TEST(WgmmaTmaStore, TwinsOfTwoPingPongTilesWithAndWithoutClusters) {
  for (const GemmProblem& p : {problem(2560, 4096), problem(8192, 8192), problem(1000, 4080, OutType::f16)}) {
    std::set<std::string> got;
    for (const KernelConfig& c : staged_of(p)) {
      const KernelSpec s{p, c, "sm_90a"};
      got.insert(std::to_string(c.bm) + "x" + std::to_string(c.bn) + (c.cluster_m > 1 ? " cm2" : ""));
      EXPECT_EQ(c.schedule, 2) << s.name();
      EXPECT_EQ(c.split_k, 1) << s.name();
      EXPECT_EQ(c.cluster_k, 1) << s.name();
      EXPECT_EQ(s.name().substr(s.name().size() - 4), "_es1") << s.name();
      EXPECT_EQ(KernelSpec::parse_name(s.name()), s) << s.name();
      // The ring gives way to two buffers of the consumer's rows x bn 2-byte outputs.
      KernelConfig twin = c;
      twin.epilogue_store = 0;
      const int smem = int(launch_shape(s, 4096).dynamic_smem);
      KernelConfig same_ring = twin;
      same_ring.stages = c.stages;
      EXPECT_EQ(smem - int(launch_shape({p, same_ring, "sm_90a"}, 4096).dynamic_smem), 2 * c.bm * c.bn * 2)
          << s.name();
      EXPECT_LE(smem, kHopper.smem_per_block_optin) << s.name();
      EXPECT_EQ(c.stages, c.bm == 128 ? 5 : 4) << s.name() << ": as many stages as fit beside the buffers";
      EXPECT_EQ(tma_box_rows(c, 4096).out, c.bm) << s.name() << ": a ping-pong consumer's rows";
      EXPECT_EQ(tma_box_rows(twin, 4096).out, 0) << s.name() << ": no output map without the staged store";
    }
    EXPECT_EQ(got, (std::set<std::string>{"128x128", "128x128 cm2", "64x256", "64x256 cm2"})) << p.key();
  }
}

// Where K is short (at most 8 K tiles of 128; 4096 x 384 has 3), every unclustered ping-pong tile
// of up to 128 x 128 with whole 64-column panels gets a staged twin as well (session 32): its ring
// has more stages than a tile has K tiles, and the output is most of such a shape's traffic; and
// all of them without the experimental flag (session 33).
TEST(WgmmaTmaStore, ShortKGivesEveryPingPongTileOfWholePanelsATwin) {
  const GemmProblem p = problem(4096, 384);
  std::set<std::string> got;
  for (const KernelConfig& c : staged_of(p)) {
    const KernelSpec s{p, c, "sm_90a"};
    got.insert(std::to_string(c.bm) + "x" + std::to_string(c.bn) + (c.cluster_m > 1 ? " cm2" : ""));
    EXPECT_EQ(c.schedule, 2) << s.name();
    EXPECT_EQ(KernelSpec::parse_name(s.name()), s) << s.name();
    EXPECT_EQ(invalid_reason(p, c, kHopper), "") << s.name();
    EXPECT_LE(int(launch_shape(s, 4096).dynamic_smem), kHopper.smem_per_block_optin) << s.name();
    EXPECT_GE(c.stages, 3) << s.name() << ": at least a tile's three K tiles in the ring";
  }
  EXPECT_EQ(got, (std::set<std::string>{"64x64", "64x128", "128x64", "128x128", "128x128 cm2", "64x256",
                                        "64x256 cm2"}));
  // Where K is short they are offered without the experimental flag (session 33: the staged
  // 128x128 won 4096 x 384 M = 4096 by 1.18x on the H200).
  EXPECT_EQ(staged_of(p, Target::from_arch("sm_90a")), staged_of(p)) << "offered without the flag";
  // K = 1024 (8 K tiles) still short; K = 1152 (9) not.
  EXPECT_EQ(staged_of(problem(4096, 1024)).size(), 7u);
  EXPECT_EQ(staged_of(problem(4096, 1152)).size(), 4u);
}

TEST(WgmmaTmaStore, OfferedOnlyWithTheExperimentalFlagAndAddingNothingElse) {
  for (const GemmProblem& p : {problem(2560, 4096), problem(768, 4096)}) {
    const Target plain = Target::from_arch("sm_90a");
    EXPECT_TRUE(staged_of(p, plain).empty()) << p.key();
    std::vector<KernelConfig> with = candidates(p, kHopper), without;
    for (const KernelConfig& c : with)
      if (c.epilogue_store == 0) without.push_back(c);
    EXPECT_EQ(without, candidates(p, plain)) << p.key() << ": the flag only adds the staged twins";
    EXPECT_EQ(with.size() - without.size(), 4u) << p.key();
  }
}

TEST(WgmmaTmaStore, NoneForFourByteOutputsOrARowStrideOffSixteenBytes) {
  EXPECT_TRUE(staged_of(problem(2560, 4096, OutType::f32)).empty());
  EXPECT_TRUE(staged_of(problem(2560, 4096, OutType::i32)).empty());
  EXPECT_TRUE(staged_of(problem(1004, 4096)).empty()) << "N = 1004: 2008-byte rows";
}

TEST(WgmmaTmaStore, RefusalsSayWhy) {
  const GemmProblem p = problem(2560, 4096);
  KernelConfig c;
  for (const KernelConfig& s : staged_of(p))
    if (s.cluster_m == 1 && s.bm == 128) c = s;
  ASSERT_EQ(c.epilogue_store, 1);
  ASSERT_EQ(invalid_reason(p, c, kHopper), "");
  auto refused = [&](const GemmProblem& q, KernelConfig x, const char* says) {
    const std::string why = invalid_reason(q, x, kHopper);
    EXPECT_NE(why.find(says), std::string::npos) << x.to_string() << ": '" << why << "'";
  };
  refused(problem(2560, 4096, OutType::f32), c, "bf16 and f16");
  refused(problem(1004, 4096), c, "multiple of 16");
  KernelConfig x = c;
  x.epilogue_store = 2;
  refused(p, x, "need 0 or 1");
  x = c;
  x.bm = 64;
  x.bn = 80;
  refused(p, x, "panels of 64 columns");
  x = c;
  x.bm = 64;
  x.bn = 64;
  x.split_k = 2;
  refused(p, x, "split tiles store from registers");
  x = c;
  x.stages = 7;  // the twin's ring beside two 32 KiB buffers: past 227 KiB
  refused(p, x, "shared memory");
  // Other families never take the field.
  KernelConfig mma = heuristic_default(p, Target::from_arch("sm_80"), 256);
  mma.epilogue_store = 1;
  EXPECT_NE(invalid_reason(p, mma, Target::from_arch("sm_80")).find("epilogue_store"), std::string::npos);
  // A name that spells out the default is refused, as for the clusters.
  EXPECT_THROW(KernelConfig::parse(Family::wgmma_tma, "bm128_bn128_bk128_wg2_s7_sc2_sk1_es0"), Error);
}

TEST(WgmmaTmaStore, TheUntunedDefaultStagesOnlyWhereKIsShortFromM1024) {
  for (const GemmProblem& p : {problem(2560, 4096), problem(8192, 8192), problem(6144, 4096), problem(768, 4096)})
    for (int64_t m : {17, 64, 128, 256, 1024, 4096, 16384})
      EXPECT_EQ(heuristic_default(p, kHopper, m).epilogue_store, 0) << p.key() << " M=" << m;
  // K = 384 (3 K tiles): the picked tile's staged twin from M = 1024, the register store below;
  // the same with or without the experimental flag.
  for (const Target& t : {kHopper, Target::from_arch("sm_90a")}) {
    const GemmProblem p = problem(4096, 384);
    const std::vector<KernelConfig> all = candidates(p, t);
    for (int64_t m : {17, 64, 256, 1023})
      EXPECT_EQ(heuristic_default(p, t, m).epilogue_store, 0) << "M=" << m;
    for (int64_t m : {1024, 4096, 16384}) {
      const KernelConfig c = heuristic_default(p, t, m);
      EXPECT_EQ(c.family, Family::wgmma_tma) << "M=" << m;
      EXPECT_EQ(c.epilogue_store, 1) << "M=" << m << ": " << c;
      EXPECT_NE(std::find(all.begin(), all.end(), c), all.end()) << c << ": a candidate";
    }
    EXPECT_EQ(heuristic_default(p, t, 4096).to_string(), "bm128_bn128_bk128_wg2_s5_sc2_sk1_es1");
    // Four-byte outputs have no staged twin: the register store serves them at every M.
    EXPECT_EQ(heuristic_default(problem(4096, 384, OutType::f32), t, 4096).epilogue_store, 0);
  }
}

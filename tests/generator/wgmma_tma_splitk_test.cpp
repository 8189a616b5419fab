// Split-K in the wgmma_tma family's generator rules: which configs get split variants (three tile
// shapes, tiles at M = 128 fewer than the SMs, at most two splits each within two waves of
// units, >= 2 K tiles per slice), why a split is refused, the names, the persistent grid over
// work units and the workspace sizes (templates/splitk.h); the untuned default stays unsplit.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "generator/generator.hpp"

using namespace i8g;

namespace {

const Target kHopper = Target::from_arch("sm_90a");  // 132 SMs

std::vector<KernelConfig> tma_of(const GemmProblem& p, const Target& t = kHopper) {
  std::vector<KernelConfig> out;
  for (const KernelConfig& c : candidates(p, t))
    if (c.family == Family::wgmma_tma) out.push_back(c);
  return out;
}

// "sc2 64x128" -> the splits offered for that shape, in candidate order.
std::map<std::string, std::vector<int>> splits_by_shape(const GemmProblem& p) {
  std::map<std::string, std::vector<int>> out;
  for (const KernelConfig& c : tma_of(p))
    if (c.split_k > 1) out["sc" + std::to_string(c.schedule) + " " + std::to_string(c.bm) + "x" + std::to_string(c.bn)]
                           .push_back(c.split_k);
  return out;
}

int64_t tiles(const GemmProblem& p, const KernelConfig& c, int64_t m) {
  return ((m + c.bm - 1) / c.bm) * ((p.n + c.bn - 1) / c.bn);
}

}  // namespace

// 2560 x 4096 at M = 128 (issue 12): 80, 40 and 20 tiles for the three shapes; the splits whose
// last wave of units is fullest within two waves of 132 SMs (ties: the smaller split).
TEST(WgmmaTmaSplitK, TheThreeShapesGetTheSplitsThatFillTheSms) {
  const std::map<std::string, std::vector<int>> want = {
      {"sc2 64x64", {3, 2}},     // 240 units (0.91 of two waves), 160
      {"sc2 64x128", {3, 6}},    // 120 units (0.91 of one wave), 240
      {"sc1 128x128", {6, 12}},  // 120, 240
  };
  EXPECT_EQ(splits_by_shape({2560, 4096}), want);
  const std::map<std::string, std::vector<int>> tp4_4096x2048 = {
      {"sc2 64x64", {2}}, {"sc2 64x128", {2, 4}}, {"sc1 128x128", {4, 8}}};
  EXPECT_EQ(splits_by_shape({4096, 2048}), tp4_4096x2048);
}

TEST(WgmmaTmaSplitK, EverySplitCandidateFollowsTheRule) {
  for (const GemmProblem& p : {GemmProblem{2560, 4096}, GemmProblem{4096, 2048}, GemmProblem{768, 4096},
                               GemmProblem{1000, 4080}, GemmProblem{6144, 4096}}) {
    const std::vector<KernelConfig> cs = tma_of(p);
    size_t unsplit = 0, split = 0;
    for (const KernelConfig& c : cs) {
      if (c.split_k == 1) {
        EXPECT_EQ(split, 0u) << c << ": split variants come after every unsplit config";
        ++unsplit;
        continue;
      }
      ++split;
      const KernelSpec s{p, c, kHopper.arch};
      EXPECT_TRUE((c.schedule == 2 && c.bm == 64 && c.bn <= 128) || (c.schedule == 1 && c.bm == 128 && c.bn == 128))
          << s.name();
      const int64_t ktiles = (p.k + 127) / 128;
      EXPECT_GE(ktiles / c.split_k, 2) << s.name() << ": every slice keeps two K tiles";
      EXPECT_LT(tiles(p, c, 128), kHopper.sm_count) << s.name();
      EXPECT_LE(tiles(p, c, 128) * c.split_k, 2 * kHopper.sm_count) << s.name();
      EXPECT_NE(s.name().find("_sk" + std::to_string(c.split_k)), std::string::npos) << s.name();
      EXPECT_EQ(KernelSpec::parse_name(s.name()), s);
      EXPECT_EQ(invalid_reason(p, c, kHopper), "") << s.name();
      KernelConfig twin = c;
      twin.split_k = 1;
      EXPECT_NE(std::find(cs.begin(), cs.end(), twin), cs.end()) << s.name() << ": a split of an offered config";
    }
    EXPECT_LE(split, 6u) << p.key();
    EXPECT_LE(unsplit, 25u) << p.key() << ": 9 plain + 6 wide + 4 narrow + 3 as 2x1 clusters + 3 deep";
  }
  // 6144 x 4096: the 64 x 64 ping-pong tiles fill the SMs at M = 128 (192 tiles): no split.
  EXPECT_EQ(splits_by_shape({6144, 4096}).count("sc2 64x64"), 0u);
  // Three K tiles cannot give two slices two each; wide N fills the SMs with tiles.
  EXPECT_TRUE(splits_by_shape({4096, 384}).empty());
  EXPECT_TRUE(splits_by_shape({32768, 4096}).empty());
}

TEST(WgmmaTmaSplitK, InvalidReasonRefusesEmptySlicesAndTooManySplits) {
  const GemmProblem p{2560, 512};  // four K tiles
  KernelConfig c = tma_of(p).front();
  for (int s : {2, 3, 4}) {
    c.split_k = s;
    EXPECT_EQ(invalid_reason(p, c, kHopper), "") << c;
  }
  c.split_k = 5;
  EXPECT_NE(invalid_reason(p, c, kHopper).find("without K tiles"), std::string::npos) << invalid_reason(p, c, kHopper);
  c.split_k = 17;
  EXPECT_NE(invalid_reason({2560, 4096}, c, kHopper).find("split_k=17"), std::string::npos);
  c.split_k = 0;
  EXPECT_NE(invalid_reason({2560, 4096}, c, kHopper).find("split_k=0"), std::string::npos);
}

TEST(WgmmaTmaSplitK, PersistentGridOverUnitsAndWorkspacePerTile) {
  const GemmProblem p{1000, 4080};  // N and K tails
  for (const KernelConfig& c : tma_of(p)) {
    if (c.cluster_m > 1) continue;  // clusters: WgmmaTmaClusters.LaunchShapeCountsClustersOfUnits
    const KernelSpec s{p, c, kHopper.arch};
    for (int64_t m : {int64_t(1), int64_t(77), int64_t(128), int64_t(3000)}) {
      const int64_t n = tiles(p, c, m);
      EXPECT_EQ(int64_t(launch_shape(s, m, 132).grid[0]), std::min<int64_t>(n * c.split_k, 132)) << s.name();
      EXPECT_EQ(int64_t(launch_shape(s, m).grid[0]), std::min<int64_t>(n * c.split_k, 65535)) << s.name();
      // Per tile: 32 counter words (one per consumer half in use), one bm x bn int32 partial per slice.
      const size_t want = c.split_k == 1 ? 0 : size_t(4 * n * (32 + int64_t(c.split_k) * c.bm * c.bn));
      EXPECT_EQ(workspace_bytes(s, m), want) << s.name() << " M=" << m;
      // The counters a launch into a caller's workspace clears: 32 words at the head of each tile.
      const SplitKCounters sk = splitk_counters(s, m);
      EXPECT_EQ(sk.blocks, c.split_k == 1 ? 0 : n) << s.name() << " M=" << m;
      if (c.split_k > 1) {
        EXPECT_EQ(sk.blocks * int64_t(sk.pitch), int64_t(want)) << s.name();
      }
    }
  }
}

TEST(WgmmaTmaSplitK, TheUntunedDefaultDoesNotSplit) {
  for (const GemmProblem& p : {GemmProblem{2560, 4096}, GemmProblem{768, 4096}, GemmProblem{4096, 2048}})
    for (int64_t m : {64, 128, 256, 4096}) {
      EXPECT_EQ(heuristic_default(p, kHopper, m).split_k, 1) << p.key() << " M=" << m;
      EXPECT_EQ(heuristic_default(p, kHopper, m, Family::wgmma_tma).split_k, 1) << p.key() << " M=" << m;
    }
}

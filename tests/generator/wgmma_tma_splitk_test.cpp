// Split-K in the wgmma_tma family's generator rules: which configs get split variants (four tile
// shapes; per M of 64..512 with fewer tiles than SMs, the split whose units fill two waves best,
// >= 4 K tiles per slice), where a tune races them, why a split is refused, the names, the
// persistent grid over work units and the workspace sizes (templates/splitk.h); the untuned
// default stays unsplit.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "core/error.hpp"
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

// The four split shapes (one m64 instruction per consumer, bn 48 or 64) get, for each M of 64,
// 128, 256 and 512 where their tiles are fewer than the SMs, the split whose last wave of units
// is fullest within two waves of 132 SMs (ties: the smaller split), each slice keeping >= 4 K
// tiles. 768 x 4096 with 64 x 48 tiles: 16, 32, 64, 128 tiles at those M: splits 8, 4, 2, 2.
TEST(WgmmaTmaSplitK, TheFourShapesGetTheSplitsThatFillTheSms) {
  const std::map<std::string, std::vector<int>> n768 = {
      {"sc2 64x48", {8, 4, 2}},   // 128 units at M = 64, 128, 256; 256 (0.97 of two waves) at 512
      {"sc2 64x64", {8, 4, 2}},   // 12 tiles: 96; 24: 96; 48: 96 (s8, s4, s2 the fullest); 96: s2
      {"sc1 128x48", {8, 4, 2}},  // 16, 16, 32, 64 tiles
      {"sc1 128x64", {8, 4, 2}},  // 12, 12, 24, 48 tiles
  };
  EXPECT_EQ(splits_by_shape({768, 4096}), n768);
  const std::map<std::string, std::vector<int>> n2560 = {
      {"sc2 64x48", {2}},   // 54 tiles at M = 64: 108 units; 108 at 128: 216; more at 256 (no split)
      {"sc2 64x64", {3}},   // 40 and 80 tiles: 120 and 240 units
      {"sc1 128x48", {2}},  // 54, 54, 108 tiles
      {"sc1 128x64", {3}},  // 40, 40, 80 tiles
  };
  EXPECT_EQ(splits_by_shape({2560, 4096}), n2560);
}

TEST(WgmmaTmaSplitK, EverySplitCandidateFollowsTheRule) {
  for (const GemmProblem& p : {GemmProblem{2560, 4096}, GemmProblem{4096, 2048}, GemmProblem{768, 4096},
                               GemmProblem{1000, 4080}, GemmProblem{6144, 4096}}) {
    const std::vector<KernelConfig> cs = tma_of(p);
    size_t unsplit = 0, split = 0, two_k_tiles = 0;
    for (const KernelConfig& c : cs) {
      if (c.split_k == 1) {
        EXPECT_EQ(split, 0u) << c << ": split variants come after every unsplit config";
        ++(c.bk == 128 ? unsplit : two_k_tiles);
        continue;
      }
      ++split;
      const KernelSpec s{p, c, kHopper.arch};
      EXPECT_TRUE((c.schedule == 2 && c.bm == 64) || (c.schedule == 1 && c.bm == 128)) << s.name();
      EXPECT_TRUE(c.bn == 48 || c.bn == 64) << s.name();
      const int64_t ktiles = (p.k + 127) / 128;
      EXPECT_GE(ktiles / c.split_k, 4) << s.name() << ": every slice keeps four K tiles";
      // Raced exactly at the M whose tiles it fills: fewer tiles than SMs, units within 2 waves;
      // offered because one of M = 64..512 is such an M.
      bool fills_some = false;
      for (int64_t m : {1, 17, 32, 64, 100, 128, 256, 512, 1024, 4096}) {
        const bool fills = tiles(p, c, m) < kHopper.sm_count && tiles(p, c, m) * c.split_k <= 2 * kHopper.sm_count;
        EXPECT_EQ(raced_at(s, m), fills) << s.name() << " M=" << m;
        if (m >= 64 && m <= 512) fills_some = fills_some || fills;
      }
      EXPECT_TRUE(fills_some) << s.name();
      EXPECT_NE(s.name().find("_sk" + std::to_string(c.split_k)), std::string::npos) << s.name();
      EXPECT_EQ(KernelSpec::parse_name(s.name()), s);
      EXPECT_EQ(invalid_reason(p, c, kHopper), "") << s.name();
      KernelConfig twin = c;
      twin.split_k = 1;
      EXPECT_NE(std::find(cs.begin(), cs.end(), twin), cs.end()) << s.name() << ": a split of an offered config";
      EXPECT_TRUE(raced_at({p, twin, kHopper.arch}, 4096)) << "unsplit configs race everywhere";
    }
    EXPECT_LE(split, 16u) << p.key() << ": four shapes, at most one split per M of 64..512";
    EXPECT_LE(unsplit, 30u) << p.key() << ": 9 plain + 6 wide + 4 narrow + 6 as 2x1 clusters + 3 deep + 2 dynamic";
    EXPECT_LE(two_k_tiles, 5u) << p.key() << ": the bk-256 twins of ping-pong 64 x 48..128";
  }
  // 6144 x 4096: the 64 x 64 ping-pong tiles fill the SMs from M = 128 (192 tiles), at M = 64
  // 96 tiles: a split of 2 (192 units).
  EXPECT_EQ(splits_by_shape({6144, 4096}).at("sc2 64x64"), std::vector<int>{2});
  // Three K tiles cannot give two slices four each; wide N fills the SMs with tiles.
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
      // The dynamic schedule: one block of 32 counter words.
      const size_t want = c.dynamic_schedule ? 128
                          : c.split_k == 1   ? 0
                                             : size_t(4 * n * (32 + int64_t(c.split_k) * c.bm * c.bn));
      EXPECT_EQ(workspace_bytes(s, m), want) << s.name() << " M=" << m;
      // The counters a launch into a caller's workspace clears: 32 words at the head of each tile
      // (the dynamic schedule's one block).
      const SplitKCounters sk = splitk_counters(s, m);
      EXPECT_EQ(sk.blocks, c.dynamic_schedule ? 1 : c.split_k == 1 ? 0 : n) << s.name() << " M=" << m;
      if (c.split_k > 1 || c.dynamic_schedule) {
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

// Only the four narrow shapes split, where K is long too: cooperative 128 x 128 split 4 and 2
// ways at 4096 x 14336 (session 32) lost every bucket of M = 64..512 on the H200 (session 33
// call 1: 1.07-1.39x the winner) and is not offered.
TEST(WgmmaTmaSplitK, OnlyTheNarrowShapesSplitWhereKIsLong) {
  const std::set<std::string> narrow = {"sc2 64x48", "sc2 64x64", "sc1 128x48", "sc1 128x64"};
  for (const GemmProblem& q : {GemmProblem{4096, 14336}, GemmProblem{8192, 8192}}) {
    const std::map<std::string, std::vector<int>> got = splits_by_shape(q);
    EXPECT_FALSE(got.empty()) << q.key();
    for (const auto& [shape, splits] : got) EXPECT_TRUE(narrow.count(shape)) << q.key() << ": " << shape;
  }
}

// K pairs (cluster_k = 2, templates/wgmma_tma.cuh): the four split shapes, where K has at least
// 64 tiles of 128 and one of M = 32, 64, 128 has tiles for at most half the SMs; raced exactly
// where that holds; a cluster of two blocks per tile, one wave of clusters at most; the
// exchange buffers in shared memory; never untuned, never beside a cluster along M or a split.
TEST(WgmmaTmaSplitK, KPairsOfTheSplitShapesWhereKIsLong) {
  const GemmProblem p{4096, 14336};
  std::vector<std::string> pairs;
  for (const KernelConfig& c : tma_of(p)) {
    if (c.cluster_k == 1) continue;
    const KernelSpec s{p, c, kHopper.arch};
    pairs.push_back("sc" + std::to_string(c.schedule) + " " + std::to_string(c.bm) + "x" + std::to_string(c.bn));
    EXPECT_EQ(c.cluster_k, 2) << s.name();
    EXPECT_EQ(c.cluster_m, 1) << s.name();
    EXPECT_EQ(c.split_k, 1) << s.name();
    EXPECT_NE(s.name().find("_sk1_ck2"), std::string::npos) << s.name();
    EXPECT_EQ(KernelSpec::parse_name(s.name()), s);
    EXPECT_EQ(invalid_reason(p, c, kHopper), "") << s.name();
    for (int64_t m : {1, 32, 64, 128, 256, 4096}) {
      EXPECT_EQ(raced_at(s, m), 2 * tiles(p, c, m) <= kHopper.sm_count) << s.name() << " M=" << m;
      const LaunchShape l = launch_shape(s, m, kHopper.sm_count);
      EXPECT_EQ(l.cluster[0], 2u) << s.name();
      EXPECT_EQ(int64_t(l.grid[0]), 2 * std::min<int64_t>(tiles(p, c, m), kHopper.sm_count / 2)) << s.name();
      EXPECT_EQ(workspace_bytes(s, m), 0u) << s.name();
    }
    // The ring shrinks by the two exchange buffers (the consumers' rows x bn int32) and stays
    // within the target's shared memory.
    KernelConfig alone = c;
    alone.cluster_k = 1;
    EXPECT_EQ(launch_shape(s, 64).dynamic_smem,
              launch_shape({p, alone, kHopper.arch}, 64).dynamic_smem + 2 * 64 * c.bn * 4 + 32)
        << s.name();
    EXPECT_LE(int(launch_shape(s, 64).dynamic_smem), kHopper.smem_per_block_optin) << s.name();
    for (int64_t m : {32, 64, 128, 4096}) EXPECT_EQ(heuristic_default(p, kHopper, m).cluster_k, 1) << m;
  }
  // 64 tiles of width 64 up to M = 128 (ping-pong 64 x 64 at M <= 64): 128 blocks; the 86
  // tiles of width 48 would need 172.
  EXPECT_EQ(pairs, (std::vector<std::string>{"sc1 128x64", "sc2 64x64"}));
  // K = 4096 (32 K tiles): no pairs.
  for (const KernelConfig& c : tma_of({2560, 4096})) EXPECT_EQ(c.cluster_k, 1) << c;
  // The rules.
  KernelConfig c = tma_of(p).front();
  c.cluster_k = 3;
  EXPECT_NE(invalid_reason(p, c, kHopper).find("cluster_k=3"), std::string::npos) << invalid_reason(p, c, kHopper);
  c.cluster_k = 2;
  c.split_k = 2;
  EXPECT_NE(invalid_reason(p, c, kHopper).find("neither clusters along M nor splits K"), std::string::npos);
  c.split_k = 1;
  c.cluster_m = 2;
  EXPECT_NE(invalid_reason(p, c, kHopper).find("neither clusters along M nor splits K"), std::string::npos);
  c.cluster_m = 1;
  EXPECT_NE(invalid_reason({4096, 128}, c, kHopper).find("leaves a block without K tiles"), std::string::npos);
  EXPECT_THROW(KernelConfig::parse(Family::wgmma_tma, "bm64_bn48_bk128_wg2_s16_sc2_sk1_ck1"), Error);
}

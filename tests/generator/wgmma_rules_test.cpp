// The wgmma family's generator rules: off unless the target asks for it, where it runs, why a
// config is refused, names that round-trip, launch shape and emitted source; other families'
// candidates and the untuned default do not change with the flag.
#include <gtest/gtest.h>

#include <regex>

#include "core/error.hpp"
#include "generator/generator.hpp"

using namespace i8g;

namespace {

const GemmProblem kTp4[] = {{2560, 4096}, {4096, 2048}, {768, 4096}, {4096, 384}};

Target hopper(bool experimental) {
  Target t = Target::from_arch("sm_90a");
  t.experimental_wgmma = experimental;
  return t;
}

std::vector<KernelConfig> of_family(const std::vector<KernelConfig>& cs, Family f) {
  std::vector<KernelConfig> out;
  for (const KernelConfig& c : cs)
    if (c.family == f) out.push_back(c);
  return out;
}

KernelConfig valid_config() {  // 1 warpgroup, 2 x m64, bn 128, 4 stages
  KernelConfig c;
  c.family = Family::wgmma;
  c.bm = 128; c.bn = 128; c.bk = 128; c.warpgroups = 1; c.stages = 4;
  return c;
}

// The untuned default takes the TMA ping-pong family on sm_90a for [N,K] weights from M = 64
// up where K holds a whole 128-byte box; everywhere else the family before it.
TEST(WgmmaRules, TheUntunedDefaultTakesTheTmaFamilyFromM64Up) {
  const Target t = hopper(false);
  auto family = [&](const GemmProblem& p, int64_t m) { return heuristic_default(p, t, m).family; };
  for (const GemmProblem& p : kTp4) {
    EXPECT_NE(family(p, 63), Family::wgmma_tma) << p.key();
    EXPECT_EQ(family(p, 64), Family::wgmma_tma) << p.key();
    const KernelConfig c = heuristic_default(p, t, 1 << 20);
    EXPECT_EQ(c.schedule, 2) << "ping-pong: " << c;
    EXPECT_EQ(c.bm, 128) << "enough tiles to fill the SMs many times over: " << c;
    EXPECT_EQ(c.bn, 128) << c;
    EXPECT_EQ(family(GemmProblem{p.n, p.k, WeightLayout::kn}, 4096), Family::mma_sync) << p.key();
    EXPECT_NE(heuristic_default(p, Target::from_arch("sm_80"), 4096).family, Family::wgmma_tma);
  }
  EXPECT_NE(family(GemmProblem{2560, 64}, 4096), Family::wgmma_tma) << "K below one 128-byte box";
  EXPECT_NE(family(GemmProblem{2560, 4088}, 4096), Family::wgmma_tma) << "K not a multiple of 16";
}


// The untuned tile rule against what run 4 (H200, 2026-12-01) measured best: waves of tiles
// over 132 SMs times a tile's relative time picks 128x128 where tiles are plentiful, narrower
// tiles where a shape has too few (small M, small N).
TEST(WgmmaRules, TheUntunedTileFollowsTheWaveCount) {
  const Target t = hopper(false);
  ASSERT_EQ(t.sm_count, 132);
  struct Point {
    int64_t n, k, m;
    int bm, bn;
  };
  const Point points[] = {
      {2560, 4096, 128, 64, 64},   {2560, 4096, 1024, 128, 64},  {2560, 4096, 4096, 128, 128},
      {6144, 4096, 128, 128, 64},  {6144, 4096, 1024, 128, 128}, {28672, 4096, 128, 128, 128},
      {4096, 2048, 128, 64, 64},   {4096, 2048, 1024, 128, 128}, {768, 4096, 1024, 128, 64},
  };
  for (const Point& q : points) {
    const KernelConfig c = heuristic_default(GemmProblem{q.n, q.k}, t, q.m);
    EXPECT_EQ(c.family, Family::wgmma_tma);
    EXPECT_EQ(c.schedule, 2) << c;
    EXPECT_EQ(c.bm, q.bm) << q.n << "x" << q.k << " M=" << q.m << ": " << c;
    EXPECT_EQ(c.bn, q.bn) << q.n << "x" << q.k << " M=" << q.m << ": " << c;
  }
}
}  // namespace

TEST(WgmmaRules, OffByDefault) {
  EXPECT_FALSE(Target::from_arch("sm_90a").experimental_wgmma);
  for (const GemmProblem& p : kTp4) {
    EXPECT_TRUE(of_family(candidates(p, hopper(false)), Family::wgmma).empty()) << p.key();
    EXPECT_THROW(heuristic_default(p, hopper(false), 4096, Family::wgmma), Error);
    for (int64_t m : {1, 16, 256, 4096})
      EXPECT_NE(heuristic_default(p, hopper(false), m).family, Family::wgmma);
  }
}

TEST(WgmmaRules, TheFlagAddsTheWgmmaFamilyAndChangesNothingElse) {
  for (const GemmProblem& p : kTp4) {
    const std::vector<KernelConfig> off = candidates(p, hopper(false));
    const std::vector<KernelConfig> on = candidates(p, hopper(true));
    const std::vector<KernelConfig> wg = of_family(on, Family::wgmma);
    const std::vector<KernelConfig> tma = of_family(on, Family::wgmma_tma);
    EXPECT_GT(wg.size(), 0u) << p.key();
    EXPECT_LE(wg.size(), 10u) << p.key();
    EXPECT_GT(tma.size(), 0u) << p.key();
    EXPECT_LE(tma.size(), 16u) << p.key() << ": 10 unsplit + 6 split-K at most";
    EXPECT_EQ(of_family(off, Family::wgmma_tma), tma) << "wgmma_tma is not behind the flag: " << p.key();
    std::vector<KernelConfig> on_less_wg;
    for (const KernelConfig& c : on)
      if (c.family != Family::wgmma) on_less_wg.push_back(c);
    EXPECT_EQ(on_less_wg, off) << p.key();
    for (const KernelConfig& c : tma) {
      EXPECT_EQ(invalid_reason(p, c, hopper(true)), "") << c;
      const KernelSpec s{p, c, "sm_90a"};
      EXPECT_EQ(KernelSpec::parse_name(s.name()), s) << s.name();
      EXPECT_NE(s.name().find("_wgmma_tma_"), std::string::npos);
    }
    for (const KernelConfig& c : wg) {
      EXPECT_EQ(invalid_reason(p, c, hopper(true)), "") << c;
      const KernelSpec s{p, c, "sm_90a"};
      EXPECT_EQ(KernelSpec::parse_name(s.name()), s) << s.name();
      EXPECT_NE(s.name().find("_wgmma_"), std::string::npos);
    }
    // The untuned default stays off the experimental wgmma family even with the flag.
    for (int64_t m : {1, 16, 256, 4096}) {
      EXPECT_EQ(heuristic_default(p, hopper(true), m), heuristic_default(p, hopper(false), m));
      EXPECT_EQ(heuristic_default(p, hopper(true), m, Family::wgmma).family, Family::wgmma);
    }
  }
}

TEST(WgmmaRules, OnlySm90aAndNkWeights) {
  for (const char* arch : {"sm_80", "sm_89", "sm_90"}) {
    Target t = Target::from_arch(arch);
    t.experimental_wgmma = true;
    EXPECT_TRUE(of_family(candidates({2560, 4096}, t), Family::wgmma).empty()) << arch;
    EXPECT_NE(invalid_reason({2560, 4096}, valid_config(), t).find("sm_90a"), std::string::npos) << arch;
  }
  const GemmProblem kn{2560, 4096, WeightLayout::kn};
  EXPECT_TRUE(of_family(candidates(kn, hopper(true)), Family::wgmma).empty());
  EXPECT_NE(invalid_reason(kn, valid_config(), hopper(true)).find("[N,K]"), std::string::npos);
  EXPECT_TRUE(of_family(candidates({2560, 4095}, hopper(true)), Family::wgmma).empty());
  EXPECT_NE(invalid_reason({2560, 4088}, valid_config(), hopper(true)).find("multiple of 16"), std::string::npos);
}

TEST(WgmmaRules, InvalidReasonNamesTheBrokenRule) {
  const GemmProblem p{2560, 4096};
  const Target t = hopper(true);
  // The invalid_reason of a config does not depend on the flag (a named kernel stays valid).
  EXPECT_EQ(invalid_reason(p, valid_config(), t), "");
  EXPECT_EQ(invalid_reason(p, valid_config(), hopper(false)), "");
  auto reason = [&](auto edit) {
    KernelConfig c = valid_config();
    edit(c);
    return invalid_reason(p, c, t);
  };
  EXPECT_NE(reason([](KernelConfig& c) { c.split_k = 2; }).find("split"), std::string::npos);
  EXPECT_NE(reason([](KernelConfig& c) { c.bk = 64; }).find("bk=64"), std::string::npos);
  EXPECT_NE(reason([](KernelConfig& c) { c.warpgroups = 3; }).find("warpgroups"), std::string::npos);
  EXPECT_NE(reason([](KernelConfig& c) { c.warpgroups = 0; }).find("warpgroups"), std::string::npos);
  EXPECT_NE(reason([](KernelConfig& c) { c.warps_n = 2; }).find("warps_n"), std::string::npos);
  EXPECT_NE(reason([](KernelConfig& c) { c.bm = 192; }).find("bm=192"), std::string::npos);
  EXPECT_NE(reason([](KernelConfig& c) { c.bm = 32; }).find("bm=32"), std::string::npos);
  EXPECT_NE(reason([](KernelConfig& c) { c.bn = 96; }).find("bn=96"), std::string::npos);
  EXPECT_NE(reason([](KernelConfig& c) { c.bn = 256; }).find("accumulators"), std::string::npos);
  EXPECT_NE(reason([](KernelConfig& c) { c.stages = 1; }).find("stages"), std::string::npos);
  EXPECT_NE(reason([](KernelConfig& c) { c.stages = 6; c.bm = 256; c.warpgroups = 2; }).find("shared memory"),
            std::string::npos);
  EXPECT_NE(reason([](KernelConfig& c) { c.vec = 8; }).find("vec"), std::string::npos);
  EXPECT_NE(reason([](KernelConfig& c) { c.thread_m = 4; }).find("thread_m"), std::string::npos);
}

TEST(WgmmaRules, EveryCandidateFitsSharedMemoryAndTheRingDepthRule) {
  const Target t = hopper(true);
  for (const GemmProblem& p : {GemmProblem{2560, 4096}, GemmProblem{4096, 384}, GemmProblem{64, 128},
                               GemmProblem{100, 256}})
    for (const KernelConfig& c : of_family(candidates(p, t), Family::wgmma)) {
      const LaunchShape s = launch_shape({p, c, t.arch}, 65);
      EXPECT_LE(int(s.dynamic_smem), t.smem_per_block_optin) << c;
      EXPECT_EQ(int(s.dynamic_smem), c.stages * (c.bm + c.bn) * 128 + 1024) << c;
      const int ktiles = int((p.k + 127) / 128);
      EXPECT_LE(c.stages, std::max(2, ktiles)) << c;
      if (ktiles > 2) {
        EXPECT_GE(c.stages, 3) << c;
      }
      EXPECT_LE(c.bn, 2 * std::max<int64_t>(64, p.n)) << c;
    }
}

TEST(WgmmaRules, LaunchShapeAndAlignment) {
  const GemmProblem p{1000, 4096};
  for (const KernelConfig& c : of_family(candidates(p, hopper(true)), Family::wgmma)) {
    EXPECT_EQ(required_alignment(c), 16);
    for (int64_t m : {1, 65, 3072}) {
      const LaunchShape s = launch_shape({p, c, "sm_90a"}, m);
      EXPECT_EQ(int64_t(s.grid[0]), (p.n + c.bn - 1) / c.bn);
      EXPECT_EQ(int64_t(s.grid[1]), (m + c.bm - 1) / c.bm);
      EXPECT_EQ(s.grid[2], 1u);
      EXPECT_EQ(int(s.block[0]), 128 * c.warpgroups) << c;
    }
  }
}

TEST(WgmmaEmit, SourceAndNameRoundTrip) {
  GemmProblem p{2560, 4096};
  p.bias = true;
  const KernelSpec spec{p, valid_config(), "sm_90a"};
  const Source s = emit(spec);
  EXPECT_EQ(s.name, "i8g_sm90a_wgmma_n2560_k4096_nk_tok_ch_bf16_bias_bm128_bn128_bk128_wg1_s4");
  EXPECT_EQ(s.entry, "i8g::wgmma_kernel<128, 128, 1, 4, 2560LL, 4096LL, 1, 1, 0, 1, 0>");
  // The code names each argument in a comment; without them it instantiates the entry.
  EXPECT_EQ(std::regex_replace(s.code, std::regex(R"( /\*[A-Z_]+\*/)"), ""),
            "// " + s.name + "\n#include \"wgmma.cuh\"\n\ntemplate __global__ void " + s.entry +
                "(const __grid_constant__ I8gArgs);\n");
  EXPECT_NE(s.code.find("1 /*WG*/, 4 /*STAGES*/"), std::string::npos) << s.code;
  EXPECT_EQ(KernelSpec::parse_name(s.name), spec);
  EXPECT_EQ(parse_family("wgmma"), Family::wgmma);
  EXPECT_STREQ(to_string(Family::wgmma), "wgmma");
}

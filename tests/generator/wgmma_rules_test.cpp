// The wgmma family's generator rules: off unless the target asks for it, where it runs, why a
// config is refused, names that round-trip, launch shape and emitted source; other families'
// candidates and the untuned default do not change with the flag.
#include <gtest/gtest.h>

#include <regex>
#include <set>

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

// The untuned default takes the TMA family on sm_90a for [N,K] weights from M = 17 up where K
// holds a whole 128-byte box (but decode_mma's bm-32 tile from 17 to 32 rows where N is 768..4096
// and K >= 384: all four shapes here); everywhere else the family before it.
TEST(WgmmaRules, TheUntunedDefaultTakesTheTmaFamilyFromM17Up) {
  const Target t = hopper(false);
  auto family = [&](const GemmProblem& p, int64_t m) { return heuristic_default(p, t, m).family; };
  for (const GemmProblem& p : kTp4) {
    const Family mid = p.n >= 768 && p.n <= 4096 && p.k >= 384 ? Family::decode_mma : Family::wgmma_tma;
    EXPECT_NE(family(p, 16), Family::wgmma_tma) << p.key();
    EXPECT_EQ(family(p, 17), mid) << p.key();
    EXPECT_EQ(family(p, 32), mid) << p.key();
    EXPECT_EQ(family(p, 33), Family::wgmma_tma) << p.key();
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


// The untuned tile rule against what run 4 (H200, 2026-12-01) and session 12's calls 3, 5 and 6
// (the wide tiles, H200, 2026-12-02) measured best (768x4096 M = 1024: 128x64 within 8% of the
// tune's ping-pong 64x96): waves of tiles over 132 SMs times a tile's relative
// time picks 128x128 where tiles are plentiful, narrower tiles where a shape has too few (small
// M, small N), and a wide tile (bn 96, 160 or 192, where it divides N) where it fills one or two
// waves that bn 128 would leave mostly idle; since session 13 (call 4, H200) a narrow ping-pong
// tile (64x48, 64x80: deep rings) where it fills one wave that 64x64 or 128x64 leave short.
// Since session 30 (fitted to session 29's H200 races, family_wgmma_tma.cpp): the cooperative
// 128x48 (deep ring) among them, and the 64-row ping-pong tiles of 48, 64 and 80 columns with
// two K tiles a stage (bk 256) where K >= 2048; the points that changed then (2560 x 4096
// M = 128 and 256, 6144 x 4096 M = 128, 4096 x 2048 M = 128, 768 x 4096 M = 128..1024).
TEST(WgmmaRules, TheUntunedTileFollowsTheWaveCount) {
  const Target t = hopper(false);
  ASSERT_EQ(t.sm_count, 132);
  struct Point {
    int64_t n, k, m;
    int schedule, bm, bn, bk;
  };
  const Point points[] = {
      {2560, 4096, 128, 2, 64, 48, 256},    {2560, 4096, 256, 1, 128, 48, 128},
      {2560, 4096, 512, 1, 128, 80, 128},   {2560, 4096, 1024, 1, 128, 160, 128},
      {2560, 4096, 2048, 1, 128, 160, 128}, {2560, 4096, 4096, 2, 128, 128, 128},
      {6144, 4096, 128, 1, 128, 48, 128},   {6144, 4096, 256, 1, 128, 96, 128},
      {6144, 4096, 512, 1, 128, 192, 128},  {6144, 4096, 1024, 2, 128, 128, 128},
      {6144, 4096, 2048, 2, 128, 128, 128}, {28672, 4096, 128, 2, 128, 128, 128},
      {4096, 2048, 128, 2, 64, 64, 256},    {4096, 2048, 1024, 2, 128, 128, 128},
      {768, 4096, 1024, 1, 128, 48, 128},   {768, 4096, 2048, 1, 128, 96, 128},
      {6144, 4096, 4096, 2, 128, 128, 128}, {768, 4096, 128, 2, 64, 48, 256},
      {768, 4096, 256, 2, 64, 48, 256},     {768, 4096, 512, 2, 64, 48, 256},
      {4096, 384, 128, 2, 64, 64, 128},     {4096, 384, 64, 2, 64, 48, 128},  // K < 2048: one K tile a stage
  };
  for (const Point& q : points) {
    const KernelConfig c = heuristic_default(GemmProblem{q.n, q.k}, t, q.m);
    EXPECT_EQ(c.family, Family::wgmma_tma);
    const std::string at = std::to_string(q.n) + "x" + std::to_string(q.k) + " M=" + std::to_string(q.m) + ": ";
    EXPECT_EQ(c.schedule, q.schedule) << at << c;
    EXPECT_EQ(c.bm, q.bm) << at << c;
    EXPECT_EQ(c.bn, q.bn) << at << c;
    EXPECT_EQ(c.bk, q.bk) << at << c;
    if (c.bk == 256)
      EXPECT_GE(c.stages, 6) << at << c << ": a bk-256 twin's ring is as deep as fits";
    else if (c.bn == 48 || c.bn == 80)
      EXPECT_GE(c.stages, 8) << at << c << ": a narrow tile's ring is as deep as fits";
    else
      EXPECT_LE(c.stages, 8) << at << c << ": the plain ring, not a deep variant";
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
    EXPECT_LE(tma.size(), 48u) << p.key()
                               << ": 9 plain + 6 wide + 4 narrow + 6 as 2x1 clusters + 3 deep + 2 dynamic + 16 split-K "
                                  "+ 2 raster twins at most";
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

// --- wgmma_tma's 2x1 clusters (cm2) ------------------------------------------------------------

namespace {

std::vector<KernelConfig> tma_of(const GemmProblem& p) {
  return of_family(candidates(p, hopper(false)), Family::wgmma_tma);
}

std::string shape(const KernelConfig& c) {
  return "sc" + std::to_string(c.schedule) + "_" + std::to_string(c.bm) + "x" + std::to_string(c.bn);
}

}  // namespace

// cm2 variants of ping-pong 128x128 (CUTLASS's vLLM default), cooperative 256x128 and ping-pong
// 64x256 where those shapes are candidates, with the plain ring; and of the 64-row ping-pong
// tiles of 48, 64 and 80 columns (SGLang's 64x64 2x1 for 64 < M <= 128) with as deep a ring as
// fits. Every other candidate keeps cluster_m = 1 and its name (no "_cm"), the cm2 names end in
// "_cm2" and round-trip.
TEST(WgmmaTmaClusters, CandidatesAddCm2OfSixShapes) {
  const std::set<std::string> deep = {"sc2_64x48", "sc2_64x64", "sc2_64x80"};
  for (const GemmProblem& p : kTp4) {
    std::set<std::string> plain, clustered;
    const std::vector<KernelConfig> cs = tma_of(p);
    for (const KernelConfig& c : cs) {
      const KernelSpec s{p, c, "sm_90a"};
      EXPECT_EQ(KernelSpec::parse_name(s.name()), s) << s.name();
      if (c.cluster_m == 1) {
        if (c.epilogue_store == 0 && c.bk == 128) plain.insert(shape(c));
        EXPECT_EQ(s.name().find("_cm"), std::string::npos) << s.name();
        if (c.epilogue_store == 0 && c.dynamic_schedule == 0 && c.raster_group == 0)
          EXPECT_EQ(s.name().substr(s.name().rfind('_'), 3), "_sk") << s.name() << ": the split ends a plain name";
        continue;
      }
      EXPECT_EQ(c.cluster_m, 2) << s.name();
      EXPECT_EQ(c.split_k, 1) << s.name();
      if (c.epilogue_store) continue;  // the staged twins: wgmma_tma_store_test.cpp
      if (c.raster_group) continue;     // the raster twin: wgmma_tma_order_test.cpp
      clustered.insert(shape(c));
      EXPECT_EQ(s.name().substr(s.name().size() - 4), "_cm2") << s.name();
      KernelConfig twin = c;
      twin.cluster_m = 1;
      if (deep.count(shape(c))) {
        // As deep a ring as fits: one more stage would not.
        KernelConfig more = c;
        ++more.stages;
        EXPECT_GE(c.stages, 12) << s.name();
        EXPECT_NE(invalid_reason(p, more, hopper(false)), "") << s.name();
        EXPECT_EQ(invalid_reason(p, c, hopper(false)), "") << s.name();
      } else {
        EXPECT_EQ(KernelSpec({p, twin, "sm_90a"}).name() + "_cm2", s.name());
        EXPECT_NE(std::find(cs.begin(), cs.end(), twin), cs.end()) << s.name();
      }
    }
    std::set<std::string> want;
    for (const char* x : {"sc2_128x128", "sc1_256x128", "sc2_64x256", "sc2_64x48", "sc2_64x64", "sc2_64x80"})
      if (plain.count(x)) want.insert(x);
    EXPECT_EQ(clustered, want) << p.key();
    EXPECT_GE(want.size(), 4u) << p.key() << ": every TP4 shape has the three wide ones and 64x64";
  }
  // N = 100: bn 256 is past the padded N (128), and 100 = 2.08 x 48 and 1.25 x 80 waste too much.
  std::set<std::string> clustered;
  for (const KernelConfig& c : tma_of({100, 4096}))
    if (c.cluster_m == 2) clustered.insert(shape(c));
  EXPECT_EQ(clustered, (std::set<std::string>{"sc2_128x128", "sc1_256x128", "sc2_64x64"}));
}

TEST(WgmmaTmaClusters, NamesParseOnlyTheCanonicalForm) {
  const KernelConfig c = KernelConfig::parse(Family::wgmma_tma, "bm128_bn128_bk128_wg2_s6_sc2_sk1_cm2");
  EXPECT_EQ(c.cluster_m, 2);
  EXPECT_EQ(c.schedule, 2);
  EXPECT_EQ(c.to_string(), "bm128_bn128_bk128_wg2_s6_sc2_sk1_cm2");
  EXPECT_EQ(KernelConfig::parse(Family::wgmma_tma, "bm128_bn128_bk128_wg2_s6_sc2_sk1").cluster_m, 1);
  try {
    KernelConfig::parse(Family::wgmma_tma, "bm128_bn128_bk128_wg2_s6_sc2_sk1_cm1");
    ADD_FAILURE() << "cm1 parsed: a second name of the kernel without it";
  } catch (const Error& e) {
    EXPECT_NE(e.message().find("cluster_m=1"), std::string::npos) << e.what();
  }
  EXPECT_THROW(KernelConfig::parse(Family::wgmma_tma, "bm128_bn128_bk128_wg2_s6_cm2_sc2"), Error);
  EXPECT_THROW(KernelConfig::parse(Family::wgmma, "bm128_bn128_bk128_wg1_s4_cm2"), Error) << "wgmma has no clusters";
  const std::string name = "i8g_sm90a_wgmma_tma_n2560_k4096_nk_tok_ch_bf16_bm256_bn128_bk128_wg2_s4_sc1_sk1_cm2";
  EXPECT_EQ(KernelSpec::parse_name(name).name(), name);
  EXPECT_EQ(KernelSpec::parse_name(name).config.cluster_m, 2);
}

TEST(WgmmaTmaClusters, InvalidReasonNamesClusterM) {
  const GemmProblem p{2560, 4096};
  KernelConfig c = tma_of(p).front();
  for (int cm : {0, 3, 4}) {
    c.cluster_m = cm;
    EXPECT_NE(invalid_reason(p, c, hopper(false)).find("cluster_m=" + std::to_string(cm)), std::string::npos) << cm;
  }
  c.cluster_m = 2;
  EXPECT_EQ(invalid_reason(p, c, hopper(false)), "") << c;
  // Families without clusters refuse the field like any they do not use.
  KernelConfig w = valid_config();
  w.cluster_m = 2;
  EXPECT_NE(invalid_reason(p, w, hopper(true)).find("cluster_m"), std::string::npos);
}

// Launch: one cluster of two blocks per unit (two M tiles of one tile column), at most
// sm_count / 2 clusters; the grid is even and the cluster {2, 1, 1}. Without clusters the
// launch is as before: {1, 1, 1}, min(tiles, sm_count) blocks.
TEST(WgmmaTmaClusters, LaunchShapeCountsClustersOfUnits) {
  const GemmProblem p{1000, 4096};  // tiles_n: 8 at bn 128, 4 at bn 256
  for (const KernelConfig& c : tma_of(p))
    for (int64_t m : {1, 65, 129, 300, 3072, 100000})
      for (int sms : {0, 1, 2, 7, 132, 133}) {
        const LaunchShape s = launch_shape({p, c, "sm_90a"}, m, sms);
        const int64_t tiles_m = (m + c.bm - 1) / c.bm, tiles_n = (p.n + c.bn - 1) / c.bn;
        EXPECT_EQ(s.block[0], 384u);
        EXPECT_EQ(s.grid[1], 1u);
        EXPECT_EQ(s.grid[2], 1u);
        EXPECT_EQ(s.cluster[1], 1u);
        EXPECT_EQ(s.cluster[2], 1u);
        if (c.cluster_m == 1) {
          EXPECT_EQ(s.cluster[0], 1u);
          const int64_t cap = sms > 0 ? sms : 65535;
          EXPECT_EQ(int64_t(s.grid[0]), std::min(tiles_m * tiles_n * c.split_k, cap)) << c << " m=" << m;
          continue;
        }
        EXPECT_EQ(s.cluster[0], 2u) << c;
        EXPECT_EQ(s.grid[0] % 2, 0u) << c;
        const int64_t units = (tiles_m + 1) / 2 * tiles_n;
        const int64_t cap = sms > 0 ? std::max(1, sms / 2) : 65535 / 2;
        EXPECT_EQ(int64_t(s.grid[0]), 2 * std::min(units, cap)) << c << " m=" << m << " sms=" << sms;
        if (sms >= 2) {
          EXPECT_LE(int(s.grid[0]), sms) << c;
        }
        KernelConfig twin = c;
        twin.cluster_m = 1;
        EXPECT_EQ(s.dynamic_smem, launch_shape({p, twin, "sm_90a"}, m, sms).dynamic_smem) << "the same ring";
      }
}

// The tensor maps' boxes: x bm rows (M where one row tile holds M: no zero-filled rows); w bn
// rows, or bn / 2 with 2x1 clusters (each block loads half of the w tile and multicasts it). The
// half tile is a whole number of 128B swizzle atoms (8 rows), so it lands on a 1024-byte
// boundary and the wgmma B descriptor is unchanged.
TEST(WgmmaTmaClusters, BoxRowsFollowTheConfig) {
  for (const GemmProblem& p : kTp4)
    for (const KernelConfig& c : tma_of(p)) {
      const TmaBoxRows b = tma_box_rows(c, 4096);
      EXPECT_EQ(b.x, c.bm) << c;
      EXPECT_EQ(tma_box_rows(c, c.bm).x, c.bm) << c;
      EXPECT_EQ(tma_box_rows(c, c.bm + 1).x, c.bm) << c << ": a partial last row tile still fills";
      EXPECT_EQ(tma_box_rows(c, 1).x, 1) << c;
      EXPECT_EQ(tma_box_rows(c, 33).x, std::min(33, c.bm)) << c;
      EXPECT_EQ(tma_box_rows(c, 1).w, b.w) << c;
      EXPECT_EQ(b.w, c.bn / c.cluster_m) << c;
      EXPECT_EQ(b.w * 128 % 1024, 0) << c;
      EXPECT_LE(b.x, 256);
    }
}

// The template gets CM after PP; the emitted entry instantiates it.
TEST(WgmmaTmaClusters, TemplateArgumentsCarryCm) {
  const GemmProblem p{2560, 4096};
  for (const KernelConfig& c : tma_of(p)) {
    const Source s = emit({p, c, "sm_90a"});
    EXPECT_NE(s.code.find(std::to_string(c.cluster_m) + " /*CM*/"), std::string::npos) << s.code;
    EXPECT_NE(s.code.find(" /*PP*/, " + std::to_string(c.cluster_m) + " /*CM*/"), std::string::npos) << s.code;
  }
}

// The untuned default never takes a cluster (unmeasured), and the family's own cheapest config
// at any M is a cm1 one.
TEST(WgmmaTmaClusters, TheUntunedDefaultStaysUnclustered) {
  for (const GemmProblem& p : kTp4)
    for (int64_t m : {64, 128, 1024, 4096, 1 << 20}) {
      EXPECT_EQ(heuristic_default(p, hopper(false), m).cluster_m, 1) << p.key() << " m=" << m;
      EXPECT_EQ(heuristic_default(p, hopper(false), m, Family::wgmma_tma).cluster_m, 1) << p.key() << " m=" << m;
    }
}

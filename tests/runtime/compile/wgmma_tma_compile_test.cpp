// The experimental wgmma_tma family compiles with NVRTC for sm_90a: every candidate and every
// epilogue option has no spills, no stack frame and no local memory; its SASS holds the
// warpgroup MMA (IGMMA), TMA loads (UTMALDG), the register reallocation of warp specialization
// (USETMAXREG: ptxas honoured setmaxnreg) and no cp.async or mma.sync; ptxas neither serializes
// the wgmmas nor ignores setmaxnreg. Whether the kernels compute the right thing is for a GPU
// (tests/gpu/wgmma_tma_test.cpp, and a tune verifies every candidate first). Split-K configs
// compile to the same checks plus the reduction's atomic (ATOMG), which unsplit ones lack. Where
// the epilogue's operands fit in registers they are loaded before the main loop (SASS order).
// Staged-store configs hold stmatrix (STSM) and a TMA store (UTMASTG); the others neither.
#include <gtest/gtest.h>

#include <iostream>
#include <map>
#include <set>
#include <tuple>

#include "core/embedded.hpp"
#include "generator/generator.hpp"
#include "runtime/compile/compiler.hpp"
#include "runtime/report/report.hpp"
#include "tests/runtime/compile/tensor_kernel_checks.hpp"

using namespace i8g;

namespace {

Target hopper() {
  Target t = Target::from_arch("sm_90a");
  t.experimental_wgmma = true;
  t.experimental_staged_store = true;  // the staged-store twins compile and are checked too
  return t;
}

using test::sass_count;

int text_count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

// SASS lines of TMA loads with a cache-policy operand (an L2 eviction hint).
int hinted_tma_loads(const std::string& sass) {
  int n = 0;
  for (size_t at = sass.find("UTMALDG"); at != std::string::npos; at = sass.find("UTMALDG", at + 7)) {
    const size_t end = sass.find('\n', at);
    if (sass.substr(at, end == std::string::npos ? std::string::npos : end - at).find("desc[") != std::string::npos) ++n;
  }
  return n;
}

// The family's candidates for p, unsplit ones or split-K ones.
std::vector<KernelSpec> tma_candidates(const GemmProblem& p, bool split = false) {
  std::vector<KernelSpec> specs;
  for (const KernelConfig& c : candidates(p, hopper()))
    if (c.family == Family::wgmma_tma && (c.split_k > 1) == split) specs.push_back({p, c, "sm_90a"});
  return specs;
}

void compile_and_check(const std::vector<KernelSpec>& specs, bool print) {
  Target t = hopper();
  t.experimental_packed_weight = true;  // a packed-weight twin compiles where it is asked for
  test::compile_tensor_kernels(
      t, specs,
      [&](const KernelSpec& spec, const CompileOutcome& o, const ResourceReport& r, const LaunchShape& shape) {
        const std::string& log = o.binary->log;
        EXPECT_EQ(log.find("serialized"), std::string::npos) << spec.name() << ":\n" << log;
        EXPECT_EQ(log.find("Performance Loss"), std::string::npos) << spec.name() << ":\n" << log;
        EXPECT_EQ(log.find("C75"), std::string::npos) << spec.name() << ":\n" << log;
        EXPECT_EQ(shape.block[0], 384u) << spec.name();
        if (r.sass_available) {
          EXPECT_GT(sass_count(r, "IGMMA"), 0) << spec.name() << " has no warpgroup MMA (IGMMA)";
          EXPECT_EQ(sass_count(r, "USETMAXREG"), 2) << spec.name() << ": one setmaxnreg per role";
          EXPECT_EQ(sass_count(r, "IMMA"), 0) << spec.name() << " fell back to mma.sync";
          EXPECT_EQ(sass_count(r, "CALL"), 0) << spec.name() << " calls a function (a 64-bit division?)";
          const int multicast = text_count(r.sass, "UTMALDG.2D.MULTICAST");
          const int cluster_arrive = sass_count(r, "UCGABAR_ARV"), cluster_wait = sass_count(r, "UCGABAR_WAIT");
          if (spec.config.cluster_k > 1) {
            // A K pair: plain TMA loads, the partial sums stored into the partner (STAS), cluster
            // barriers after the init and at each role's end.
            EXPECT_EQ(multicast, 0) << spec.name();
            EXPECT_GT(sass_count(r, "STAS"), 0) << spec.name() << " stores no partial into its partner";
            EXPECT_GE(cluster_arrive, 2) << spec.name();
            EXPECT_EQ(cluster_arrive, cluster_wait) << spec.name();
          } else if (spec.config.cluster_m == 1) {
            EXPECT_EQ(multicast, 0) << spec.name();
            EXPECT_EQ(cluster_arrive + cluster_wait, 0) << spec.name() << " syncs a cluster it does not have";
            EXPECT_EQ(sass_count(r, "STAS"), 0) << spec.name();
          } else {
            // The w share goes out by multicast, the x box by a plain load.
            EXPECT_GT(multicast, 0) << spec.name() << " has no multicast TMA load (UTMALDG.2D.MULTICAST)";
            EXPECT_GT(sass_count(r, "UTMALDG") - multicast, 0) << spec.name() << " has no plain TMA load for x";
            // Cluster barriers after the barriers' init and at each role's end; the mainloop's
            // remote arrivals and waits stay CTA-scoped: the only GPU-wide fences and L1
            // invalidations are the cluster barriers' own (release arrive, acquire wait).
            EXPECT_GE(cluster_arrive, 2) << spec.name();
            EXPECT_EQ(cluster_arrive, cluster_wait) << spec.name();
            EXPECT_LE(text_count(r.sass, "MEMBAR.ALL.GPU"), cluster_arrive) << spec.name();
            EXPECT_LE(text_count(r.sass, "CCTL.IVALL"), cluster_wait) << spec.name();
          }
          // The staged store (templates/tma_store.cuh): stmatrix into the buffer, a TMA store out.
          if (spec.config.epilogue_store) {
            EXPECT_GT(sass_count(r, "STSM"), 0) << spec.name() << " stages no output through stmatrix";
            EXPECT_GT(sass_count(r, "UTMASTG"), 0) << spec.name() << " has no TMA store";
          } else {
            EXPECT_EQ(sass_count(r, "STSM") + sass_count(r, "UTMASTG"), 0) << spec.name();
          }
          // A packed weight: the w tiles of a stage in one plain bulk copy (UBLKCP), x by TMA.
          if (spec.config.packed_weight) {
            EXPECT_GT(sass_count(r, "UBLKCP"), 0) << spec.name() << " has no bulk copy for the packed weight";
            EXPECT_GT(sass_count(r, "UTMALDG"), 0) << spec.name() << " has no TMA load for x";
          } else {
            EXPECT_EQ(sass_count(r, "UBLKCP"), 0) << spec.name();
          }
          // L2 eviction hints (l2_hint): the hinted TMA loads carry a cache-policy operand
          // ("desc[UR..]"), on x's loads, w's or both; no other kernel has one.
          const int hinted = hinted_tma_loads(r.sass), loads = sass_count(r, "UTMALDG");
          if (spec.config.l2_hint == 3) {
            EXPECT_EQ(hinted, loads) << spec.name() << ": every TMA load hinted";
          } else if (spec.config.l2_hint != 0) {
            EXPECT_GT(hinted, 0) << spec.name() << " has no hinted TMA load";
            EXPECT_LT(hinted, loads) << spec.name() << ": one operand's loads hinted, not both";
          } else {
            EXPECT_EQ(hinted, 0) << spec.name() << " hints a TMA load";
          }
          // The programmatic-launch trigger (pdl_trigger): PREEXIT in the twins, nowhere else.
          EXPECT_EQ(sass_count(r, "PREEXIT") > 0, spec.config.pdl_trigger != 0) << spec.name();
          if (spec.config.split_k > 1) {
            EXPECT_GT(sass_count(r, "ATOMG"), 0) << spec.name() << " has no split-K arrival counter";
          } else if (spec.config.dynamic_schedule) {
            // The claim of the next tile and the count of blocks done.
            EXPECT_EQ(sass_count(r, "ATOMG"), 2) << spec.name() << ": the dynamic schedule's two counters";
          } else {
            EXPECT_EQ(sass_count(r, "ATOMG"), 0) << spec.name() << ": unsplit kernels keep no counter";
          }
        }
        if (print)
          std::cout << spec.name() << ": " << r.registers << " regs, " << shape.dynamic_smem << " B smem, IGMMA="
                    << sass_count(r, "IGMMA") << " UTMALDG=" << sass_count(r, "UTMALDG")
                    << " (multicast " << text_count(r.sass, "UTMALDG.2D.MULTICAST") << ")\n";
      });
}

}  // namespace

TEST(WgmmaTma, TemplateIsEmbedded) {
  std::set<std::string> embedded;
  for (const EmbeddedFile& f : embedded_templates()) embedded.insert(f.path);
  EXPECT_TRUE(embedded.count("wgmma_tma.cuh"));
}

TEST(WgmmaTma, EveryCandidateOfTheTp4ShapesCompilesCleanly) {
  std::vector<KernelSpec> specs;
  for (const GemmProblem& p : {GemmProblem{2560, 4096}, GemmProblem{4096, 384}, GemmProblem{768, 4096}})
    for (const KernelSpec& s : tma_candidates(p)) specs.push_back(s);
  ASSERT_GE(specs.size(), 10u);
  compile_and_check(specs, true);
}

// The K pairs (ck2) of a long-K shape (4096 x 14336: cooperative 128 x 64 and ping-pong 64 x 64),
// then one of each schedule over N and K tails with the heaviest epilogue (f32, bias, zero points).
TEST(WgmmaTma, KPairsCompileCleanly) {
  std::vector<KernelSpec> specs;
  for (const KernelSpec& s : tma_candidates({4096, 14336}))
    if (s.config.cluster_k > 1) specs.push_back(s);
  EXPECT_EQ(specs.size(), 2u);
  GemmProblem tails{1000, 16368};
  tails.out = OutType::f32;
  tails.bias = true;
  tails.asymmetric = true;
  for (const KernelSpec& s : tma_candidates(tails))
    if (s.config.cluster_k > 1) specs.push_back(s);
  EXPECT_GT(specs.size(), 2u);
  compile_and_check(specs, true);
}

// Every split-K candidate of 2560 x 4096 (both schedules), then one split config of each
// schedule over N and K tails with three epilogues (plain bf16, f32 with bias and zero points,
// per-tensor scales).
TEST(WgmmaTma, SplitKCandidatesCompileCleanlyForBothSchedules) {
  std::vector<KernelSpec> specs = tma_candidates({2560, 4096}, true);
  std::set<int> schedules;
  for (const KernelSpec& s : specs) schedules.insert(s.config.schedule);
  EXPECT_EQ(schedules, (std::set<int>{1, 2}));
  std::vector<GemmProblem> problems;
  for (const GemmProblem& p : test::epilogue_option_problems())
    if ((p.out == OutType::bf16 && !p.bias && !p.asymmetric) || (p.out == OutType::f32 && p.bias && p.asymmetric) ||
        p.act_scale == ActScale::per_tensor)
      problems.push_back(p);
  ASSERT_EQ(problems.size(), 3u);
  for (const GemmProblem& p : problems) {
    std::set<int> done;
    for (const KernelSpec& s : tma_candidates(p, true))
      if (done.insert(s.config.schedule).second) specs.push_back(s);
    EXPECT_EQ(done.size(), 2u) << p.key();
  }
  compile_and_check(specs, true);
}

// The dynamic-schedule twins (_ds1: each block claims its next tile from a counter) of the two
// large cooperative tiles: 4096 x 4096's, then over N and K tails with the heaviest epilogue
// operands.
TEST(WgmmaTma, DynamicScheduleTwinsCompileCleanly) {
  std::vector<KernelSpec> specs;
  const GemmProblem heavy{1000, 4080, WeightLayout::nk, ActScale::per_token, WeightScale::per_channel, OutType::f32,
                          true, true};
  for (const GemmProblem& p : {GemmProblem{4096, 4096}, heavy})
    for (const KernelSpec& s : tma_candidates(p))
      if (s.config.dynamic_schedule) specs.push_back(s);
  ASSERT_EQ(specs.size(), 4u) << "cooperative 128x256 and 256x128 of each";
  compile_and_check(specs, true);
}

// The tile-order twins (tune --experimental-tile-order) of 4096 x 4096: the raster group of 1,
// the L2 hints, the ping-pong dynamic schedule; then ping-pong 128x128's over N and K tails with
// the heaviest epilogue operands.
TEST(WgmmaTma, TileOrderTwinsCompileCleanly) {
  Target t = hopper();
  t.experimental_tile_order = true;
  const GemmProblem heavy{1000, 4080, WeightLayout::nk, ActScale::per_token, WeightScale::per_channel, OutType::f32,
                          true, true};
  std::vector<KernelSpec> specs;
  for (const GemmProblem& p : {GemmProblem{4096, 4096}, heavy})
    for (const KernelConfig& c : candidates(p, t)) {
      if (tile_order_twin(c) && (p.n == 4096 || (c.schedule == 2 && c.cluster_m == 1)))
        specs.push_back({p, c, "sm_90a"});
    }
  EXPECT_EQ(specs.size(), 26u) << "21 of 4096 x 4096, ping-pong 128x128's 5 over the tails";
  compile_and_check(specs, true);
}

// The trigger twins (pdl_trigger 1 and 2: the tuner races them beside its finalists) of a
// ping-pong 64-row tile, a cooperative tile, a 2x1 cluster and a split-K tile of 28672 x 4096.
TEST(WgmmaTma, TriggerTwinsCompileCleanly) {
  const GemmProblem p{28672, 4096};
  std::vector<KernelSpec> specs;
  for (const char* config : {"bm64_bn48_bk128_wg2_s16_sc2_sk1", "bm128_bn80_bk128_wg2_s8_sc1_sk1",
                             "bm128_bn128_bk128_wg2_s7_sc2_sk1_cm2", "bm64_bn64_bk128_wg2_s8_sc2_sk2"}) {
    const KernelConfig c = KernelConfig::parse(Family::wgmma_tma, config);
    ASSERT_EQ(invalid_reason(p, c, hopper()), "") << config;
    for (const KernelConfig& v : trigger_twins(p, c, hopper())) specs.push_back({p, v, "sm_90a"});
  }
  EXPECT_EQ(specs.size(), 8u);
  compile_and_check(specs, true);
}

// The packed-weight twins (tune --experimental-packed-weight) of 2560 x 4096, one and two K tiles a
// stage, both schedules, then one of each bk over N and K tails with the heaviest epilogue operands.
TEST(WgmmaTma, PackedWeightTwinsCompileCleanly) {
  Target t = hopper();
  t.experimental_packed_weight = true;
  GemmProblem heavy{1000, 4080, WeightLayout::nk, ActScale::per_token, WeightScale::per_channel, OutType::f32, true,
                    true};
  std::vector<KernelSpec> specs;
  std::set<int> heavy_bk;
  for (const GemmProblem& p : {GemmProblem{2560, 4096}, heavy})
    for (const KernelConfig& c : candidates(p, t))
      if (c.family == Family::wgmma_tma && c.packed_weight && (p.n == 2560 || heavy_bk.insert(c.bk).second))
        specs.push_back({p, c, "sm_90a"});
  EXPECT_EQ(specs.size(), 16u) << "ping-pong 64 x 48, 64, 80, 128 at bk 128 and 256, ping-pong 128 x 64, 128, "
                                  "cooperative 128 x 48, 64, 80, 128, then one of each bk";
  compile_and_check(specs, true);
}

TEST(WgmmaTma, EveryEpilogueOptionCompilesWithTails) {
  // N = 1000 leaves a partial N tile, K = 4080 a partial K tile (zero-filled by TMA).
  std::vector<KernelSpec> specs;
  for (const GemmProblem& p : test::epilogue_option_problems()) {
    const std::vector<KernelSpec> all = tma_candidates(p);
    specs.push_back(p.act_scale == ActScale::per_tensor ? all.back() : all.front());
  }
  compile_and_check(specs, false);
}

// The 2x1 cluster configs (cm2) with N and K tails and the heaviest epilogue operands (bias,
// asymmetric zero points: the most registers), and per-tensor scales, and the staged-store
// configs with the heaviest operands; every TP4 cm2 and staged candidate compiles in the test
// above.
TEST(WgmmaTma, ClusterConfigsCompileWithTails) {
  std::vector<KernelSpec> specs;
  const GemmProblem heavy{1000, 4080, WeightLayout::nk, ActScale::per_token, WeightScale::per_channel, OutType::f32,
                          true, true};
  const GemmProblem tensor{1000, 4080, WeightLayout::nk, ActScale::per_tensor, WeightScale::per_tensor};
  for (const GemmProblem& p : {heavy, tensor})
    for (const KernelSpec& s : tma_candidates(p))
      if (s.config.cluster_m == 2) specs.push_back(s);
  ASSERT_EQ(specs.size(), 16u) << "sc2 128x128 and its raster twin, sc1 256x128, sc2 64x256 and the deep sc2 64x48, "
                                  "64x64, 64x80 of each, and the staged-store twins of the ping-pong two for the bf16 "
                                  "problem";
  // The staged stores (2-byte outputs only) with the heaviest epilogue operands, clustered or not.
  GemmProblem heavy16 = heavy;
  heavy16.out = OutType::bf16;
  for (const KernelSpec& s : tma_candidates(heavy16))
    if (s.config.epilogue_store) specs.push_back(s);
  ASSERT_EQ(specs.size(), 20u);
  compile_and_check(specs, true);
}

// Where the epilogue's column operands fit beside the accumulators (within 128 registers:
// templates/wgmma.cuh, epi_preload), the consumers request every epilogue operand before their
// main loop, so in the SASS each global load (LDG) comes before the first warpgroup MMA; the
// tiles that do not fit load their columns after it. Named configs of 2560 x 4096, plain bf16
// and with f32, bias and zero points (three column operands: fewer tiles fit).
TEST(WgmmaTma, EpilogueOperandsAreRequestedBeforeTheMainLoopWhereTheyFit) {
  GemmProblem plain{2560, 4096}, heavy{2560, 4096};
  heavy.out = OutType::f32;
  heavy.bias = true;
  heavy.asymmetric = true;
  // (problem, config, whether every LDG precedes the first IGMMA)
  const std::vector<std::tuple<GemmProblem, std::string, bool>> cases = {
      {plain, "bm64_bn48_bk128_wg2_s16_sc2_sk1", true},    // 24 + 12 registers
      {plain, "bm64_bn80_bk128_wg2_s12_sc2_sk1", true},    // 40 + 20
      {plain, "bm128_bn128_bk128_wg2_s7_sc1_sk1", true},   // 64 + 32
      {plain, "bm128_bn128_bk128_wg2_s7_sc2_sk1", false},  // ping-pong: 128 + 32
      {plain, "bm128_bn256_bk128_wg2_s4_sc1_sk1", false},  // 128 + 64
      {heavy, "bm64_bn80_bk128_wg2_s12_sc2_sk1", true},    // 40 + 3 * 20
      {heavy, "bm128_bn128_bk128_wg2_s7_sc1_sk1", false},  // 64 + 3 * 32
  };
  std::vector<KernelSpec> specs;
  std::map<std::string, bool> before;
  for (const auto& [p, config, pre] : cases) {
    const size_t had = specs.size();
    for (const KernelSpec& s : tma_candidates(p))
      if (s.name().size() > config.size() && s.name().compare(s.name().size() - config.size(), config.size(), config) == 0) {
        specs.push_back(s);
        before[s.name()] = pre;
      }
    ASSERT_EQ(specs.size(), had + 1) << config << " is not a candidate of " << p.key();
  }
  int checked = 0;
  test::compile_tensor_kernels(
      hopper(), specs, [&](const KernelSpec& spec, const CompileOutcome&, const ResourceReport& r, const LaunchShape&) {
        if (!r.sass_available) return;
        const std::string& sass = r.sass;
        const size_t mma = sass.find("IGMMA.");
        ASSERT_NE(mma, std::string::npos) << spec.name();
        const size_t first_ldg = sass.find("LDG.E"), last_ldg = sass.rfind("LDG.E");
        ASSERT_NE(first_ldg, std::string::npos) << spec.name() << " loads no epilogue operand";
        EXPECT_LT(first_ldg, mma) << spec.name() << ": its rows' scales are requested after the main loop";
        if (before.at(spec.name()))
          EXPECT_LT(last_ldg, mma) << spec.name() << ": a column operand is loaded after the main loop";
        else
          EXPECT_GT(last_ldg, mma) << spec.name() << ": column operands all before the main loop, beyond the budget";
        ++checked;
      });
  if (checked == 0) GTEST_SKIP() << "no disassembler: the SASS order was not checked";
  EXPECT_EQ(checked, int(cases.size()));
}

TEST(WgmmaTma, KnWeightsAndOtherArchsAreRefusedWithTheReason) {
  GemmProblem kn{2560, 4096, WeightLayout::kn};
  EXPECT_TRUE(tma_candidates(kn).empty());
  Target ampere = Target::from_arch("sm_80");
  ampere.experimental_wgmma = true;
  for (const KernelConfig& c : candidates(GemmProblem{2560, 4096}, ampere)) EXPECT_NE(c.family, Family::wgmma_tma);
}

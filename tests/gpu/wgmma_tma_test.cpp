// The experimental wgmma_tma family on an sm_90a GPU: every candidate bit-exact against the CPU
// reference over row, column and K tails, every epilogue option, grids with more tiles than SMs
// (each persistent block walks several tiles, so the ring's phases carry across tiles), repeated
// launches and a captured graph replayed with new activations. Skips elsewhere.
#include <fmt/format.h>

#include <cstdio>
#include <memory>

#include "generator/generator.hpp"
#include "runtime/capi/capi_args.hpp"
#include "runtime/serve/engine.hpp"
#include "tests/gpu/gpu_support.hpp"

namespace i8g::gputest {
namespace {

class WgmmaTma : public GpuTest {
 protected:
  void SetUp() override {
    GpuTest::SetUp();
    if (IsSkipped()) return;
    engine_ = std::make_unique<Engine>(0, test_cache_path());
    target_ = engine_->device().target;
    if (target_.arch != "sm_90a") GTEST_SKIP() << "wgmma_tma needs sm_90a, this GPU is " << target_.arch;
    target_.experimental_wgmma = true;
  }
  void TearDown() override {
    engine_.reset();
    GpuTest::TearDown();
  }
  std::vector<KernelSpec> specs(const GemmProblem& p) const {
    std::vector<KernelSpec> out;
    for (const KernelConfig& c : candidates(p, target_))
      if (c.family == Family::wgmma_tma) out.push_back({p, c, target_.arch});
    return out;
  }
  // Launches `spec` over m rows of fresh random operands (twice) and compares each result with
  // the CPU reference; returns the failures' reports.
  std::string check(const i8gemm_problem& p, const KernelSpec& spec, int64_t m) {
    HostOperands h = random_operands(p, m, rng_);
    Stream s;
    DeviceGemm d(shared_ctx(), p, h, s);
    const std::vector<uint8_t> want = reference_bytes(p, h);
    const KernelInstance k = engine_->instantiate(spec, m);
    i8gemm_args c = d.args();
    c.m = m;
    const I8gArgs a = args_from_c(&c, "test");
    std::string failures;
    for (int rep = 0; rep < 2; ++rep) {
      d.poison_out(s);
      k.launch(a, s.get());
      s.sync();
      const std::string r = compare_outputs(p, m, d.out_bytes(), want);
      if (!r.empty()) failures += fmt::format("{} M={} launch {}: {}\n", spec.name(), m, rep, r);
    }
    return failures;
  }
  std::unique_ptr<Engine> engine_;
  Target target_;
};

TEST_F(WgmmaTma, EveryCandidateIsExactOverTailsAndManyTiles) {
  struct Case {
    i8gemm_problem p;
    std::vector<int64_t> ms;
  };
  const Case cases[] = {
      {make_problem(2560, 4096), {1, 17, 128, 300, 2048}},  // 2048 rows: more tiles than SMs
      {make_problem(4096, 384), {64, 1000}},                 // three K tiles
      {make_problem(1000, 4080), {77}},                      // N and K tails
      {make_problem(1001, 4080), {77}},                      // odd N: element stores, no pairs
  };
  int runs = 0, exact = 0;
  for (const Case& c : cases)
    for (const KernelSpec& spec : specs(to_gemm_problem(c.p)))
      for (int64_t m : c.ms) {
        const std::string r = check(c.p, spec, m);
        EXPECT_TRUE(r.empty()) << r;
        runs += 2;
        exact += r.empty() ? 2 : 0;
      }
  ASSERT_GT(runs, 0);
  std::printf("[ figure ] wgmma_tma: %d of %d candidate launches exact\n", exact, runs);
}

TEST_F(WgmmaTma, EveryEpilogueOptionIsExact) {
  int runs = 0, exact = 0;
  for (i8gemm_out o : {I8GEMM_OUT_BF16, I8GEMM_OUT_F16, I8GEMM_OUT_F32, I8GEMM_OUT_I32})
    for (int flags = 0; flags < 4; ++flags) {
      const bool bias = flags & 1, asym = flags & 2;
      if (bias && o == I8GEMM_OUT_I32) continue;
      const i8gemm_problem p =
          make_problem(1000, 4080, I8GEMM_WEIGHT_NK, I8GEMM_SCALE_PER_TOKEN, I8GEMM_SCALE_PER_CHANNEL, o, bias, asym);
      const std::string r = check(p, specs(to_gemm_problem(p)).front(), 130);
      EXPECT_TRUE(r.empty()) << r;
      runs += 2;
      exact += r.empty() ? 2 : 0;
    }
  const i8gemm_problem tensor = make_problem(1000, 4080, I8GEMM_WEIGHT_NK, I8GEMM_SCALE_PER_TENSOR,
                                             I8GEMM_SCALE_PER_TENSOR);
  const std::string r = check(tensor, specs(to_gemm_problem(tensor)).back(), 130);
  EXPECT_TRUE(r.empty()) << r;
  std::printf("[ figure ] wgmma_tma epilogue options: %d of %d launches exact (+ per-tensor scales: %s)\n", exact,
              runs, r.empty() ? "exact" : "WRONG");
}

// 2x1 clusters (cm2, not yet run on a GPU when written): both blocks of a cluster walk the same
// units, the w tile is loaded half by each and multicast, each stage is released on both
// blocks' empty barriers. Cases: odd tile-row counts (the last unit's rank-1 tile lies past M:
// it computes and stores nothing), one unit only (M <= bm), many units per cluster (M = 8191:
// the ring's phases carry across units), N and K tails, N = 4160 (the last tile column's
// second w half lies wholly past N: its box is clamped), K = 384 (three K tiles, fewer than
// the stages).
TEST_F(WgmmaTma, ClusterConfigsAreExactOverOddTileRowsAndTails) {
  struct Case {
    i8gemm_problem p;
    std::vector<int64_t> ms;
  };
  const Case cases[] = {
      {make_problem(2560, 4096), {1, 64, 65, 129, 300, 641, 8191}},
      {make_problem(4160, 4096), {200, 1000}},
      {make_problem(1000, 4080), {77, 333}},
      {make_problem(1001, 4080), {77}},
      {make_problem(4096, 384), {1000}},
  };
  int runs = 0, exact = 0;
  for (const Case& c : cases)
    for (const KernelSpec& spec : specs(to_gemm_problem(c.p))) {
      if (spec.config.cluster_m == 1) continue;
      for (int64_t m : c.ms) {
        const std::string r = check(c.p, spec, m);
        EXPECT_TRUE(r.empty()) << r;
        runs += 2;
        exact += r.empty() ? 2 : 0;
      }
    }
  ASSERT_GT(runs, 0) << "no cm2 candidates";
  std::printf("[ figure ] wgmma_tma cm2: %d of %d launches exact\n", exact, runs);
}

// The first candidate and the last, a 2x1 cluster config (cuLaunchKernelEx with the cluster
// attribute, captured into the graph as a kernel node with its cluster shape).
TEST_F(WgmmaTma, GraphReplaysWithNewActivationsStayExact) {
  const i8gemm_problem p = make_problem(2560, 4096);
  const std::vector<KernelSpec> all = specs(to_gemm_problem(p));
  ASSERT_EQ(all.back().config.cluster_m, 2) << all.back().name();
  for (const KernelSpec& spec : {all.front(), all.back()}) {
    const int64_t m = 333;
    HostOperands h = random_operands(p, m, rng_);
    Stream s;
    DeviceGemm d(shared_ctx(), p, h, s);
    const KernelInstance k = engine_->instantiate(spec, m);
    i8gemm_args c = d.args();
    c.m = m;
    const I8gArgs a = args_from_c(&c, "test");
    CUgraph graph = nullptr;
    CUgraphExec exec = nullptr;
    I8G_CU(cuStreamBeginCapture(s.get(), CU_STREAM_CAPTURE_MODE_GLOBAL));
    k.launch(a, s.get());
    I8G_CU(cuStreamEndCapture(s.get(), &graph));
    I8G_CU(cuGraphInstantiateWithFlags(&exec, graph, 0));
    int exact = 0;
    for (int i = 0; i < 10; ++i) {
      HostOperands next = random_operands(p, m, rng_);
      next.w = h.w;
      next.w_scale = h.w_scale;
      d.update(next);
      d.poison_out(s);
      I8G_CU(cuGraphLaunch(exec, s.get()));
      s.sync();
      const std::string r = compare_outputs(p, m, d.out_bytes(), reference_bytes(p, next));
      EXPECT_TRUE(r.empty()) << spec.name() << " replay " << i << ": " << r;
      exact += r.empty();
    }
    driver().cuGraphExecDestroy(exec);
    driver().cuGraphDestroy(graph);
    std::printf("[ figure ] wgmma_tma %s: %d of 10 graph replays exact\n", spec.name().c_str(), exact);
  }
}

}  // namespace
}  // namespace i8g::gputest

// Programmatic dependent launch (templates/grid_order.cuh, runtime/gpu/kernel_instance.cpp): on
// sm_90 a generated kernel may start before the previous kernel in the stream has ended, and
// waits for it before touching memory. These tests launch one kernel back to back on two
// operand sets that share one output (and, for a split-K kernel, one workspace: its arrival
// counters), eagerly and as one captured graph replayed: the output must be exactly the last
// launch's result every time. A kernel that read or wrote before its wait would let the
// previous launch's stores land after its own, or find the counters mid-use.
#include <fmt/format.h>

#include <memory>

#include "core/options.hpp"
#include "runtime/capi/capi_args.hpp"
#include "runtime/serve/engine.hpp"
#include "tests/gpu/gpu_support.hpp"
#include "tests/gpu/kernel_check.hpp"

namespace i8g::gputest {
namespace {

// The engine (and target) of kernel_check.hpp's fixture.
class ProgrammaticLaunch : public KernelCheckTest {};

constexpr int kLaunches = 16;  // alternating a, b, ..., the last one b's

// kLaunches launches of `run_one` alternating a's and b's operands into b's output, eagerly then
// as one captured graph replayed three times; adds to the run counts (each must end exact).
template <class RunOne>
void back_to_back(const i8gemm_problem& p, int64_t m, std::mt19937& rng, RunOne run_one, int& exact, int& total) {
  HostOperands ha = random_operands(p, m, rng), hb = random_operands(p, m, rng);
  Stream s;
  DeviceGemm a(shared_ctx(), p, ha, s), b(shared_ctx(), p, hb, s);
  i8gemm_args ca = a.args(), cb = b.args();
  ca.out = cb.out;  // both write b's output
  ca.m = cb.m = m;
  const std::vector<uint8_t> want = reference_bytes(p, hb);
  auto launches = [&] {
    for (int i = 0; i < kLaunches; ++i) {
      i8gemm_args args = i % 2 ? cb : ca;
      run_one(args, s.get());
    }
  };

  b.poison_out(s);
  launches();
  s.sync();
  std::string r = compare_outputs(p, m, b.out_bytes(), want);
  EXPECT_TRUE(r.empty()) << "eager: " << r;
  exact += r.empty();
  ++total;

  CUgraph graph = nullptr;
  CUgraphExec exec = nullptr;
  I8G_CU(cuStreamBeginCapture(s.get(), CU_STREAM_CAPTURE_MODE_GLOBAL));
  launches();
  I8G_CU(cuStreamEndCapture(s.get(), &graph));
  I8G_CU(cuGraphInstantiateWithFlags(&exec, graph, 0));
  for (int replay = 0; replay < 3; ++replay) {
    b.poison_out(s);
    I8G_CU(cuGraphLaunch(exec, s.get()));
    s.sync();
    r = compare_outputs(p, m, b.out_bytes(), want);
    EXPECT_TRUE(r.empty()) << "graph replay " << replay << ": " << r;
    exact += r.empty();
    ++total;
  }
  driver().cuGraphExecDestroy(exec);
  driver().cuGraphDestroy(graph);
}

TEST_F(ProgrammaticLaunch, BackToBackRunsIntoOneOutputEndWithTheLastRunsResult) {
  struct Case {
    int64_t n, k, m;
    const char* what;
  };
  // The untuned default of each family that runs on the H200 (sm_90a): mma_sync split-K
  // (512 x 4096 at M <= 16), decode_mma (2560 x 4096 at M = 1), wgmma_tma (M = 100 and 256).
  const Case cases[] = {{512, 4096, 3, "mma_sync split-K"},
                        {2560, 4096, 1, "decode_mma"},
                        {2560, 4096, 100, "wgmma_tma, a row tail"},
                        {6144, 4096, 256, "wgmma_tma"}};
  int exact = 0, total = 0;
  for (const Case& c : cases) {
    const i8gemm_problem p = make_problem(c.n, c.k);
    engine_->prepare(to_gemm_problem(p), c.m);
    const std::optional<Candidate> chosen = engine_->kernel_for(to_gemm_problem(p), c.m);
    const std::string kernel = chosen ? to_string(*chosen) : "?";
    SCOPED_TRACE(fmt::format("{} M={} ({}): {}", describe(p), c.m, c.what, kernel));
    back_to_back(p, c.m, rng_, [&](i8gemm_args& args, CUstream s) {
      engine_->run(to_gemm_problem(p), args_from_c(&args, "test"), s);
    }, exact, total);
  }
  std::printf("[ figure ] programmatic launches: %d of %d runs of %d back-to-back launches ended exact (PDL %s)\n",
              exact, total, kLaunches, options().pdl ? "on" : "off");
}

// The trigger twins (pdl_trigger 1: right after the wait, 2: late; the tuner races them): the
// next launch's blocks are placed while this one's run, and must still find its output and its
// split-K counters finished. decode_mma in registers and in the shared ring, wgmma_tma ping-pong,
// cooperative with a row tail, a 2x1 cluster and split-K.
TEST_F(ProgrammaticLaunch, TriggerTwinsBackToBackEndWithTheLastRunsResult) {
  if (target_.sm < 90) GTEST_SKIP() << "griddepcontrol needs sm_90";
  struct Case {
    int64_t n, k, m;
    Family family;
    const char* config;
  };
  const Case cases[] = {{2560, 4096, 1, Family::decode_mma, "bm8_bn32_bk128_wk4_s2_sk1"},
                        {2560, 4096, 16, Family::decode_mma, "bm16_bn16_bk128_wk4_s3_sk2_sc1"},
                        {2560, 4096, 64, Family::wgmma_tma, "bm64_bn48_bk128_wg2_s16_sc2_sk1"},
                        {2560, 4096, 100, Family::wgmma_tma, "bm128_bn64_bk128_wg2_s8_sc1_sk1"},
                        {6144, 4096, 256, Family::wgmma_tma, "bm128_bn128_bk128_wg2_s7_sc2_sk1_cm2"},
                        {2560, 4096, 64, Family::wgmma_tma, "bm64_bn64_bk128_wg2_s8_sc2_sk2"}};
  std::vector<KernelSpec> specs;
  std::vector<int64_t> ms;
  for (const Case& c : cases) {
    const GemmProblem p = to_gemm_problem(make_problem(c.n, c.k));
    const KernelConfig plain = KernelConfig::parse(c.family, c.config);
    ASSERT_EQ(invalid_reason(p, plain, target_), "") << c.config;
    for (const KernelConfig& v : trigger_twins(p, plain, target_)) {
      specs.push_back({p, v, target_.arch});
      ms.push_back(c.m);
    }
  }
  ASSERT_EQ(specs.size(), 12u);
  precompile(specs);
  int exact = 0, total = 0;
  for (size_t i = 0; i < specs.size(); ++i) {
    const i8gemm_problem p = make_problem(specs[i].problem.n, specs[i].problem.k);
    SCOPED_TRACE(fmt::format("{} M={}", specs[i].name(), ms[i]));
    const KernelInstance k = engine_->instantiate(specs[i], ms[i]);
    back_to_back(p, ms[i], rng_, [&](i8gemm_args& args, CUstream s) { k.launch(args_from_c(&args, "test"), s); },
                 exact, total);
    const std::string left = counters_left(k, ms[i]);
    EXPECT_TRUE(left.empty()) << left;
  }
  EXPECT_EQ(exact, total);
  std::printf("[ figure ] trigger twins: %d of %d runs of %d back-to-back launches ended exact (PDL %s)\n", exact,
              total, kLaunches, options().pdl ? "on" : "off");
}

}  // namespace
}  // namespace i8g::gputest

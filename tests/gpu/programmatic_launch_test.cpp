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
    HostOperands ha = random_operands(p, c.m, rng_), hb = random_operands(p, c.m, rng_);
    Stream s;
    DeviceGemm a(shared_ctx(), p, ha, s), b(shared_ctx(), p, hb, s);
    i8gemm_args ca = a.args(), cb = b.args();
    ca.out = cb.out;  // both write b's output
    const std::vector<uint8_t> want = reference_bytes(p, hb);
    auto launches = [&] {
      for (int i = 0; i < kLaunches; ++i) {
        i8gemm_args args = i % 2 ? cb : ca;
        engine_->run(to_gemm_problem(p), args_from_c(&args, "test"), s.get());
      }
    };

    b.poison_out(s);
    launches();
    s.sync();
    std::string r = compare_outputs(p, c.m, b.out_bytes(), want);
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
      r = compare_outputs(p, c.m, b.out_bytes(), want);
      EXPECT_TRUE(r.empty()) << "graph replay " << replay << ": " << r;
      exact += r.empty();
      ++total;
    }
    driver().cuGraphExecDestroy(exec);
    driver().cuGraphDestroy(graph);
  }
  std::printf("[ figure ] programmatic launches: %d of %d runs of %d back-to-back launches ended exact (PDL %s)\n",
              exact, total, kLaunches, options().pdl ? "on" : "off");
}

}  // namespace
}  // namespace i8g::gputest

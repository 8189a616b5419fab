// Split-K (mma_sync with SPLIT_K > 1; wgmma_tma's also in wgmma_tma_test): the slices' int32
// partials meet in a per-prepare workspace and the last slice to arrive runs the epilogue.
// These tests pin that the engine really picks split-K where they say so (the kernel name
// carries _sk<s>), that the result is bit-exact for every epilogue option, that back-to-back
// runs and graph replays stay exact (each launch leaves its arrival counters at zero for the
// next), and that a run captured in a graph still adds exactly one node (the workspace is
// cleared once, at prepare).
#include <fmt/format.h>

#include <memory>

#include "core/options.hpp"
#include "generator/generator.hpp"
#include "templates/splitk.h"
#include "runtime/capi/capi_args.hpp"
#include "runtime/serve/engine.hpp"
#include "tests/gpu/gpu_support.hpp"
#include "tests/gpu/kernel_check.hpp"

namespace i8g::gputest {
namespace {

class SplitK : public GpuTest {
 protected:
  void SetUp() override {
    GpuTest::SetUp();
    if (IsSkipped()) return;
    engine_ = std::make_unique<Engine>(0, test_cache_path());
  }
  void TearDown() override {
    engine_.reset();
    GpuTest::TearDown();
  }
  // Prepares p on the test's engine and returns the kernel it chose for m rows.
  std::string prepare(const i8gemm_problem& p, int64_t max_m, int64_t m) {
    engine_->prepare(to_gemm_problem(p), max_m);
    return chosen(p, m);
  }
  // The text of what the engine runs for m rows ("" when unprepared).
  std::string chosen(const i8gemm_problem& p, int64_t m) const {
    const std::optional<Candidate> c = engine_->kernel_for(to_gemm_problem(p), m);
    return c ? to_string(*c) : std::string();
  }
  void run(const i8gemm_problem& p, const DeviceGemm& d, int64_t m, const Stream& s) {
    i8gemm_args c = d.args();
    c.m = m;
    engine_->run(to_gemm_problem(p), args_from_c(&c, "test"), s.get());
  }
  // Fresh random operands for m rows, one run on the engine, compared with the CPU reference.
  std::string run_and_check(const i8gemm_problem& p, int64_t m) {
    HostOperands h = random_operands(p, m, rng_);
    Stream s;
    DeviceGemm d(shared_ctx(), p, h, s);
    d.poison_out(s);
    run(p, d, m, s);
    s.sync();
    return compare_outputs(p, m, d.out_bytes(), reference_bytes(p, h));
  }
  std::unique_ptr<Engine> engine_;
};

// The split of a generated kernel's name; 0 for a cuBLASLt bucket.
int split_of(const std::string& kernel) {
  try {
    return KernelSpec::parse_name(kernel).config.split_k;
  } catch (const Error&) {
    return 0;
  }
}

// 512 x 4096 at M = 1 has at most 16 column tiles for 132 SMs: the default splits K (768 x 4096
// did until session 30; its M <= 16 default is decode_mma since).
TEST_F(SplitK, DecodeDefaultSplitsAndEveryEpilogueOptionIsExact) {
  if (!options().family.empty()) GTEST_SKIP() << "I8GEMM_FAMILY overrides the default family";
  int checked = 0;
  for (auto o : {I8GEMM_OUT_BF16, I8GEMM_OUT_F16, I8GEMM_OUT_F32, I8GEMM_OUT_I32})
    for (auto act : {I8GEMM_SCALE_PER_TENSOR, I8GEMM_SCALE_PER_TOKEN})
      for (int flags = 0; flags < 4; ++flags) {
        const bool bias = flags & 1, asym = flags & 2;
        if (bias && o == I8GEMM_OUT_I32) continue;
        const i8gemm_problem p = make_problem(512, 4096, I8GEMM_WEIGHT_NK, act,
                                              act == I8GEMM_SCALE_PER_TOKEN ? I8GEMM_SCALE_PER_CHANNEL
                                                                            : I8GEMM_SCALE_PER_TENSOR,
                                              o, bias, asym);
        const std::string kernel = prepare(p, 16, 1);
        SCOPED_TRACE(kernel);
        ASSERT_GT(split_of(kernel), 1) << "the M = 1 default should split K";
        for (int64_t m : {int64_t(1), int64_t(5), int64_t(16)}) {
          const std::string r = run_and_check(p, m);
          EXPECT_TRUE(r.empty()) << describe(p) << " M=" << m << ": " << r;
          ++checked;
        }
      }
  std::printf("[ figure ] split-K: %d exact runs over every epilogue option\n", checked);
}

// The arrival counters must be back at zero after every launch: twenty runs in a row with new
// activations each time, then twenty graph replays, each compared with its own reference.
TEST_F(SplitK, RepeatedRunsAndGraphReplaysStayExact) {
  if (!options().family.empty()) GTEST_SKIP() << "I8GEMM_FAMILY overrides the default family";
  // 512 x 4096: its M <= 16 default is mma_sync split-K (2560 x 4096's is decode_mma unsplit
  // since 2026-12-01, 768 x 4096's since session 30).
  const i8gemm_problem p = make_problem(512, 4096);
  const int64_t M = 3;
  const std::string kernel = prepare(p, 64, M);
  ASSERT_GT(split_of(kernel), 1) << kernel;
  HostOperands h = random_operands(p, M, rng_);
  Stream s;
  DeviceGemm d(shared_ctx(), p, h, s);
  for (int i = 0; i < 20; ++i) {
    const std::string r = rerun_with_new_activations(p, M, h, d, s, rng_, [&] { run(p, d, M, s); });
    ASSERT_TRUE(r.empty()) << "eager run " << i << ": " << r;
  }
  CUgraph graph = nullptr;
  CUgraphExec exec = nullptr;
  I8G_CU(cuStreamBeginCapture(s.get(), CU_STREAM_CAPTURE_MODE_GLOBAL));
  run(p, d, M, s);
  I8G_CU(cuStreamEndCapture(s.get(), &graph));
  size_t nodes = 0;
  I8G_CU(cuGraphGetNodes(graph, nullptr, &nodes));
  EXPECT_EQ(nodes, 1u) << "a split-K run is one kernel node (no memset, no second kernel)";
  I8G_CU(cuGraphInstantiateWithFlags(&exec, graph, 0));
  for (int i = 0; i < 20; ++i) {
    auto replay = [&] { I8G_CU(cuGraphLaunch(exec, s.get())); };
    const std::string r = rerun_with_new_activations(p, M, h, d, s, rng_, replay);
    EXPECT_TRUE(r.empty()) << "replay " << i << ": " << r;
  }
  driver().cuGraphExecDestroy(exec);
  driver().cuGraphDestroy(graph);
  std::printf("[ figure ] split-K %s: 20 eager runs + 20 graph replays exact, %zu node\n", kernel.c_str(),
              nodes);
}

// Every split-K candidate the tuner would race (mma_sync's and, on sm_90a, wgmma_tma's),
// launched through an instance of its own (as the autotuner does: a fresh zeroed workspace per
// kernel), each exact, at M = 1 and a row tail; and every launch leaves its counters at zero.
TEST_F(SplitK, EveryCandidateOfATp4ShapeIsExact) {
  const i8gemm_problem p = make_problem(4096, 2048);
  const GemmProblem gp = to_gemm_problem(p);
  const Target& t = engine_->device().target;
  int ran = 0;
  for (int64_t m : {int64_t(1), int64_t(37)}) {
    HostOperands h = random_operands(p, m, rng_);
    Stream s;
    DeviceGemm d(shared_ctx(), p, h, s);
    const std::vector<uint8_t> want = reference_bytes(p, h);
    std::vector<KernelSpec> specs;
    for (const KernelConfig& c : candidates(gp, t))
      if (c.split_k > 1) specs.push_back({gp, c, t.arch});
    ASSERT_FALSE(specs.empty());
    for (const KernelSpec& spec : specs) {
      const KernelInstance k = engine_->instantiate(spec, m);
      ASSERT_GE(k.workspace().bytes(), workspace_bytes(spec, m)) << spec.name();
      i8gemm_args c = d.args();
      c.m = m;
      const I8gArgs a = args_from_c(&c, "test");
      for (int rep = 0; rep < 2; ++rep) {  // the second launch relies on the first's counter reset
        d.poison_out(s);
        k.launch(a, s.get());
        s.sync();
        const std::string r = compare_outputs(p, m, d.out_bytes(), want);
        EXPECT_TRUE(r.empty()) << spec.name() << " M=" << m << " launch " << rep << ": " << r;
        ++ran;
      }
      const std::string left = counters_left(k, m);
      ASSERT_TRUE(left.empty()) << spec.name() << ": " << left;
    }
  }
  std::printf("[ figure ] split-K candidates of %s: %d launches exact\n", describe(p).c_str(), ran);
}

// One bucket's kernel serves every M up to its bound with one workspace: the tile blocks of a
// smaller grid are a prefix of a larger one's, so alternating M must stay exact.
TEST_F(SplitK, AlternatingRowCountsShareOneBucketWorkspace) {
  if (!options().family.empty()) GTEST_SKIP() << "I8GEMM_FAMILY overrides the default family";
  const i8gemm_problem p = make_problem(512, 4096);
  // Rows up to 16: from M = 17 up sm_90a's default is wgmma_tma, not split untuned (the M = 16
  // bucket of 512 x 4096 is mma_sync split-K).
  ASSERT_GT(split_of(prepare(p, 16, 16)), 1) << chosen(p, 16);
  int exact = 0;
  for (int64_t m : {1, 9, 2, 16, 1, 13, 7, 16, 3}) {
    const std::string r = run_and_check(p, m);
    EXPECT_TRUE(r.empty()) << chosen(p, m) << " M=" << m << ": " << r;
    exact += r.empty();
  }
  std::printf("[ figure ] split-K bucket reuse across M: %d of 9 runs exact\n", exact);
}

// An instance carries the workspace for the rows it was made for; a launch over more rows
// would run past its end, so it is refused before anything is enqueued.
TEST_F(SplitK, LaunchBeyondTheWorkspaceIsRefused) {
  const i8gemm_problem p = make_problem(768, 4096);
  const GemmProblem gp = to_gemm_problem(p);
  const Target& t = engine_->device().target;
  KernelConfig c = heuristic_default(gp, t, 1, Family::mma_sync);
  ASSERT_GT(c.split_k, 1);
  const KernelInstance k = engine_->instantiate({gp, c, t.arch}, 1);
  EXPECT_GE(k.workspace().bytes(), workspace_bytes({gp, c, t.arch}, 1));
  I8gArgs a{};
  a.m = 4096;
  try {
    k.launch(a, nullptr);
    FAIL() << "a split-K launch over more rows than its workspace holds must throw";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("workspace"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace i8g::gputest

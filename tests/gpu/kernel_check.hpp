// A fixture for the GPU tests of one kernel family's candidates (wgmma_tma_test, decode_mma_test):
// an engine for instances of generated kernels, shared random operands and CPU references per M,
// bit-exact checks of repeated launches, split-K counters left at zero, and graph replays with
// new activations. Skips where no GPU is found (GpuTest).
#pragma once
#include <fmt/format.h>

#include <memory>
#include <string>
#include <vector>

#include "cache/cache.hpp"
#include "generator/generator.hpp"
#include "generator/packed_weight.hpp"
#include "runtime/capi/capi_args.hpp"
#include "runtime/compile/compiler.hpp"
#include "runtime/serve/engine.hpp"
#include "runtime/serve/jit.hpp"
#include "templates/splitk.h"
#include "tests/gpu/gpu_support.hpp"

namespace i8g::gputest {

// A split-K instance's arrival counters after its launches over m rows: each tile's counter
// block (templates/splitk.h; wgmma_tma's cooperative halves count in words 0 and 1) must be back
// at zero; "" when it is, or the first that is not. Tiles, not the grid (wgmma_tma's grid is
// persistent).
// wgmma_tma's dynamic schedule (_ds1): its one block of counters (tiles claimed, blocks done).
inline std::string counters_left(const KernelInstance& k, int64_t m) {
  const KernelConfig& c = k.spec().config;
  if (c.split_k == 1 && c.dynamic_schedule == 0) return {};
  std::vector<int32_t> words(k.workspace().bytes() / 4);
  k.workspace().download(words.data(), k.workspace().bytes());
  if (c.dynamic_schedule) {
    for (size_t w = 0; w < words.size(); ++w)
      if (words[w] != 0) return fmt::format("schedule counter word {} is {} after the launch", w, words[w]);
    return {};
  }
  const int64_t tiles = ((m + c.bm - 1) / c.bm) * ((k.spec().problem.n + c.bn - 1) / c.bn);
  const size_t block = size_t(splitk::tile_words(c.split_k, c.bm, c.bn));
  for (int64_t t = 0; t < tiles; ++t)
    for (size_t w = 0; w < size_t(splitk::kCounterWords); ++w)
      if (words.at(size_t(t) * block + w) != 0)
        return fmt::format("counter word {} of tile {} is {} after the launch", w, t, words[size_t(t) * block + w]);
  return {};
}

class KernelCheckTest : public GpuTest {
 protected:
  void SetUp() override {
    GpuTest::SetUp();
    if (IsSkipped()) return;
    engine_ = std::make_unique<Engine>(0, test_cache_path());
    target_ = engine_->device().target;
  }
  void TearDown() override {
    engine_.reset();
    GpuTest::TearDown();
  }
  // `family`'s candidates for p on this GPU.
  std::vector<KernelSpec> family_specs(const GemmProblem& p, Family family) const {
    std::vector<KernelSpec> out;
    for (const KernelConfig& c : candidates(p, target_))
      if (c.family == family) out.push_back({p, c, target_.arch});
    return out;
  }
  // Random operands over m rows and their CPU reference, made once and shared by every spec
  // checked at that M (the reference dominated these tests' time when each spec made its own).
  struct Expected {
    HostOperands h;
    std::vector<uint8_t> want;
  };
  Expected expected(const i8gemm_problem& p, int64_t m) {
    Expected e{random_operands(p, m, rng_), {}};
    e.h.w_colsum = weight_colsum(to_gemm_problem(p), e.h.w);  // DeviceGemm checks the GPU's
    e.want = reference_bytes(p, e.h);
    return e;
  }
  // Points a at the weight `spec` reads: d's [N,K] upload, or for a packed-weight kernel the pack
  // of the host weight `w` (generator/packed_weight.hpp), uploaded into `keep`.
  static void use_weight(const KernelSpec& spec, const std::vector<int8_t>& w, DevBuf& keep, I8gArgs& a) {
    if (!spec.config.packed_weight) return;
    keep = DevBuf(pack_weight(packed_weight_layout(spec), w.data()));
    a.w = keep.as<const signed char>();
  }
  // Launches `spec` over e's m rows (twice: the second relies on the first leaving the split-K
  // counters at zero) and compares each result with the CPU reference; returns the failures'
  // reports.
  std::string check(const i8gemm_problem& p, const KernelSpec& spec, Expected& e) {
    const int64_t m = e.h.m;
    Stream s;
    DeviceGemm d(shared_ctx(), p, e.h, s);
    const KernelInstance k = engine_->instantiate(spec, m);
    i8gemm_args c = d.args();
    c.m = m;
    I8gArgs a = args_from_c(&c, "test");
    DevBuf packed;
    use_weight(spec, e.h.w, packed, a);
    std::string failures;
    for (int rep = 0; rep < 2; ++rep) {
      d.poison_out(s);
      k.launch(a, s.get());
      s.sync();
      const std::string r = compare_outputs(p, m, d.out_bytes(), e.want);
      if (!r.empty()) failures += fmt::format("{} M={} launch {}: {}\n", spec.name(), m, rep, r);
    }
    if (const std::string r = counters_left(k, m); !r.empty())
      failures += fmt::format("{} M={}: {}\n", spec.name(), m, r);
    return failures;
  }
  // Compiles what the test cache lacks of `specs` all at once, in parallel (as tune does), so
  // that instantiate() finds each in the cache instead of compiling them one at a time (a sweep
  // of 64 wgmma_tma kernels took 128 s that way on the H200 machine). A failed compile fails the
  // test here, with its log.
  void precompile(const std::vector<KernelSpec>& specs) {
    cache::Cache c(test_cache_path(), cache::Cache::Mode::read_write);
    const std::unique_ptr<Compiler> compiler = make_compiler(target_);
    JitPolicy policy;
    policy.sass = Sass::skip;
    for (const JitOutcome& o : fetch_or_compile_all(&c, *compiler, jit_requests(specs), target_, policy))
      EXPECT_NE(o.status, JitOutcome::Status::failed) << o.name << ": " << o.error;
  }
  // Every spec at every M of the case, each M's operands shared; adds to the launch counts.
  void check_all(const i8gemm_problem& p, const std::vector<KernelSpec>& specs,
                 const std::vector<int64_t>& ms, int& runs, int& exact) {
    precompile(specs);
    for (int64_t m : ms) {
      Expected e = expected(p, m);
      for (const KernelSpec& spec : specs) {
        const std::string r = check(p, spec, e);
        EXPECT_TRUE(r.empty()) << r;
        runs += 2;
        exact += r.empty() ? 2 : 0;
      }
    }
  }
  // Captures one launch of `spec` over m rows in a graph and replays it ten times with new
  // activations (the weights stay), each compared with its own reference; returns how many
  // replays were exact.
  int graph_replays_exact(const KernelSpec& spec, int64_t m) {
    const i8gemm_problem p = make_problem(spec.problem.n, spec.problem.k);
    HostOperands h = random_operands(p, m, rng_);
    Stream s;
    DeviceGemm d(shared_ctx(), p, h, s);
    const KernelInstance k = engine_->instantiate(spec, m);
    i8gemm_args c = d.args();
    c.m = m;
    I8gArgs a = args_from_c(&c, "test");
    DevBuf packed;
    use_weight(spec, h.w, packed, a);
    CUgraph graph = nullptr;
    CUgraphExec exec = nullptr;
    I8G_CU(cuStreamBeginCapture(s.get(), CU_STREAM_CAPTURE_MODE_GLOBAL));
    k.launch(a, s.get());
    I8G_CU(cuStreamEndCapture(s.get(), &graph));
    I8G_CU(cuGraphInstantiateWithFlags(&exec, graph, 0));
    int exact = 0;
    for (int i = 0; i < 10; ++i) {
      auto replay = [&] { I8G_CU(cuGraphLaunch(exec, s.get())); };
      const std::string r = rerun_with_new_activations(p, m, h, d, s, rng_, replay);
      EXPECT_TRUE(r.empty()) << spec.name() << " replay " << i << ": " << r;
      exact += r.empty();
    }
    driver().cuGraphExecDestroy(exec);
    driver().cuGraphDestroy(graph);
    const std::string left = counters_left(k, m);
    EXPECT_TRUE(left.empty()) << spec.name() << ": " << left;
    return exact;
  }
  std::unique_ptr<Engine> engine_;
  Target target_;
};

}  // namespace i8g::gputest

// Serving controls on the GPU: strict mode (prepare never compiles; what the cache lacks is
// I8GEMM_ERROR_NOT_IN_CACHE naming every missing binary), i8gemm_chosen (what runs per M and
// where it came from) and the log callback (a cold prepare reports each kernel it compiles).
#include <fmt/format.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cache/cache.hpp"
#include "core/log.hpp"
#include "core/options.hpp"
#include "runtime/report/report.hpp"
#include "runtime/capi/capi_args.hpp"
#include "runtime/serve/engine.hpp"
#include "runtime/gpu/cublaslt.hpp"
#include "tests/gpu/gpu_support.hpp"
#include "tests/support/files.hpp"

namespace i8g::gputest {
namespace {

using testsupport::TempDir;

class ServingModes : public GpuTest {};

i8gemm_options strict_options() {
  i8gemm_options o{};
  o.struct_size = sizeof o;
  o.strict = 1;
  return o;
}

TEST_F(ServingModes, StrictPrepareOnAnEmptyCacheNamesEveryMissingBinaryAndCompilesNothing) {
  TempDir dir;
  const std::string path = dir.file("cache.sqlite");
  const i8gemm_options o = strict_options();
  i8gemm_context* ctx = nullptr;
  I8G_OK(i8gemm_create_with_options(0, path.c_str(), &o, &ctx));
  const i8gemm_problem p = make_problem(2560, 4096);
  EXPECT_EQ(i8gemm_prepare(ctx, &p, 4096), I8GEMM_ERROR_NOT_IN_CACHE);
  const std::string err = i8gemm_last_error();
  EXPECT_NE(err.find("strict mode"), std::string::npos) << err;
  EXPECT_NE(err.find("utility module"), std::string::npos) << err;
  EXPECT_NE(err.find("i8g_"), std::string::npos) << "the missing kernels are named: " << err;
  i8gemm_choice c{};
  EXPECT_EQ(i8gemm_chosen(ctx, &p, 1, &c), I8GEMM_ERROR_NOT_PREPARED) << "a failed prepare prepares nothing";
  i8gemm_destroy(ctx);
  std::printf("[ figure ] strict prepare on an empty cache: %s\n", err.substr(0, 200).c_str());
}

TEST_F(ServingModes, StrictServesWhatANonStrictPrepareStoredAndChosenSaysWhereItCameFrom) {
  TempDir dir;
  const std::string path = dir.file("cache.sqlite");
  const i8gemm_problem p = make_problem(2560, 4096);
  {  // a cold, non-strict prepare compiles (and says so at info level) and stores
    struct Lines {
      std::vector<std::string> v;
    } lines;
    i8gemm_set_log_callback([](int, const char* m, void* u) { static_cast<Lines*>(u)->v.push_back(m); }, &lines);
    I8G_OK(i8gemm_set_log_level(I8GEMM_LOG_INFO));
    i8gemm_context* ctx = nullptr;
    I8G_OK(i8gemm_create(0, path.c_str(), &ctx));
    I8G_OK(i8gemm_prepare(ctx, &p, 256));
    i8gemm_set_log_callback(nullptr, nullptr);
    I8G_OK(i8gemm_set_log_level(I8GEMM_LOG_WARNING));
    int compiling = 0;
    for (const std::string& l : lines.v) compiling += l.rfind("compiling ", 0) == 0;
    EXPECT_GT(compiling, 0) << "a cold prepare logs each kernel it compiles at info level";
    i8gemm_choice c{};
    I8G_OK(i8gemm_chosen(ctx, &p, 1, &c));
    EXPECT_EQ(c.binary, I8GEMM_BINARY_COMPILED) << c.kernel;
    EXPECT_EQ(c.origin, I8GEMM_CHOICE_UNTUNED_DEFAULT) << c.kernel;
    EXPECT_EQ(i8gemm_chosen(ctx, &p, 257, &c), I8GEMM_ERROR_NOT_PREPARED) << "past max_m";
    i8gemm_destroy(ctx);
  }
  {  // The cold prepare spawned no nvdisasm: what it stored, the utility module included, has the
     // report of the ptxas log and the CUBIN, no SASS, and says why.
    cache::Cache c(path, cache::Cache::Mode::read_only);
    bool utility = false;
    for (const cache::StoredKernel& k : c.list_kernels({"", true})) {
      utility |= k.family == "utility";
      EXPECT_TRUE(k.isa.empty()) << k.key.name;
      const ResourceReport rep = ResourceReport::from_json(nlohmann::json::parse(k.report_json));
      EXPECT_EQ(rep.sass_note, kSassSkipped) << k.key.name;
      EXPECT_GT(rep.registers, 0) << k.key.name << " (" << k.lowered_name << "): " << k.report_json;
    }
    EXPECT_TRUE(utility) << "the cold prepare stored the utility module";
  }
  // A cuBLASLt winner for M up to 64: strict serves it and the cached defaults above it.
  put_cublaslt_winner(path, p, 64);
  const i8gemm_options o = strict_options();
  i8gemm_context* ctx = nullptr;
  I8G_OK(i8gemm_create_with_options(0, path.c_str(), &o, &ctx));
  I8G_OK(i8gemm_prepare(ctx, &p, 256));
  i8gemm_choice c{};
  I8G_OK(i8gemm_chosen(ctx, &p, 17, &c));
  EXPECT_STREQ(c.kernel, "cublaslt:algo=0");
  EXPECT_EQ(c.origin, I8GEMM_CHOICE_TUNED);
  EXPECT_EQ(c.binary, I8GEMM_BINARY_CUBLASLT);
  // The tuned bucket (M <= 64) may be served as several of prepare's buckets (its own bounds,
  // 1, 16, 32, ...), each by the same winner: M = 17 lies in one that ends between 17 and 64.
  EXPECT_GE(c.bucket_max_m, 17);
  EXPECT_LE(c.bucket_max_m, 64);
  I8G_OK(i8gemm_chosen(ctx, &p, 64, &c));
  EXPECT_STREQ(c.kernel, "cublaslt:algo=0");
  EXPECT_EQ(c.origin, I8GEMM_CHOICE_TUNED);
  EXPECT_EQ(c.bucket_max_m, 64);
  I8G_OK(i8gemm_chosen(ctx, &p, 200, &c));
  EXPECT_EQ(c.binary, I8GEMM_BINARY_CACHED) << c.kernel;
  EXPECT_EQ(c.origin, I8GEMM_CHOICE_UNTUNED_DEFAULT) << c.kernel;
  EXPECT_EQ(c.bucket_max_m, 256);
  int exact = 0;
  for (int64_t m : {1, 17, 64, 65, 200}) {
    const std::string rep = run_and_compare(ctx, p, m, rng_);
    EXPECT_TRUE(rep.empty()) << rep;
    exact += rep.empty();
  }
  // A wider prepare needs kernels the cache lacks: refused, and the narrower one still serves.
  EXPECT_EQ(i8gemm_prepare(ctx, &p, 4096), I8GEMM_ERROR_NOT_IN_CACHE) << i8gemm_last_error();
  const std::string rep = run_and_compare(ctx, p, 100, rng_);
  EXPECT_TRUE(rep.empty()) << rep;
  i8gemm_destroy(ctx);
  std::printf("[ figure ] strict mode over a stored cache: %d of 5 runs exact; a wider prepare refused\n", exact);
}

// A cuBLASLt bucket's algorithm is fixed at prepare: the run path builds its layouts in place
// and asks no heuristic, so a graph captured over M values never run before replays exactly.
TEST_F(ServingModes, ACapturedGraphOverEveryMOfACublasLtBucketIsExact) {
  std::string why;
  if (!LtGemm::available(&why)) GTEST_SKIP() << "cuBLASLt not available: " << why;
  TempDir dir;
  const std::string path = dir.file("cache.sqlite");
  const i8gemm_problem p = make_problem(768, 4096);
  put_cublaslt_winner(path, p, 64);
  i8gemm_context* ctx = nullptr;
  I8G_OK(i8gemm_create(0, path.c_str(), &ctx));
  I8G_OK(i8gemm_prepare(ctx, &p, 64));
  i8gemm_choice c{};
  I8G_OK(i8gemm_chosen(ctx, &p, 64, &c));
  ASSERT_STREQ(c.kernel, "cublaslt:algo=0");
  const std::vector<int64_t> ms = {1, 2, 3, 5, 8, 13, 21, 34, 55, 64};
  Stream s;
  std::vector<HostOperands> hosts;
  std::vector<std::unique_ptr<DeviceGemm>> devs;
  for (int64_t m : ms) {
    hosts.push_back(random_operands(p, m, rng_));
    devs.push_back(std::make_unique<DeviceGemm>(ctx, p, hosts.back(), s));
    devs.back()->poison_out(s);
  }
  s.sync();
  CUgraph graph = nullptr;
  CUgraphExec exec = nullptr;
  I8G_CU(cuStreamBeginCapture(s.get(), CU_STREAM_CAPTURE_MODE_GLOBAL));
  for (size_t i = 0; i < ms.size(); ++i) {
    i8gemm_args a = devs[i]->args();
    const i8gemm_status st = i8gemm_run(ctx, &p, &a, s.handle());
    if (st != I8GEMM_SUCCESS) {
      driver().cuStreamEndCapture(s.get(), &graph);
      FAIL() << "M=" << ms[i] << ": " << i8gemm_last_error();
    }
  }
  I8G_CU(cuStreamEndCapture(s.get(), &graph));
  I8G_CU(cuGraphInstantiateWithFlags(&exec, graph, 0));
  I8G_CU(cuGraphLaunch(exec, s.get()));
  s.sync();
  int exact = 0;
  for (size_t i = 0; i < ms.size(); ++i) {
    const std::string r = compare_outputs(p, ms[i], devs[i]->out_bytes(), reference_bytes(p, hosts[i]));
    EXPECT_TRUE(r.empty()) << "M=" << ms[i] << ": " << r;
    exact += r.empty();
  }
  driver().cuGraphExecDestroy(exec);
  driver().cuGraphDestroy(graph);
  i8gemm_destroy(ctx);
  std::printf("[ figure ] one graph over %zu M values of a cuBLASLt bucket: %d exact\n", ms.size(), exact);
}

// Winners this setup cannot use (here: tuned under another generator, as after an upgrade) are
// kept and not used, and prepare says so in a warning that names what differs; the untuned
// default serves.
TEST_F(ServingModes, WinnersMeasuredElsewhereAreNamedInAWarningAndNotUsed) {
  TempDir dir;
  const std::string path = dir.file("cache.sqlite");
  const i8gemm_problem p = make_problem(2560, 4096);
  put_winner(path, p, 16, "cublaslt:algo=0", std::string(64, 'f'));
  // Through the C ABI's callback: i8gemm_create serves from libi8gemm.so, whose logger is not
  // this binary's copy (session 31's first H100 run: set_log_sink here caught nothing).
  std::string err;
  i8gemm_set_log_callback([](int, const char* m, void* u) { *static_cast<std::string*>(u) += std::string(m) + "\n"; },
                          &err);
  i8gemm_context* ctx = nullptr;
  const i8gemm_status created = i8gemm_create(0, path.c_str(), &ctx);
  const i8gemm_status prepared = created == I8GEMM_SUCCESS ? i8gemm_prepare(ctx, &p, 16) : created;
  i8gemm_set_log_callback(nullptr, nullptr);
  ASSERT_EQ(prepared, I8GEMM_SUCCESS) << i8gemm_last_error();
  EXPECT_NE(err.find("1 tuned bucket(s) of this problem measured elsewhere"), std::string::npos) << err;
  EXPECT_NE(err.find("generator ffffffffffff (this one: "), std::string::npos) << err;
  i8gemm_choice c{};
  I8G_OK(i8gemm_chosen(ctx, &p, 16, &c));
  EXPECT_STRNE(c.kernel, "cublaslt:algo=0") << "a winner measured elsewhere is not served";
  i8gemm_destroy(ctx);
}

// Every call puts the thread's current CUDA context back as it found it, here: none.
TEST_F(ServingModes, EveryCallLeavesTheThreadsCurrentContextAsItWas) {
  TempDir dir;
  const std::string path = dir.file("cache.sqlite");
  const i8gemm_problem p = make_problem(768, 4096);
  const int64_t m = 16;
  HostOperands h = random_operands(p, m, rng_);
  Stream s;  // made while the primary context is current (GpuTest::SetUp)
  auto current = [] {
    CUcontext c = nullptr;
    driver().cuCtxGetCurrent(&c);
    return c;
  };
  I8G_CU(cuCtxSetCurrent(nullptr));
  i8gemm_context* ctx = nullptr;
  I8G_OK(i8gemm_create(0, path.c_str(), &ctx));
  EXPECT_EQ(current(), nullptr) << "i8gemm_create";
  I8G_OK(i8gemm_prepare(ctx, &p, m));
  EXPECT_EQ(current(), nullptr) << "i8gemm_prepare";
  I8G_CU(cuCtxSetCurrent(ctx_));
  DeviceGemm d(ctx, p, h, s);
  d.poison_out(s);
  const i8gemm_args a = d.args();
  I8G_CU(cuCtxSetCurrent(nullptr));
  I8G_OK(i8gemm_run(ctx, &p, &a, s.handle()));
  EXPECT_EQ(current(), nullptr) << "i8gemm_run";
  i8gemm_choice c{};
  I8G_OK(i8gemm_chosen(ctx, &p, m, &c));
  EXPECT_EQ(current(), nullptr) << "i8gemm_chosen";
  i8gemm_destroy(ctx);
  EXPECT_EQ(current(), nullptr) << "i8gemm_destroy";
  I8G_CU(cuCtxSetCurrent(ctx_));
  s.sync();
  const std::string r = compare_outputs(p, m, d.out_bytes(), reference_bytes(p, h));
  EXPECT_TRUE(r.empty()) << r;
}

// With no cache location at all (no I8GEMM_CACHE, XDG_CACHE_HOME or HOME, as in some
// containers) an engine still serves: kernels are compiled in memory, with one warning. Through
// the engine itself: the options this test installs reach this binary's copy of the library,
// not libi8gemm.so's (which read the environment once).
TEST_F(ServingModes, NoCacheLocationServesWithoutACache) {
  Options o = options();
  o.cache.clear();
  o.xdg_cache_home.clear();
  o.home.clear();
  ScopedOptions scope(o);
  std::string err;
  set_log_sink([](int, const char* m, void* u) { *static_cast<std::string*>(u) += std::string(m) + "\n"; }, &err);
  std::unique_ptr<Engine> e;
  try {
    e = std::make_unique<Engine>(0, "");
  } catch (const std::exception& ex) {
    set_log_sink(nullptr, nullptr);
    FAIL() << ex.what();
  }
  set_log_sink(nullptr, nullptr);
  EXPECT_NE(err.find("serving without a cache"), std::string::npos) << "logged: '" << err << "'";
  const i8gemm_problem p = make_problem(768, 4096);
  const GemmProblem g = to_gemm_problem(p);
  const int64_t m = 16;
  e->prepare(g, m);
  const std::optional<Choice> c = e->choice_for(g, m);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->binary, Choice::Binary::compiled) << c->kernel;
  HostOperands h = random_operands(p, m, rng_);
  Stream s;
  DeviceGemm d(nullptr, p, h, s);
  d.poison_out(s);
  const i8gemm_args ca = d.args();
  e->run(g, args_from_c(&ca, "test"), reinterpret_cast<CUstream>(s.handle()));
  s.sync();
  const std::string rep = compare_outputs(p, m, d.out_bytes(), reference_bytes(p, h));
  EXPECT_TRUE(rep.empty()) << rep;
  e.reset();
  I8G_CU(cuCtxSetCurrent(ctx_));
}

}  // namespace
}  // namespace i8g::gputest

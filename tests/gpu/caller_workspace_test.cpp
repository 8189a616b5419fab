// Runs of one problem on several streams at once (issue 14 item 3): plain runs, which the
// library orders across streams, and runs through i8gemm_run_with_workspace with a workspace each: two host threads driving two streams over the
// same split-K kernels, or the same cuBLASLt bucket, stay exact round after round, and so do two
// graphs captured with their own workspaces and replayed together. Every workspace starts as
// garbage (the poison byte everywhere) and serves several kernels in turn on its stream (a lane's
// row counts fall in different buckets): the run clears the counters it needs. Also: what
// i8gemm_workspace_size says is enough and a run writes nothing past it, and a workspace too
// small, misaligned or not device memory is refused with nothing launched.
#include <fmt/format.h>

#include <condition_variable>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/options.hpp"
#include "generator/types.hpp"
#include "runtime/gpu/cublaslt.hpp"
#include "tests/gpu/gpu_support.hpp"
#include "tests/support/files.hpp"

namespace i8g::gputest {
namespace {

constexpr size_t kGuard = 4096;  // poisoned bytes after each workspace's declared size

// The split of a generated kernel's name; 0 for a cuBLASLt bucket.
int split_of(const std::string& kernel) {
  try {
    return KernelSpec::parse_name(kernel).config.split_k;
  } catch (const Error&) {
    return 0;
  }
}

// Both lanes start each round's launches together, so that their streams hold work at once.
class Barrier {
 public:
  explicit Barrier(int n) : n_(n) {}
  void wait() {
    std::unique_lock lock(mu_);
    const int generation = generation_;
    if (++waiting_ == n_) {
      waiting_ = 0;
      ++generation_;
      cv_.notify_all();
      return;
    }
    cv_.wait(lock, [&] { return generation_ != generation; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int n_, waiting_ = 0, generation_ = 0;
};

// One stream's share: its stream, its workspace (poisoned, with a poisoned guard after it) and
// one set of device operands per row count, all run through that one workspace in turn.
struct Lane {
  Stream s;
  DevBuf ws;
  size_t ws_bytes = 0;
  std::vector<HostOperands> hosts;  // what each slot's device operands hold now
  std::vector<std::unique_ptr<DeviceGemm>> devs;
  std::mt19937 rng;
  std::vector<std::string> errors;
  bool plain = false;  // i8gemm_run: the problem's own scratch, which the library orders
};

class CallerWorkspace : public GpuTest {
 protected:
  void TearDown() override {
    if (lib_) i8gemm_destroy(lib_);
    GpuTest::TearDown();
  }
  // A context of its own on `cache_path` (kernels compiled once per run still come from the
  // shared cache) with p_ prepared for max_m rows.
  void open(const std::string& cache_path, const i8gemm_problem& p, int64_t max_m) {
    p_ = p;
    I8G_OK(i8gemm_create(0, cache_path.c_str(), &lib_));
    I8G_OK(i8gemm_prepare(lib_, &p_, max_m));
  }
  // 768 x 4096 prepared for 64 rows from a cache in `dir` whose one winner is cuBLASLt's.
  void open_cublaslt_bucket(const testsupport::TempDir& dir) {
    const std::string path = dir.file("cache.sqlite");
    const i8gemm_problem p = make_problem(768, 4096);
    put_cublaslt_winner(path, p, 64);
    open(path, p, 64);
    ASSERT_EQ(chosen(64), "cublaslt:algo=0");
  }
  std::string chosen(int64_t m) const {
    i8gemm_choice c{};
    return i8gemm_chosen(lib_, &p_, m, &c) == I8GEMM_SUCCESS ? c.kernel : "";
  }
  size_t size_for(int64_t max_m) const {
    size_t bytes = 0;
    const i8gemm_status st = i8gemm_workspace_size(lib_, &p_, max_m, &bytes);
    EXPECT_EQ(st, I8GEMM_SUCCESS) << i8gemm_last_error();
    return bytes;
  }
  std::unique_ptr<Lane> make_lane(const std::vector<int64_t>& ms, size_t ws_bytes, uint32_t seed) {
    auto lane = std::make_unique<Lane>();
    lane->rng.seed(seed);
    lane->ws_bytes = ws_bytes;
    lane->ws = DevBuf(ws_bytes + kGuard);
    lane->ws.fill(kPoison);
    for (int64_t m : ms) {
      lane->hosts.push_back(random_operands(p_, m, lane->rng));
      lane->devs.push_back(std::make_unique<DeviceGemm>(lib_, p_, lane->hosts.back(), lane->s));
    }
    return lane;
  }
  // New activations and per-row operands in every slot (the weights stay), outputs poisoned.
  void refill(Lane& l) const {
    for (size_t i = 0; i < l.devs.size(); ++i) {
      HostOperands next = random_operands(p_, l.hosts[i].m, l.rng);
      next.w = std::move(l.hosts[i].w);
      next.w_scale = std::move(l.hosts[i].w_scale);
      l.devs[i]->update(next);
      l.devs[i]->poison_out(l.s);
      l.hosts[i] = std::move(next);
    }
  }
  // Every slot's run on the lane's stream through its workspace (nothing waits in between).
  void enqueue(Lane& l) const {
    for (size_t i = 0; i < l.devs.size(); ++i) {
      const i8gemm_args a = l.devs[i]->args();
      const i8gemm_status st =
          l.plain ? i8gemm_run(lib_, &p_, &a, l.s.handle())
                  : i8gemm_run_with_workspace(lib_, &p_, &a, l.ws_bytes ? l.ws.as<void>() : nullptr, l.ws_bytes,
                                              l.s.handle());
      if (st != I8GEMM_SUCCESS)
        l.errors.push_back(fmt::format("M={}: {}: {}", a.m, i8gemm_status_string(st), i8gemm_last_error()));
    }
  }
  // After a sync: each slot against the reference of what it held; the guard untouched.
  void check(Lane& l, const std::string& when) const {
    for (size_t i = 0; i < l.devs.size(); ++i) {
      const std::string r = compare_outputs(p_, l.hosts[i].m, l.devs[i]->out_bytes(), reference_bytes(p_, l.hosts[i]));
      if (!r.empty()) l.errors.push_back(fmt::format("{} M={}: {} ({})", when, l.hosts[i].m, r, chosen(l.hosts[i].m)));
    }
    std::vector<uint8_t> all = l.ws.download<uint8_t>(l.ws_bytes + kGuard);
    for (size_t b = l.ws_bytes; b < all.size(); ++b)
      if (all[b] != kPoison) {
        l.errors.push_back(fmt::format("{}: byte {} past the workspace's {} was written", when, b, l.ws_bytes));
        break;
      }
  }
  // Two threads, one lane each, `rounds` rounds of refill, launch together, sync, check.
  void race(Lane& a, Lane& b, int rounds) {
    Barrier together(2);
    auto drive = [&](Lane& l) {
      driver().cuCtxSetCurrent(ctx_);
      for (int r = 0; r < rounds; ++r) {
        try {
          refill(l);
        } catch (const std::exception& e) {
          l.errors.push_back(e.what());
        }
        together.wait();
        try {
          enqueue(l);
          l.s.sync();
          check(l, fmt::format("round {}", r));
        } catch (const std::exception& e) {
          l.errors.push_back(e.what());
        }
      }
    };
    std::thread t0(drive, std::ref(a)), t1(drive, std::ref(b));
    t0.join();
    t1.join();
    for (const Lane* l : {&a, &b})
      for (size_t i = 0; i < l->errors.size() && i < 8; ++i) ADD_FAILURE() << (l == &a ? "lane 0: " : "lane 1: ") << l->errors[i];
  }
  i8gemm_context* lib_ = nullptr;
  i8gemm_problem p_{};
};

// 512 x 4096 below 64 rows: split-K defaults in several buckets (SplitK tests pin M = 1; since
// session 30 768 x 4096 takes decode_mma up to M = 16, unsplit).
const std::vector<int64_t> kSplitRows = {1, 3, 8, 17, 32};
// Row counts in the one cuBLASLt bucket of open_cublaslt_bucket.
const std::vector<int64_t> kLtRows = {1, 7, 24, 64};

TEST_F(CallerWorkspace, TwoThreadsOnTwoStreamsOverSplitKBucketsStayExact) {
  if (!options().family.empty()) GTEST_SKIP() << "I8GEMM_FAMILY overrides the default family";
  open(test_cache_path(), make_problem(512, 4096), 32);
  ASSERT_GT(split_of(chosen(1)), 1) << chosen(1);
  const size_t bytes = size_for(32);
  ASSERT_GT(bytes, 0u) << "a split-K bucket needs a workspace";
  auto a = make_lane(kSplitRows, bytes, seed_ + 1), b = make_lane(kSplitRows, bytes, seed_ + 2);
  const int rounds = 12;
  race(*a, *b, rounds);
  int split = 0;
  for (int64_t m : kSplitRows) split += split_of(chosen(m)) > 1;
  std::printf("[ figure ] caller workspaces, split-K: 2 threads x %d rounds x %zu runs (%d of them split-K), %zu "
              "bytes each\n",
              rounds, kSplitRows.size(), split, bytes);
}

TEST_F(CallerWorkspace, TwoThreadsOnTwoStreamsOverACublasLtBucketStayExact) {
  std::string why;
  if (!LtGemm::available(&why)) GTEST_SKIP() << "cuBLASLt not available: " << why;
  testsupport::TempDir dir;
  ASSERT_NO_FATAL_FAILURE(open_cublaslt_bucket(dir));
  const size_t bytes = size_for(64);
  EXPECT_GE(bytes, size_t(64) * 768 * 4) << "at least the int32 accumulator";
  auto a = make_lane(kLtRows, bytes, seed_ + 1), b = make_lane(kLtRows, bytes, seed_ + 2);
  race(*a, *b, 8);
  std::printf("[ figure ] caller workspaces, cuBLASLt: 2 threads x 8 rounds x %zu runs, %zu bytes each\n",
              kLtRows.size(), bytes);
}

// The plain run on two streams at once (issue 14 item 3): the problem's own split-K scratch, or
// cuBLASLt's accumulator, serves both lanes; the library orders a run after the last one of the
// problem on another stream (runtime/serve/stream_order.hpp), so every round stays exact.
TEST_F(CallerWorkspace, PlainRunsFromTwoThreadsOnTwoStreamsAreOrderedAndStayExact) {
  if (!options().family.empty()) GTEST_SKIP() << "I8GEMM_FAMILY overrides the default family";
  open(test_cache_path(), make_problem(512, 4096), 32);
  ASSERT_GT(split_of(chosen(1)), 1) << chosen(1);
  auto a = make_lane(kSplitRows, 0, seed_ + 1), b = make_lane(kSplitRows, 0, seed_ + 2);
  a->plain = b->plain = true;
  race(*a, *b, 12);
  std::printf("[ figure ] plain runs, split-K: 2 threads x 12 rounds x %zu runs on two streams\n", kSplitRows.size());
}

TEST_F(CallerWorkspace, PlainRunsOfACublasLtBucketFromTwoThreadsAreOrderedAndStayExact) {
  std::string why;
  if (!LtGemm::available(&why)) GTEST_SKIP() << "cuBLASLt not available: " << why;
  testsupport::TempDir dir;
  ASSERT_NO_FATAL_FAILURE(open_cublaslt_bucket(dir));
  auto a = make_lane(kLtRows, 0, seed_ + 1), b = make_lane(kLtRows, 0, seed_ + 2);
  a->plain = b->plain = true;
  race(*a, *b, 8);
}

// torch's order: plain runs on one stream (warm-up), then a capture of the same runs on another
// stream, replayed while nothing else runs: the capture is not ordered after the warm-up (it
// executes nothing), adds no node for the ordering, and its replays are exact.
TEST_F(CallerWorkspace, AWarmUpOnOneStreamThenACaptureOnAnotherReplaysExactly) {
  if (!options().family.empty()) GTEST_SKIP() << "I8GEMM_FAMILY overrides the default family";
  open(test_cache_path(), make_problem(512, 4096), 32);
  auto warm = make_lane(kSplitRows, 0, seed_ + 1), cap = make_lane(kSplitRows, 0, seed_ + 2);
  warm->plain = cap->plain = true;
  enqueue(*warm);  // left in flight: the capture begins while it may still run
  CUgraph graph = nullptr;
  I8G_CU(cuStreamBeginCapture(cap->s.get(), CU_STREAM_CAPTURE_MODE_GLOBAL));
  enqueue(*cap);
  I8G_CU(cuStreamEndCapture(cap->s.get(), &graph));
  warm->s.sync();
  check(*warm, "warm-up");
  size_t nodes = 0;
  I8G_CU(cuGraphGetNodes(graph, nullptr, &nodes));
  EXPECT_EQ(nodes, kSplitRows.size()) << "one kernel node per plain run (the kernel resets its own counters)";
  CUgraphExec exec = nullptr;
  I8G_CU(cuGraphInstantiateWithFlags(&exec, graph, 0));
  driver().cuGraphDestroy(graph);
  for (int r = 0; r < 5; ++r) {
    refill(*cap);
    I8G_CU(cuGraphLaunch(exec, cap->s.get()));
    cap->s.sync();
    check(*cap, fmt::format("replay {}", r));
  }
  // Eager runs on the warm-up stream after the capture: the capture's event is not waited on.
  refill(*warm);
  enqueue(*warm);
  warm->s.sync();
  check(*warm, "after the capture");
  driver().cuGraphExecDestroy(exec);
  for (const Lane* l : {warm.get(), cap.get()})
    for (size_t e = 0; e < l->errors.size() && e < 8; ++e) ADD_FAILURE() << l->errors[e];
}

// A graph captured with a caller workspace keeps it: two graphs of the same runs, each with its
// own, replay together on two streams. Each split-K run adds a memset node (its counters).
TEST_F(CallerWorkspace, TwoGraphsWithTheirOwnWorkspacesReplayTogetherExactly) {
  if (!options().family.empty()) GTEST_SKIP() << "I8GEMM_FAMILY overrides the default family";
  open(test_cache_path(), make_problem(512, 4096), 32);
  const size_t bytes = size_for(32);
  std::vector<std::unique_ptr<Lane>> lanes;
  std::vector<CUgraphExec> execs;
  size_t want_nodes = 0;
  for (int64_t m : kSplitRows) want_nodes += split_of(chosen(m)) > 1 ? 2 : 1;
  for (uint32_t i = 0; i < 2; ++i) {
    lanes.push_back(make_lane(kSplitRows, bytes, seed_ + 1 + i));
    Lane& l = *lanes.back();
    l.s.sync();
    CUgraph graph = nullptr;
    I8G_CU(cuStreamBeginCapture(l.s.get(), CU_STREAM_CAPTURE_MODE_GLOBAL));
    enqueue(l);
    I8G_CU(cuStreamEndCapture(l.s.get(), &graph));
    ASSERT_TRUE(l.errors.empty()) << l.errors.front();
    size_t nodes = 0;
    I8G_CU(cuGraphGetNodes(graph, nullptr, &nodes));
    EXPECT_EQ(nodes, want_nodes) << "one kernel node per run, one memset node per split-K run";
    CUgraphExec exec = nullptr;
    I8G_CU(cuGraphInstantiateWithFlags(&exec, graph, 0));
    driver().cuGraphDestroy(graph);
    execs.push_back(exec);
  }
  const int replays = 10;
  for (int r = 0; r < replays; ++r) {
    for (auto& l : lanes) refill(*l);
    for (size_t i = 0; i < lanes.size(); ++i) I8G_CU(cuGraphLaunch(execs[i], lanes[i]->s.get()));
    for (auto& l : lanes) {
      l->s.sync();
      check(*l, fmt::format("replay {}", r));
    }
  }
  for (CUgraphExec e : execs) driver().cuGraphExecDestroy(e);
  for (size_t i = 0; i < lanes.size(); ++i)
    for (size_t e = 0; e < lanes[i]->errors.size() && e < 8; ++e) ADD_FAILURE() << "graph " << i << ": " << lanes[i]->errors[e];
  std::printf("[ figure ] caller workspaces: 2 graphs of %zu runs (%zu nodes each) x %d replays together\n",
              kSplitRows.size(), want_nodes, replays);
}

// What i8gemm_workspace_size says for m rows is enough for m rows, and a run writes nothing past
// it; what is not prepared is NOT_PREPARED.
TEST_F(CallerWorkspace, TheSizeForMRowsIsEnoughAndNothingPastItIsWritten) {
  open(test_cache_path(), make_problem(512, 4096), 32);
  size_t bytes = 1;
  const i8gemm_problem other = make_problem(512, 1024);
  EXPECT_EQ(i8gemm_workspace_size(lib_, &other, 16, &bytes), I8GEMM_ERROR_NOT_PREPARED);
  EXPECT_NE(std::string(i8gemm_last_error()).find("not prepared"), std::string::npos) << i8gemm_last_error();
  EXPECT_EQ(bytes, 0u);
  EXPECT_EQ(i8gemm_workspace_size(lib_, &p_, 33, &bytes), I8GEMM_ERROR_NOT_PREPARED);
  EXPECT_NE(std::string(i8gemm_last_error()).find("max_m=33"), std::string::npos) << i8gemm_last_error();
  EXPECT_EQ(size_for(0), 0u);
  const size_t largest = size_for(32);
  for (int64_t m : {1, 2, 3, 5, 8, 13, 21, 32}) {
    const size_t need = size_for(m);
    EXPECT_LE(need, largest) << "M=" << m;
    if (split_of(chosen(m)) > 1) {
      EXPECT_GT(need, 0u) << chosen(m);
    }
    auto lane = make_lane({m}, need, seed_ + uint32_t(m));
    enqueue(*lane);
    lane->s.sync();
    check(*lane, fmt::format("M={} with exactly {} bytes", m, need));
    for (const std::string& e : lane->errors) ADD_FAILURE() << e;
  }
}

// Refused before anything is enqueued: the output keeps its poison.
TEST_F(CallerWorkspace, ATooSmallMisalignedOrHostWorkspaceLaunchesNothing) {
  if (!options().family.empty()) GTEST_SKIP() << "I8GEMM_FAMILY overrides the default family";
  open(test_cache_path(), make_problem(512, 4096), 32);
  ASSERT_GT(split_of(chosen(1)), 1) << chosen(1);
  const size_t need = size_for(1);
  ASSERT_GT(need, 0u);
  auto lane = make_lane({1}, need, seed_);
  DeviceGemm& d = *lane->devs[0];
  d.poison_out(lane->s);
  lane->s.sync();
  const i8gemm_args a = d.args();
  void* host = std::aligned_alloc(256, (need + 255) / 256 * 256);
  struct Case {
    const char* what;
    void* ptr;
    size_t bytes;
    const char* says;
  } cases[] = {
      {"one byte short", lane->ws.as<void>(), need - 1, "less than"},
      {"null with no bytes", nullptr, 0, "less than"},
      {"128 bytes off", lane->ws.as<char>() + 128, need, "256-byte aligned"},
      {"host memory", host, need, "not a CUDA device pointer"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(i8gemm_run_with_workspace(lib_, &p_, &a, c.ptr, c.bytes, lane->s.handle()),
              I8GEMM_ERROR_INVALID_ARGUMENT)
        << c.what;
    EXPECT_NE(std::string(i8gemm_last_error()).find(c.says), std::string::npos) << c.what << ": " << i8gemm_last_error();
  }
  std::free(host);
  lane->s.sync();
  const std::vector<uint8_t> out = d.out_bytes();
  EXPECT_EQ(out, std::vector<uint8_t>(out.size(), kPoison)) << "a refused run wrote the output";
  const i8gemm_problem other = make_problem(512, 1024);
  EXPECT_EQ(i8gemm_run_with_workspace(lib_, &other, &a, lane->ws.as<void>(), need, lane->s.handle()),
            I8GEMM_ERROR_NOT_PREPARED);
}

}  // namespace
}  // namespace i8g::gputest

// tune --final-placements: the final round timed over several placements of the operands.
// Operands::move puts every set into fresh memory with the same contents, and a tune whose final
// round runs over three placements says so in its finalists' reasons and stores a verified winner;
// with a final warm-up (tune --final-warmup-ms) every placement's timing is warmed for that long.
#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "cache/cache.hpp"
#include "runtime/serve/engine.hpp"
#include "runtime/tune/autotune.hpp"
#include "runtime/tune/measure.hpp"
#include "runtime/tune/operands.hpp"
#include "tests/gpu/gpu_support.hpp"
#include "tests/gpu/tune_support.hpp"
#include "tests/support/files.hpp"

namespace i8g::gputest {
namespace {

using testsupport::TempDir;

class TunePlacements : public GpuTest {};

std::vector<uint8_t> bytes_of(const DeviceBuffer& b) {
  std::vector<uint8_t> v(b.bytes());
  b.download(v.data(), v.size());
  return v;
}

// Operands of one small problem (256 x 512, M = 16) in an engine of their own, on a stream.
struct SmallOperands {
  explicit SmallOperands(uint64_t seed)
      : engine(0, dir.file("cache.sqlite")), rng(seed), ops(engine, GemmProblem{256, 512}, 16, rng, stream.get()) {}
  TempDir dir;
  Engine engine;
  Stream stream;  // gpu_support.hpp's
  std::mt19937_64 rng;
  Operands ops;
};

TEST_F(TunePlacements, MoveKeepsTheContentsAtNewAddresses) {
  SmallOperands so(7);
  Operands& ops = so.ops;
  Stream& stream = so.stream;
  ASSERT_GE(ops.sets(), 2);
  std::vector<CUdeviceptr> before;
  std::vector<std::vector<uint8_t>> x, w;
  for (int i = 0; i < ops.sets(); ++i) {
    before.push_back(CUdeviceptr(ops.x[size_t(i)].get()));
    before.push_back(CUdeviceptr(ops.w[size_t(i)].get()));
    before.push_back(CUdeviceptr(ops.out[size_t(i)].get()));
    x.push_back(bytes_of(ops.x[size_t(i)]));
    w.push_back(bytes_of(ops.w[size_t(i)]));
  }
  ops.move(stream.get());
  for (int i = 0; i < ops.sets(); ++i) {
    const size_t s = size_t(i);
    for (CUdeviceptr old : before) {
      EXPECT_NE(CUdeviceptr(ops.x[s].get()), old) << "set " << i << ": x was not moved";
      EXPECT_NE(CUdeviceptr(ops.w[s].get()), old) << "set " << i << ": w was not moved";
      EXPECT_NE(CUdeviceptr(ops.out[s].get()), old) << "set " << i << ": out was not moved";
    }
    EXPECT_EQ(bytes_of(ops.x[s]), x[s]) << "set " << i;
    EXPECT_EQ(bytes_of(ops.w[s]), w[s]) << "set " << i;
    EXPECT_EQ(ops.args(i).x, ops.x[s].get<signed char>()) << "args() reads the moved buffers";
  }
}

TEST_F(TunePlacements, EachMovePutsTheOperandsWhereNoEarlierPlacementWas) {
  SmallOperands so(11);
  Operands& ops = so.ops;
  Stream& stream = so.stream;
  std::vector<CUdeviceptr> seen;
  for (int placement = 0; placement < 3; ++placement) {
    if (placement > 0) ops.move(stream.get());
    for (int i = 0; i < ops.sets(); ++i) {
      const CUdeviceptr w = CUdeviceptr(ops.w[size_t(i)].get());
      for (CUdeviceptr old : seen) EXPECT_NE(w, old) << "placement " << placement << " set " << i << " reuses memory";
      seen.push_back(w);
    }
  }
  ops.release_moved();
  EXPECT_EQ(ops.args(0).w, ops.w[0].get<signed char>()) << "the current placement survives release_moved()";
}

TEST_F(TunePlacements, FinalRoundOverThreePlacementsStoresAVerifiedWinner) {
  TempDir dir;
  const std::string path = dir.file("cache.sqlite");
  Engine engine(0, path);
  cache::Cache cache(path, cache::Cache::Mode::read_write);
  const GemmProblem p{256, 512};
  TuneOptions o = quick_tune_options({16});  // launch-bound kernels beside cuBLASLt's algorithms
  o.final_placements = 3;
  const std::vector<BucketResult> r = autotune(engine, cache, p, o);
  ASSERT_EQ(r.size(), 1u);
  ASSERT_NE(r[0].winning(), nullptr);
  size_t finalists = 0;
  for (const CandidateResult& c : r[0].candidates)
    if (c.reason.rfind("final round:", 0) == 0) {
      ++finalists;
      EXPECT_NE(c.reason.find("over 3 placements of the operands ("), std::string::npos) << c.reason;
      ASSERT_TRUE(c.graph.has_value());
      EXPECT_GT(c.graph->median_us, 0.0);
    }
  // Launch-bound timings of one small problem: cuBLASLt's algorithms alone put several within 10%.
  EXPECT_GE(finalists, 2u) << "no final round ran, so the placements were not exercised";
  EXPECT_EQ(cache.list_winners().size(), 1u);
  std::printf("[ figure ] final round over 3 placements: %zu finalists, winner %s %.2f us\n", finalists,
              to_string(r[0].winning()->candidate).c_str(), r[0].winning()->graph->median_us);
}

TEST_F(TunePlacements, FinalRoundWarmsEachPlacementForTheAskedTime) {
  SmallOperands so(13);
  Operands& ops = so.ops;
  Stream& stream = so.stream;
  TimingPlan plan;
  plan.warmup = 2;
  plan.samples = 3;
  Measurer measurer(ops, stream.get(), plan, 2.0);
  // Two "finalists": memsets of the current placement's outputs (what they launch does not
  // matter here, only how long the round keeps running them), each followed by a host function
  // that counts its runs. The round replays captured graphs, which never call the Launch again,
  // so the count of runs (not of Launch calls) is what the warm-up adds to.
  std::atomic<int> runs{0};
  auto finalist = [&](uint8_t v) -> Launch {
    return [&ops, &runs, &stream, v](int c) {
      const DeviceBuffer& o = ops.out[size_t(c % ops.sets())];
      I8G_CU(cuMemsetD8Async(CUdeviceptr(o.get()), v, o.bytes(), stream.get()));
      I8G_CU(cuLaunchHostFunc(
          stream.get(), [](void* n) { static_cast<std::atomic<int>*>(n)->fetch_add(1); }, &runs));
    };
  };
  const std::vector<Launch> launches = {finalist(1), finalist(2)};
  auto round = [&](double warmup_ms) {
    std::vector<CandidateResult> cs(2);
    for (CandidateResult& c : cs) c.graph = Stats{10.0, 10.0, 10.0};
    runs = 0;
    const auto t0 = std::chrono::steady_clock::now();
    measurer.final_round(cs, {0, 1}, launches, 2, warmup_ms);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    for (const CandidateResult& c : cs) {
      EXPECT_TRUE(c.finalist);
      EXPECT_EQ(c.placement_us.size(), 2u);
    }
    I8G_CU(cuStreamSynchronize(stream.get()));
    return std::make_pair(ms, runs.load());
  };
  const auto [cold_ms, cold_runs] = round(0);
  const auto [warm_ms, warm_runs] = round(60);
  EXPECT_GE(warm_ms, 2 * 60.0) << "two placements, each warmed for 60 ms";
  EXPECT_GT(warm_runs, cold_runs) << "the warm-up ran the finalists no more often than no warm-up";
  std::printf("[ figure ] final round over 2 placements: %.1f ms (%d runs) cold, %.1f ms (%d) warmed 60 ms each\n",
              cold_ms, cold_runs, warm_ms, warm_runs);
}

}  // namespace
}  // namespace i8g::gputest

// tune --final-placements: the final round timed over several placements of the operands.
// Operands::move puts every set into fresh memory with the same contents, and a tune whose final
// round runs over three placements says so in its finalists' reasons and stores a verified winner.
#include <fmt/format.h>

#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "cache/cache.hpp"
#include "runtime/serve/engine.hpp"
#include "runtime/tune/autotune.hpp"
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

TEST_F(TunePlacements, MoveKeepsTheContentsAtNewAddresses) {
  TempDir dir;
  Engine engine(0, dir.file("cache.sqlite"));
  Stream stream;  // gpu_support.hpp's
  std::mt19937_64 rng(7);
  const GemmProblem p{256, 512};
  Operands ops(engine, p, 16, rng, stream.get());
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
  TempDir dir;
  Engine engine(0, dir.file("cache.sqlite"));
  Stream stream;
  std::mt19937_64 rng(11);
  Operands ops(engine, GemmProblem{256, 512}, 16, rng, stream.get());
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

}  // namespace
}  // namespace i8g::gputest

// tune --resume: an interrupted tune carries on where it stopped. Buckets whose winner the cache
// already holds (same GPU, compiler and generator) are not timed again and come back with the
// stored winner; the others are tuned as usual, in the order asked.
#include <fmt/format.h>

#include <cstdio>
#include <stdexcept>

#include "cache/cache.hpp"
#include "runtime/serve/engine.hpp"
#include "runtime/tune/autotune.hpp"
#include "tests/gpu/gpu_support.hpp"
#include "tests/gpu/tune_support.hpp"
#include "tests/support/files.hpp"

namespace i8g::gputest {
namespace {

using testsupport::TempDir;

class TuneResume : public GpuTest {};

TEST_F(TuneResume, StoredBucketsAreSkippedAndTheRestTuned) {
  TempDir dir;
  const std::string path = dir.file("cache.sqlite");
  Engine engine(0, path);
  cache::Cache cache(path, cache::Cache::Mode::read_write);
  const GemmProblem p{256, 512};
  TuneOptions o = quick_tune_options({16, 1});
  const std::vector<BucketResult> first = autotune(engine, cache, p, o);
  ASSERT_EQ(first.size(), 2u);
  for (const BucketResult& r : first) {
    EXPECT_FALSE(r.stored) << "M=" << r.m;
    ASSERT_NE(r.winning(), nullptr) << "M=" << r.m;
  }
  auto winner_of = [&](int64_t m) {
    for (const cache::Winner& w : cache.list_winners())
      if (w.key.m_bucket == m) return w;
    throw std::runtime_error(fmt::format("no winner stored for M={}", m));
  };
  const size_t timings_m1 = cache.timings(winner_of(1).key).size();

  o.resume = true;
  o.ms = {16, 64, 1};
  const std::vector<BucketResult> again = autotune(engine, cache, p, o);
  ASSERT_EQ(again.size(), 3u);
  EXPECT_EQ(again[0].m, 16);
  EXPECT_EQ(again[1].m, 64);
  EXPECT_EQ(again[2].m, 1);
  for (size_t i : {size_t(0), size_t(2)}) {
    ASSERT_TRUE(again[i].stored) << "M=" << again[i].m << " was timed again";
    EXPECT_TRUE(again[i].candidates.empty());
    const BucketResult& before = again[i].m == 16 ? first[0] : first[1];
    EXPECT_EQ(again[i].stored->candidate, to_string(before.winning()->candidate));
  }
  EXPECT_FALSE(again[1].stored);
  EXPECT_NE(again[1].winning(), nullptr) << "the new bucket is tuned";
  EXPECT_EQ(cache.timings(winner_of(1).key).size(), timings_m1) << "the stored bucket was not timed again";
  EXPECT_EQ(cache.list_winners().size(), 3u);
  std::printf("[ figure ] tune --resume: 2 stored buckets skipped, 1 new tuned (%zu candidates)\n",
              again[1].candidates.size());
}

}  // namespace
}  // namespace i8g::gputest

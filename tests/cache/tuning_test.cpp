// Timings and winners: every candidate kept, exact TuneKey matching, winner replacement.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "cache/cache.hpp"
#include "cache_test_util.hpp"
#include "core/error.hpp"

namespace i8g::cache {
namespace {
using namespace testing;

Timing make_timing(const TuneKey& key, const std::string& candidate, int64_t kernel_id, double us,
                   CandidateStatus status = CandidateStatus::ok) {
  Timing t;
  t.key = key;
  t.candidate = candidate;
  t.kernel_id = kernel_id;
  t.status = status;
  t.reason = status == CandidateStatus::ok ? "" : "max abs error 3.5 at (0, 7)";
  t.eager_median_us = us;
  t.eager_p90_us = us * 1.1;
  t.eager_min_us = us * 0.9;
  t.graph_median_us = us * 0.8;
  t.graph_p90_us = us * 0.85;
  t.graph_min_us = us * 0.75;
  t.created_at = 1700000100;
  return t;
}

TEST(CacheTuning, TimingsKeptForAllCandidatesWithEveryField) {
  TempDir dir;
  Cache c(dir.file("c.sqlite"), Cache::Mode::read_write);
  TuneKey key = make_tune_key();
  std::vector<Timing> in = {make_timing(key, "i8g_a", 1, 10.0), make_timing(key, "i8g_b", 2, 12.5, CandidateStatus::rejected),
                            make_timing(key, "i8g_c", 3, 0, CandidateStatus::failed), make_timing(key, "cublaslt:algo=7", 0, 11.0)};
  in[2].eager_median_us = std::numeric_limits<double>::quiet_NaN();  // never measured
  in[2].graph_min_us = std::numeric_limits<double>::infinity();
  c.put_timings(in);
  auto out = c.timings(key);
  ASSERT_EQ(out.size(), in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    EXPECT_EQ(out[i].key, in[i].key);
    EXPECT_EQ(out[i].candidate, in[i].candidate);
    EXPECT_EQ(out[i].kernel_id, in[i].kernel_id);
    EXPECT_EQ(out[i].status, in[i].status);
    EXPECT_EQ(out[i].reason, in[i].reason);
    EXPECT_EQ(out[i].created_at, in[i].created_at);
    if (i != 2) {
      EXPECT_DOUBLE_EQ(out[i].eager_median_us.value(), in[i].eager_median_us.value());
    }
    EXPECT_DOUBLE_EQ(out[i].eager_p90_us.value(), in[i].eager_p90_us.value());
    EXPECT_DOUBLE_EQ(out[i].eager_min_us.value(), in[i].eager_min_us.value());
    EXPECT_DOUBLE_EQ(out[i].graph_median_us.value(), in[i].graph_median_us.value());
    EXPECT_DOUBLE_EQ(out[i].graph_p90_us.value(), in[i].graph_p90_us.value());
    EXPECT_EQ(out[i].graph_min_us.value(), in[i].graph_min_us.value());
  }
  EXPECT_FALSE(out[2].eager_median_us.has_value());  // NaN is stored as NULL: not measured
  EXPECT_TRUE(std::isinf(out[2].graph_min_us.value()));

  auto for_b = c.timings_for_kernel(2);
  ASSERT_EQ(for_b.size(), 1u);
  EXPECT_EQ(for_b[0].candidate, "i8g_b");

  // A re-tune appends: nothing measured before is lost.
  c.put_timings({make_timing(key, "i8g_a", 1, 9.5)});
  EXPECT_EQ(c.timings(key).size(), in.size() + 1);
  EXPECT_EQ(c.timings_for_kernel(1).size(), 2u);
}

TEST(CacheTuning, BadStatusStoresNothing) {
  TempDir dir;
  Cache c(dir.file("c.sqlite"), Cache::Mode::read_write);
  TuneKey key = make_tune_key();
  EXPECT_THROW(c.put_timings({make_timing(key, "a", 1, 1), make_timing(key, "b", 2, 1, CandidateStatus(7))}),
               Error);
  EXPECT_TRUE(c.timings(key).empty());
}

TEST(CacheTuning, StatusTextIsWhatTheFileHeldBeforeTheEnum) {
  for (const char* text : {"ok", "rejected", "failed"}) {
    const std::optional<CandidateStatus> s = parse_candidate_status(text);
    ASSERT_TRUE(s) << text;
    EXPECT_STREQ(to_string(*s), text);
  }
  EXPECT_FALSE(parse_candidate_status("pruned"));
  EXPECT_FALSE(parse_candidate_status("OK"));
}

// A pruned candidate was verified and probed (eager) but never graph-timed; a rejected or
// failed one was timed not at all. Neither reads back as a time of 0.
TEST(CacheTuning, UnmeasuredTimesRoundTripAsNotMeasured) {
  TempDir dir;
  Cache c(dir.file("c.sqlite"), Cache::Mode::read_write);
  TuneKey key = make_tune_key();
  Timing pruned = make_timing(key, "i8g_slow", 4, 50.0);
  pruned.reason = "pruned: probe 50.0 us > 4x the best probe (10.0 us)";
  pruned.graph_median_us = pruned.graph_p90_us = pruned.graph_min_us = std::nullopt;
  Timing failed = make_timing(key, "i8g_broken", 5, 0, CandidateStatus::failed);
  failed.eager_median_us = failed.eager_p90_us = failed.eager_min_us = std::nullopt;
  failed.graph_median_us = failed.graph_p90_us = failed.graph_min_us = std::nullopt;
  c.put_timings({pruned, failed});
  const std::vector<Timing> out = c.timings(key);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].status, CandidateStatus::ok);
  EXPECT_EQ(out[0].reason, pruned.reason);
  EXPECT_DOUBLE_EQ(out[0].eager_median_us.value(), 50.0);
  EXPECT_DOUBLE_EQ(out[0].eager_p90_us.value(), 55.0);
  EXPECT_DOUBLE_EQ(out[0].eager_min_us.value(), 45.0);
  EXPECT_FALSE(out[0].graph_median_us.has_value());
  EXPECT_FALSE(out[0].graph_p90_us.has_value());
  EXPECT_FALSE(out[0].graph_min_us.has_value());
  EXPECT_EQ(out[1].status, CandidateStatus::failed);
  for (const std::optional<double>* v : {&out[1].eager_median_us, &out[1].eager_p90_us, &out[1].eager_min_us,
                                         &out[1].graph_median_us, &out[1].graph_p90_us, &out[1].graph_min_us})
    EXPECT_FALSE(v->has_value());
}

TEST(CacheTuning, ChangingAnyTuneKeyPartMisses) {
  TempDir dir;
  Cache c(dir.file("c.sqlite"), Cache::Mode::read_write);
  TuneKey key = make_tune_key();
  c.put_timings({make_timing(key, "i8g_a", 1, 10.0)});
  c.put_winner(Winner{key, "i8g_a", 1, 10.0, 11.0, 1.1, 0});
  ASSERT_TRUE(c.get_winner(key));
  ASSERT_EQ(c.timings(key).size(), 1u);

  std::vector<TuneKey> others(8, key);
  others[0].driver_version = "13010";
  others[1].gpu_name = "NVIDIA H100 80GB HBM3";
  others[2].sm_count = 114;
  others[3].m_bucket = 32;
  others[4].arch = "sm_90";
  others[5].compiler_version = "nvrtc 13.1";
  others[6].generator_hash = std::string(64, 'b');
  others[7].problem_key = "n2560_k4096_nk_tok_ch_f16";
  for (const TuneKey& other : others) {
    EXPECT_FALSE(c.get_winner(other));
    EXPECT_TRUE(c.timings(other).empty());
  }
}

// What prepare logs about winners it cannot use: each differing field, theirs and ours; nothing
// for the M bucket alone or for another problem.
TEST(CacheTuning, TuneKeyMismatchNamesEveryDifferingField) {
  const TuneKey want = make_tune_key();
  TuneKey have = want;
  EXPECT_EQ(tune_key_mismatch(have, want), "");
  have.m_bucket = 4096;
  EXPECT_EQ(tune_key_mismatch(have, want), "") << "the bucket is not a mismatch";
  have.generator_hash = std::string(64, 'b');
  EXPECT_EQ(tune_key_mismatch(have, want), "generator bbbbbbbbbbbb (this one: aaaaaaaaaaaa)");
  have.driver_version = "13010";
  have.gpu_name = "NVIDIA H100 80GB HBM3";
  EXPECT_EQ(tune_key_mismatch(have, want),
            "GPU 'NVIDIA H100 80GB HBM3' (this one: 'NVIDIA H200'); driver 13010 (this one: 13000); generator "
            "bbbbbbbbbbbb (this one: aaaaaaaaaaaa)");
  TuneKey same_prefix = want;  // equal in the 12 characters shown, different after
  same_prefix.generator_hash = std::string(63, 'a') + "c";
  EXPECT_NE(tune_key_mismatch(same_prefix, want), "");
  TuneKey other = want;
  other.problem_key = "n2560_k4096_nk_tok_ch_f16";
  other.driver_version = "1";
  EXPECT_EQ(tune_key_mismatch(other, want), "") << "another problem's winners are not this one's";
}

TEST(CacheTuning, PutWinnerReplacesOnlyThatKey) {
  TempDir dir;
  Cache c(dir.file("c.sqlite"), Cache::Mode::read_write);
  TuneKey key = make_tune_key(), other = make_tune_key();
  other.m_bucket = 64;
  c.put_winner(Winner{key, "i8g_a", 1, 10.0, 11.0, 1.1, 1700000000});
  c.put_winner(Winner{other, "cublaslt:algo=3", 0, 20.0, 20.0, 1.0, 1700000000});
  c.put_winner(Winner{key, "i8g_b", 2, 8.0, 11.0, 1.375, 0});
  auto w = c.get_winner(key);
  ASSERT_TRUE(w);
  EXPECT_EQ(w->key, key);
  EXPECT_EQ(w->candidate, "i8g_b");
  EXPECT_EQ(w->kernel_id, 2);
  EXPECT_DOUBLE_EQ(w->time_us, 8.0);
  EXPECT_DOUBLE_EQ(w->baseline_us, 11.0);
  EXPECT_DOUBLE_EQ(w->speedup, 1.375);
  EXPECT_GT(w->created_at, 1700000000);  // filled in with now
  auto o = c.get_winner(other);
  ASSERT_TRUE(o);
  EXPECT_EQ(o->candidate, "cublaslt:algo=3");
  EXPECT_EQ(c.list_winners().size(), 2u);
}

TEST(CacheTuning, RemoveStaleUsesDriverAndGpuForTuningResults) {
  TempDir dir;
  Cache c(dir.file("c.sqlite"), Cache::Mode::read_write);
  TuneKey cur = make_tune_key(), old_driver = cur, old_gpu = cur;
  old_driver.driver_version = "12080";
  old_gpu.gpu_name = "NVIDIA H100";
  for (const TuneKey& k : {cur, old_driver, old_gpu}) {
    c.put_timings({make_timing(k, "i8g_a", 1, 10.0)});
    c.put_winner(Winner{k, "i8g_a", 1, 10.0, 11.0, 1.1, 0});
  }
  // Compiler/generator only: all three stay.
  EXPECT_EQ(c.remove_stale(cur.compiler_version, cur.generator_hash), 0);
  EXPECT_EQ(c.list_winners().size(), 3u);
  EXPECT_EQ(c.remove_stale(Current{cur.compiler_version, cur.generator_hash, cur.driver_version, cur.gpu_name}), 4);
  auto left = c.list_winners();
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left[0].key, cur);
  EXPECT_EQ(c.timings(cur).size(), 1u);
  EXPECT_TRUE(c.timings(old_driver).empty());
}

}  // namespace
}  // namespace i8g::cache

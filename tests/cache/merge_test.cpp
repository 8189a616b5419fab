// Merging caches and exporting winners (cache/merge.hpp): the union with nothing lost, inputs
// untouched, conflicts resolved by the tuner's tie rule and reported, repeated merges idempotent,
// damaged inputs refused whole, and an export that holds exactly the winners.
#include <gtest/gtest.h>

#include <sqlite3.h>

#include <algorithm>
#include <set>

#include "cache/merge.hpp"
#include "cache_test_util.hpp"

namespace i8g::cache {
namespace {
using namespace testing;

Timing timing(const TuneKey& key, const std::string& candidate, int64_t kernel_id, double us, int64_t at) {
  Timing t;
  t.key = key;
  t.candidate = candidate;
  t.kernel_id = kernel_id;
  t.eager_median_us = us * 1.2;
  t.graph_median_us = us;
  t.graph_p90_us = us * 1.05;
  t.graph_min_us = us * 0.97;
  t.created_at = at;
  return t;
}

Winner winner(const TuneKey& key, const std::string& candidate, int64_t kernel_id, double us) {
  Winner w;
  w.key = key;
  w.candidate = candidate;
  w.kernel_id = kernel_id;
  w.time_us = us;
  w.baseline_us = 20.0;
  w.speedup = 20.0 / us;
  w.created_at = 1700000500;
  return w;
}

TuneKey key_at(int64_t m) {
  TuneKey k = make_tune_key();
  k.m_bucket = m;
  return k;
}

std::set<std::string> names(Cache& c) {
  std::set<std::string> s;
  for (const StoredKernel& k : c.list_kernels()) s.insert(k.key.name);
  return s;
}

std::string timings_text(Cache& c) {  // every timing of the cache, without ids, one per line, sorted
  std::vector<std::string> lines;
  for (const Timing& t : c.all_timings())
    lines.push_back(t.key.to_string() + " " + t.candidate + " " + std::to_string(*t.graph_median_us) + " " +
                    std::to_string(t.created_at));
  std::sort(lines.begin(), lines.end());
  std::string s;
  for (const std::string& l : lines) s += l + "\n";
  return s;
}

class CacheMerge : public ::testing::Test {
 protected:
  // Cache a: k1, k2; M=16 timed (k1 9.0, k2 10.0), won by k1; M=64 won by k2.
  // Cache b: k2 (same binary), k3; M=16 timed (k3 8.0), won by k3 (faster by > 1%); M=256 won by
  // cuBLASLt.
  void SetUp() override {
    {
      Cache a(pa_, Cache::Mode::read_write);
      const int64_t k1 = a.put_kernel(make_kernel("i8g_k1", 1));
      const int64_t k2 = a.put_kernel(make_kernel("i8g_k2", 2));
      a.put_timings({timing(key_at(16), "i8g_k1", k1, 9.0, 1700000001), timing(key_at(16), "i8g_k2", k2, 10.0, 1700000002)});
      a.put_winner(winner(key_at(16), "i8g_k1", k1, 9.0));
      a.put_winner(winner(key_at(64), "i8g_k2", k2, 12.0));
    }
    {
      Cache b(pb_, Cache::Mode::read_write);
      b.put_kernel(make_kernel("i8g_filler", 9));  // so that b's ids differ from a's
      const int64_t k2 = b.put_kernel(make_kernel("i8g_k2", 2));
      const int64_t k3 = b.put_kernel(make_kernel("i8g_k3", 3));
      b.put_timings({timing(key_at(16), "i8g_k3", k3, 8.0, 1700000003)});
      b.put_winner(winner(key_at(16), "i8g_k3", k3, 8.0));
      b.put_winner(winner(key_at(256), "cublaslt:algo=3", 0, 30.0));
      b.put_winner(winner(key_at(64), "i8g_k2", k2, 12.5));
    }
  }
  TempDir dir_;
  std::string pa_ = dir_.file("a.sqlite"), pb_ = dir_.file("b.sqlite"), po_ = dir_.file("out.sqlite");
};

TEST_F(CacheMerge, TheUnionKeepsEveryKernelTimingAndWinnerAndResolvesConflictsByTime) {
  const std::string a_before = read_bytes(pa_), b_before = read_bytes(pb_);
  Cache out(po_, Cache::Mode::read_write);
  MergeReport ra, rb;
  {
    Cache a(pa_, Cache::Mode::read_only), b(pb_, Cache::Mode::read_only);
    ASSERT_EQ(input_problem(a), "");
    ra = merge_into(out, a);
    rb = merge_into(out, b);
  }
  EXPECT_EQ(read_bytes(pa_), a_before) << "an input changed";
  EXPECT_EQ(read_bytes(pb_), b_before) << "an input changed";
  EXPECT_EQ(names(out), (std::set<std::string>{"i8g_k1", "i8g_k2", "i8g_k3", "i8g_filler"}));
  EXPECT_EQ(ra.kernels_added, 2);
  EXPECT_EQ(rb.kernels_added, 2);
  EXPECT_EQ(rb.kernels_present, 1);
  EXPECT_EQ(out.all_timings().size(), 3u);
  // Every kernel id a timing or winner carries is the output's id of that kernel.
  for (const Timing& t : out.all_timings()) {
    const std::optional<StoredKernel> k = out.get_kernel(t.kernel_id);
    ASSERT_TRUE(k) << t.candidate;
    EXPECT_EQ(k->key.name, t.candidate);
  }
  const std::optional<Winner> w16 = out.get_winner(key_at(16));
  ASSERT_TRUE(w16);
  EXPECT_EQ(w16->candidate, "i8g_k3") << "8.0 us beats 9.0 us by more than the tie fraction";
  EXPECT_EQ(out.get_kernel(w16->kernel_id)->key.name, "i8g_k3");
  EXPECT_EQ(out.get_winner(key_at(64))->candidate, "i8g_k2");
  EXPECT_DOUBLE_EQ(out.get_winner(key_at(64))->time_us, 12.0) << "the same winner: the output's row stays";
  EXPECT_EQ(out.get_winner(key_at(256))->candidate, "cublaslt:algo=3");
  EXPECT_EQ(out.list_winners().size(), 3u);
  EXPECT_EQ(rb.winners_replaced, 1);
  EXPECT_EQ(rb.winners_same, 1);
  EXPECT_EQ(rb.winners_added, 1);
  ASSERT_EQ(rb.conflicts.size(), 1u);
  EXPECT_NE(rb.conflicts[0].find("i8g_k1"), std::string::npos) << rb.conflicts[0];
  EXPECT_NE(rb.conflicts[0].find("kept i8g_k3"), std::string::npos) << rb.conflicts[0];
  EXPECT_EQ(input_problem(out), "");
}

TEST_F(CacheMerge, MergingTheSameInputsAgainAddsNothing) {
  Cache out(po_, Cache::Mode::read_write);
  Cache a(pa_, Cache::Mode::read_only), b(pb_, Cache::Mode::read_only);
  merge_into(out, a);
  merge_into(out, b);
  const std::string timings = timings_text(out);
  const size_t kernels = out.list_kernels().size();
  for (Cache* in : {&a, &b}) {
    const MergeReport again = merge_into(out, *in);
    EXPECT_EQ(again.kernels_added, 0);
    EXPECT_EQ(again.timings_added, 0);
    EXPECT_EQ(again.winners_added + again.winners_replaced, 0);
  }
  EXPECT_EQ(timings_text(out), timings);
  EXPECT_EQ(out.list_kernels().size(), kernels);
  EXPECT_EQ(out.get_winner(key_at(16))->candidate, "i8g_k3");
}

TEST(CacheMergeRule, WinnersWithinTheTieFractionGoToTheFirstNameAndATimeBeatsNone) {
  const TuneKey k = key_at(16);
  EXPECT_TRUE(winner_preferred(winner(k, "i8g_b", 1, 9.0), winner(k, "i8g_a", 2, 10.0)));
  EXPECT_FALSE(winner_preferred(winner(k, "i8g_a", 2, 10.0), winner(k, "i8g_b", 1, 9.0)));
  // 10.05 vs 10.0: within 1%, so the name decides, whichever comes first.
  EXPECT_TRUE(winner_preferred(winner(k, "i8g_a", 1, 10.05), winner(k, "i8g_b", 2, 10.0)));
  EXPECT_FALSE(winner_preferred(winner(k, "i8g_b", 2, 10.0), winner(k, "i8g_a", 1, 10.05)));
  EXPECT_TRUE(winner_preferred(winner(k, "i8g_z", 1, 50.0), winner(k, "i8g_a", 2, std::nan(""))));
  EXPECT_FALSE(winner_preferred(winner(k, "i8g_a", 2, std::nan("")), winner(k, "i8g_z", 1, 50.0)));
}

TEST_F(CacheMerge, AnInputWithAFlippedByteIsRefusedBeforeAnythingIsWritten) {
  // Flip one byte of one stored binary, as a bad disk or a hostile writer would.
  std::vector<uint8_t> bin;
  {
    Cache b(pb_, Cache::Mode::read_only);
    bin = b.get_kernel(make_key("i8g_k3"))->binary;
  }
  bin[100] ^= 0x55;
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2(pb_.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr), SQLITE_OK);
  sqlite3_stmt* put = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "UPDATE kernels SET binary = ? WHERE name = 'i8g_k3'", -1, &put, nullptr), SQLITE_OK);
  sqlite3_bind_blob(put, 1, bin.data(), int(bin.size()), SQLITE_TRANSIENT);
  ASSERT_EQ(sqlite3_step(put), SQLITE_DONE);
  sqlite3_finalize(put);
  ASSERT_EQ(sqlite3_changes(db), 1);
  sqlite3_close(db);
  Cache b(pb_, Cache::Mode::read_only);
  const std::string why = input_problem(b);
  EXPECT_NE(why.find("fail their sha256"), std::string::npos) << why;
  Cache a(pa_, Cache::Mode::read_only);
  EXPECT_EQ(input_problem(a), "");
}

TEST_F(CacheMerge, ExportHoldsExactlyTheWinnersKernelsAndTheirUtilityModule) {
  {
    Cache a(pa_, Cache::Mode::read_write);
    StoredKernel util = make_kernel("i8g_sm90a_utility", 7);
    util.family = "utility";
    util.problem_key.clear();
    util.config.clear();
    a.put_kernel(util);
    StoredKernel other_gen = make_kernel("i8g_sm90a_utility", 8);
    other_gen.family = "utility";
    other_gen.key.generator_hash = std::string(64, 'e');  // no winner of this generator
    a.put_kernel(other_gen);
    a.put_kernel(make_kernel("i8g_loser", 4));
    a.put_winner(winner(key_at(512), "cublaslt:algo=1", 0, 40.0));
  }
  Cache a(pa_, Cache::Mode::read_only);
  Cache out(po_, Cache::Mode::read_write);
  const MergeReport r = export_winners(out, a);
  EXPECT_EQ(names(out), (std::set<std::string>{"i8g_k1", "i8g_k2", "i8g_sm90a_utility"}));
  EXPECT_EQ(out.list_kernels().size(), 3u) << "one utility module: the winners' generator's";
  EXPECT_EQ(out.list_winners().size(), 3u);
  EXPECT_TRUE(out.all_timings().empty());
  EXPECT_TRUE(r.missing.empty());
  for (const Winner& w : out.list_winners())
    if (w.candidate.rfind("cublaslt:", 0) != 0) {
      EXPECT_EQ(out.get_kernel(w.kernel_id)->key.name, w.candidate);
    }
  // The binaries are byte for byte the input's.
  for (const StoredKernel& k : out.list_kernels({"", true}))
    EXPECT_EQ(a.get_kernel(k.key)->binary, k.binary) << k.key.name;
}

TEST_F(CacheMerge, ExportNamesAWinnerWhoseKernelIsNotStored) {
  {
    Cache a(pa_, Cache::Mode::read_write);
    a.put_winner(winner(key_at(1), "i8g_gone", 4242, 5.0));  // its kernel removed, e.g. by gc
  }
  Cache a(pa_, Cache::Mode::read_only);
  Cache out(po_, Cache::Mode::read_write);
  const MergeReport r = export_winners(out, a);
  ASSERT_EQ(r.missing.size(), 1u);
  EXPECT_NE(r.missing[0].find("i8g_gone"), std::string::npos);
  EXPECT_EQ(out.get_winner(key_at(1))->kernel_id, 0);
}

}  // namespace
}  // namespace i8g::cache

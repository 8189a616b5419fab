// What `inspect` prints for times that were never measured: a pruned candidate has no graph
// time and a failed one no time at all. They are NULL in the cache and "-" on the screen,
// never a 0 that reads like a measurement. And `inspect race`, every candidate of a bucket.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "core/target.hpp"
#include "generator/generator.hpp"
#include "tests/cache/cache_test_util.hpp"
#include "cli_test_support.hpp"

namespace i8g::clitest {
namespace {

using i8g::cache::Cache;
using i8g::cache::CandidateStatus;
using nlohmann::json;

class CliInspectTimings : public ::testing::Test {
 protected:
  Result run(const std::vector<std::string>& args) { return run_cli(args, RunOptions(dir_.default_cache()), dir_.path()); }
  TempDir dir_;
};

// The lines of the "== timings ==" table of `inspect show` (after its header).
std::vector<std::string> timing_rows(const std::string& out) {
  std::vector<std::string> rows;
  std::istringstream in(out.substr(out.find("== timings ==")));
  std::string line;
  std::getline(in, line);  // the title
  std::getline(in, line);  // the header
  while (std::getline(in, line) && !line.empty()) rows.push_back(line);
  return rows;
}

TEST_F(CliInspectTimings, UnmeasuredTimesShowAsDashNotZero) {
  const std::string c = dir_.file("t.sqlite");
  Result tune = run({"tune", "--compile-only", "--arch", "sm_80", "--shape", "256x512", "--filter",
                     "simt_dp4a.*bm16_bn64_", "-j", "2", "--cache", c});
  ASSERT_TRUE(tune.ok()) << tune.describe();
  std::string name;
  {
    Cache cache(c, Cache::Mode::read_write);
    const auto ks = cache.list_kernels();
    ASSERT_FALSE(ks.empty());
    name = ks[0].key.name;
    cache::Timing timed{cache::testing::make_tune_key(), name, ks[0].id, CandidateStatus::ok, "",
                        12.5, 13.0, 12.0, 10.25, 10.5, 10.0, 0};
    cache::Timing pruned = timed;
    pruned.reason = "pruned: probe 50.0 us > 4x the best probe (10.0 us)";
    pruned.graph_median_us = pruned.graph_p90_us = pruned.graph_min_us = std::nullopt;
    cache::Timing failed = timed;
    failed.status = CandidateStatus::failed;
    failed.reason = "cuLaunchKernel: too many resources requested";
    failed.eager_median_us = failed.eager_p90_us = failed.eager_min_us = std::nullopt;
    failed.graph_median_us = failed.graph_p90_us = failed.graph_min_us = std::nullopt;
    cache.put_timings({timed, pruned, failed});
    cache.put_winner({cache::testing::make_tune_key(), name, ks[0].id, 10.25, 0, 0, 0});
  }
  Result show = run({"inspect", "show", name, "--cache", c});
  ASSERT_TRUE(show.ok()) << show.describe();
  const std::vector<std::string> rows = timing_rows(show.out);
  ASSERT_EQ(rows.size(), 3u) << show.out;
  EXPECT_NE(rows[0].find("10.25"), std::string::npos) << rows[0];
  EXPECT_NE(rows[0].find("12.50"), std::string::npos) << rows[0];
  EXPECT_EQ(rows[0].find(" - "), std::string::npos) << rows[0];
  // Pruned: graph median and p90 are "-", the probe (eager) is there.
  EXPECT_NE(rows[1].find("-          -"), std::string::npos) << rows[1];
  EXPECT_NE(rows[1].find("12.50"), std::string::npos) << rows[1];
  // Failed: nothing measured.
  EXPECT_EQ(rows[2].find("0.00"), std::string::npos) << rows[2];
  EXPECT_NE(rows[2].find("failed"), std::string::npos) << rows[2];
  for (const std::string& r : {rows[1], rows[2]}) EXPECT_EQ(r.find(" 0.00"), std::string::npos) << r;

  Result winners = run({"inspect", "winners", "--cache", c});
  ASSERT_TRUE(winners.ok()) << winners.describe();
  EXPECT_NE(winners.out.find("10.25"), std::string::npos) << winners.out;
  EXPECT_NE(winners.out.find("n/a"), std::string::npos) << "no cuBLASLt baseline\n" << winners.out;
}

// `inspect race`: every candidate of a tuned bucket, fully timed ones fastest first with their
// ratio to the winner, then the unmeasured ones with "-" and their reasons; --json the same;
// --filter on the problem key; a bad regex is a clear error.
TEST_F(CliInspectTimings, RaceRanksEveryCandidateAgainstTheWinner) {
  const std::string c = dir_.file("race.sqlite");
  const cache::TuneKey key = cache::testing::make_tune_key();
  {
    Cache cache(c, Cache::Mode::read_write);
    cache::Timing slow{key, "kernel_slow", 0, CandidateStatus::ok, "", 13.0, 13.5, 12.9, 12.0, 12.5, 11.9, 0};
    cache::Timing fast = slow;
    fast.candidate = "kernel_fast";
    fast.graph_median_us = 8.0;
    fast.reason = "final round: graph median of 2 finalists timed in turn (first round 8.40 us)";
    cache::Timing lt = slow;
    lt.candidate = "cublaslt:algo=0";
    lt.graph_median_us = 10.0;
    cache::Timing pruned = slow;
    pruned.candidate = "kernel_pruned";
    pruned.reason = "pruned: probe 50.0 us > 4x the best probe (10.0 us)";
    pruned.graph_median_us = pruned.graph_p90_us = pruned.graph_min_us = std::nullopt;
    cache::Timing rejected = pruned;
    rejected.candidate = "kernel_wrong";
    rejected.status = CandidateStatus::rejected;
    rejected.reason = "output differs from the reference first at (m=0, n=3)";
    rejected.eager_median_us = rejected.eager_p90_us = rejected.eager_min_us = std::nullopt;
    cache.put_timings({slow, pruned, fast, rejected, lt});
    cache.put_winner({key, "kernel_fast", 0, 8.0, 10.0, 1.25, 0});
  }
  Result race = run({"inspect", "race", "--cache", c});
  ASSERT_TRUE(race.ok()) << race.describe();
  const std::vector<std::string> order = {"kernel_fast", "cublaslt:algo=0", "kernel_slow", "kernel_pruned",
                                          "kernel_wrong"};
  size_t at = 0;
  for (const std::string& name : order) {
    const size_t next = race.out.find(name, at);
    ASSERT_NE(next, std::string::npos) << name << " not after the previous row\n" << race.out;
    at = next;
  }
  EXPECT_NE(race.out.find("1.25x"), std::string::npos) << "cuBLASLt 10.0 against 8.0\n" << race.out;
  EXPECT_NE(race.out.find("1.50x"), std::string::npos) << "12.0 against 8.0\n" << race.out;
  EXPECT_NE(race.out.find("<- winner"), std::string::npos) << race.out;
  EXPECT_NE(race.out.find("(final round:"), std::string::npos) << race.out;
  EXPECT_NE(race.out.find("(output differs"), std::string::npos) << race.out;
  EXPECT_EQ(race.out.find(" 0.00"), std::string::npos) << "an unmeasured time reads as a 0\n" << race.out;
  EXPECT_NE(race.out.find("1 of 1 tuned buckets"), std::string::npos) << race.out;

  Result js = run({"inspect", "race", "--json", "--cache", c});
  ASSERT_TRUE(js.ok()) << js.describe();
  const json doc = json::parse(js.out);
  EXPECT_EQ(doc.at("schema"), "i8gemm/inspect-race");
  const json& rows = doc.at("buckets").at(0).at("candidates");
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_EQ(rows.at(0).at("candidate"), "kernel_fast");
  EXPECT_TRUE(rows.at(0).at("winner").get<bool>());
  EXPECT_DOUBLE_EQ(rows.at(1).at("vs_winner").get<double>(), 1.25);
  EXPECT_TRUE(rows.at(3).at("graph_median_us").is_null()) << "pruned: no graph time";
  EXPECT_EQ(rows.at(4).at("status"), "rejected");

  Result none = run({"inspect", "race", "--filter", "^no_such_problem", "--cache", c});
  ASSERT_TRUE(none.ok()) << none.describe();
  EXPECT_NE(none.out.find("0 of 1 tuned buckets"), std::string::npos) << none.out;
  Result bad = run({"inspect", "race", "--filter", "(", "--cache", c});
  EXPECT_FALSE(bad.ok()) << bad.describe();
  EXPECT_NE(bad.err.find("not a valid regex"), std::string::npos) << bad.err;

  // inspect's own --cache and --json, before `race`, are the same options (they were once
  // ignored: the default cache was opened instead); its --filter (kernel names) is refused.
  Result before = run({"inspect", "--cache", c, "--json", "race"});
  ASSERT_TRUE(before.ok()) << before.describe();
  EXPECT_EQ(before.out, js.out);
  Result names = run({"inspect", "--filter", "kernel_fast", "--cache", c, "race"});
  EXPECT_TRUE(names.failed_cleanly()) << names.describe();
  EXPECT_NE(names.err.find("matches problem keys"), std::string::npos) << names.describe();
}

// `inspect race --untuned`: per bucket, the kernel this build's untuned default names for the
// bucket's problem, arch and SM count, with its time in the race against the winner's; "not in
// this race" where it was not timed; no default for an arch this build does not know; and the
// geometric mean over the buckets where it was timed.
TEST_F(CliInspectTimings, RaceUntunedNamesTheDefaultAndItsTimeAgainstTheWinner) {
  const std::string c = dir_.file("untuned.sqlite");
  const cache::TuneKey key = cache::testing::make_tune_key();  // 2560 x 4096, M = 16, sm_90a, 132 SMs
  Target t = Target::from_arch(key.arch);
  t.sm_count = key.sm_count;
  const GemmProblem p = GemmProblem::parse_key(key.problem_key);
  const std::string dflt = KernelSpec{p, heuristic_default(p, t, key.m_bucket), t.arch}.name();
  cache::TuneKey other = key;  // a bucket where the default was not raced
  other.m_bucket = 64;
  cache::TuneKey foreign = key;  // an arch this build cannot name a default for
  foreign.arch = "sm_99z";
  foreign.m_bucket = 256;
  {
    Cache cache(c, Cache::Mode::read_write);
    cache::Timing fast{key, "kernel_fast", 0, CandidateStatus::ok, "", 8.5, 9.0, 8.4, 8.0, 8.2, 7.9, 0};
    cache::Timing d = fast;
    d.candidate = dflt;
    d.graph_median_us = 10.0;
    cache::Timing o = fast;
    o.key = other;
    cache::Timing f = fast;
    f.key = foreign;
    cache.put_timings({fast, d, o, f});
    cache.put_winner({key, "kernel_fast", 0, 8.0, 0, 0, 0});
    cache.put_winner({other, "kernel_fast", 0, 8.0, 0, 0, 0});
    cache.put_winner({foreign, "kernel_fast", 0, 8.0, 0, 0, 0});
  }
  Result race = run({"inspect", "race", "--untuned", "--cache", c});
  ASSERT_TRUE(race.ok()) << race.describe();
  EXPECT_NE(race.out.find("untuned default (this build's rule): " + dflt + " 10.00 us, 1.25x the winner"),
            std::string::npos)
      << race.out;
  EXPECT_NE(race.out.find("(not in this race)"), std::string::npos) << race.out;
  EXPECT_NE(race.out.find("no untuned default: "), std::string::npos) << race.out;
  EXPECT_NE(race.out.find("1 of 3 buckets where it was timed: geometric mean 1.250x, worst 1.250x"), std::string::npos)
      << race.out;
  Result plain = run({"inspect", "race", "--cache", c});
  ASSERT_TRUE(plain.ok()) << plain.describe();
  EXPECT_EQ(plain.out.find("untuned default"), std::string::npos) << "only on request\n" << plain.out;

  Result js = run({"inspect", "race", "--untuned", "--json", "--cache", c});
  ASSERT_TRUE(js.ok()) << js.describe();
  const json doc = json::parse(js.out);
  int timed = 0;
  for (const json& b : doc.at("buckets")) {
    const json& u = b.at("untuned");
    if (!u.at("vs_winner").is_null()) {
      ++timed;
      EXPECT_EQ(u.at("candidate"), dflt);
      EXPECT_DOUBLE_EQ(u.at("vs_winner").get<double>(), 1.25);
    }
  }
  EXPECT_EQ(timed, 1);
}

}  // namespace
}  // namespace i8g::clitest

// What `inspect` prints for times that were never measured: a pruned candidate has no graph
// time and a failed one no time at all. They are NULL in the cache and "-" on the screen,
// never a 0 that reads like a measurement.
#include <gtest/gtest.h>

#include <sstream>

#include "tests/cache/cache_test_util.hpp"
#include "cli_test_support.hpp"

namespace i8g::clitest {
namespace {

using i8g::cache::Cache;
using i8g::cache::CandidateStatus;

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

}  // namespace
}  // namespace i8g::clitest

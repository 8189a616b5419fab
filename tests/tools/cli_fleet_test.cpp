// Tuning at fleet scale on the CPU side (issue 16): `tune --compile-only --shard I/N` jobs that
// together compile exactly the unsharded run's kernels, `cache merge` of their caches, and the
// refusals of `cache merge` / `cache export` (a damaged input, an output that exists, nothing to
// export). The GPU half (`--shard` over (shape, M) buckets) runs on the H200 only.
#include <gtest/gtest.h>

#include <regex>
#include <set>

#include "cli_test_support.hpp"
#include "tests/cache/cache_test_util.hpp"

namespace i8g::clitest {
namespace {

using i8g::cache::Cache;

class CliFleet : public ::testing::Test {
 protected:
  Result run(const std::vector<std::string>& args) { return run_cli(args, RunOptions(dir_.default_cache()), dir_.path()); }
  Result compile(const std::string& cache, const std::string& shard = "") {
    std::vector<std::string> a = {"tune", "--compile-only", "--arch", "sm_80", "--shape", "256x512", "--shape",
                                  "512x256", "--filter", "simt_dp4a.*bm16_", "-j", "2", "--cache", cache};
    if (!shard.empty()) a.insert(a.end(), {"--shard", shard});
    return run(a);
  }
  static std::multiset<std::string> gemm_kernels(const std::string& path) {
    Cache c(path, Cache::Mode::read_only);
    std::multiset<std::string> s;
    for (const auto& k : c.list_kernels())
      if (k.family != "utility") s.insert(k.key.name);
    return s;
  }
  TempDir dir_;
};

TEST_F(CliFleet, CompileOnlyShardsPartitionTheKernelsAndMergeIntoTheFullRun) {
  const std::string full = dir_.file("full.sqlite");
  const Result whole = compile(full);
  ASSERT_TRUE(whole.ok()) << whole.describe();
  const std::multiset<std::string> want = gemm_kernels(full);
  ASSERT_GE(want.size(), 4u) << whole.describe();
  std::multiset<std::string> seen;
  std::vector<std::string> merge_args = {"cache", "merge", dir_.file("merged.sqlite")};
  for (int i = 0; i < 3; ++i) {
    const std::string c = dir_.file("s" + std::to_string(i) + ".sqlite");
    Result r = compile(c, std::to_string(i) + "/3");
    ASSERT_TRUE(r.ok()) << r.describe();
    EXPECT_NE(r.out.find("shard " + std::to_string(i) + "/3:"), std::string::npos) << r.describe();
    const std::multiset<std::string> part = gemm_kernels(c);
    EXPECT_FALSE(part.empty());
    seen.insert(part.begin(), part.end());
    merge_args.push_back(c);
  }
  EXPECT_EQ(seen, want) << "every kernel in exactly one shard; the unsharded run:\n" << whole.describe();
  // The same shard again: the same kernels (a deterministic split).
  const std::string again = dir_.file("s1-again.sqlite");
  const Result rerun = compile(again, "1/3");
  ASSERT_TRUE(rerun.ok()) << rerun.describe();
  EXPECT_EQ(gemm_kernels(again), gemm_kernels(dir_.file("s1.sqlite")));

  Result m = run(merge_args);
  ASSERT_TRUE(m.ok()) << m.describe();
  std::multiset<std::string> merged = gemm_kernels(dir_.file("merged.sqlite"));
  EXPECT_EQ(merged, want) << m.describe();
  // The merged cache is as good as the full run's: a compile-only run over it compiles nothing.
  Result over = compile(dir_.file("merged.sqlite"));
  ASSERT_TRUE(over.ok()) << over.describe();
  EXPECT_NE(over.out.find("utility module i8g_sm80_utility: cached"), std::string::npos) << over.describe();
  const std::regex row(R"((?:^|\n)(?:256x512|512x256)\s+\S+\s+(\d+)\s+(\d+)\s+(\d+)\s+0\s)");
  int rows = 0;
  for (std::sregex_iterator it(over.out.begin(), over.out.end(), row), end; it != end; ++it, ++rows) {
    EXPECT_EQ((*it)[2].str(), "0") << "compiled again\n" << over.describe();
    EXPECT_EQ((*it)[1].str(), (*it)[3].str()) << "every kernel cached\n" << over.describe();
  }
  EXPECT_EQ(rows, 2) << over.describe();
}

TEST_F(CliFleet, MergeRefusesADamagedInputWholeAndLeavesEveryFileAsItWas) {
  const std::string good = dir_.file("good.sqlite"), bad = dir_.file("bad.sqlite"), out = dir_.file("out.sqlite");
  ASSERT_TRUE(compile(good, "0/2").ok());
  ASSERT_TRUE(compile(bad, "1/2").ok());
  const std::string damaged = corrupt_one_binary(bad);
  const std::string good_bytes = read_bytes(good), bad_bytes = read_bytes(bad);
  Result r = run({"cache", "merge", out, good, bad});
  EXPECT_TRUE(r.failed_cleanly()) << r.describe();
  EXPECT_NE(r.err.find(bad), std::string::npos) << r.describe();
  EXPECT_NE(r.err.find("sha256"), std::string::npos) << r.describe();
  EXPECT_FALSE(exists(out)) << "nothing written: not even the good input's kernels";
  EXPECT_EQ(read_bytes(good), good_bytes);
  EXPECT_EQ(read_bytes(bad), bad_bytes);
  Result self = run({"cache", "merge", good, good});
  EXPECT_TRUE(self.failed_cleanly()) << self.describe();
  Result missing = run({"cache", "merge", out, dir_.file("absent.sqlite")});
  EXPECT_TRUE(missing.failed_cleanly()) << missing.describe();
  EXPECT_FALSE(exists(dir_.file("absent.sqlite")));
  Result none = run({"cache", "merge", out});
  EXPECT_TRUE(none.failed_cleanly()) << none.describe();
  (void)damaged;
}

TEST_F(CliFleet, ExportNeedsWinnersAndNeverWritesIntoAnExistingFile) {
  const std::string c = dir_.file("c.sqlite"), out = dir_.file("served.sqlite");
  ASSERT_TRUE(compile(c).ok());
  Result r = run({"cache", "export", "--winners-only", out, "--cache", c});
  EXPECT_TRUE(r.failed_cleanly()) << r.describe();
  EXPECT_NE(r.err.find("no tuned winners"), std::string::npos) << r.describe();
  EXPECT_FALSE(exists(out));
  // A winner (as a GPU tune stores it) for one compiled kernel: the export holds it alone.
  std::string name;
  {
    Cache w(c, Cache::Mode::read_write);
    const auto kernels = w.list_kernels({"simt_dp4a"});
    ASSERT_FALSE(kernels.empty());
    name = kernels.front().key.name;
    cache::Winner win;
    win.key = i8g::cache::testing::make_tune_key();
    win.key.problem_key = kernels.front().problem_key;
    win.key.arch = "sm_80";
    win.key.compiler_version = kernels.front().key.compiler_version;
    win.key.generator_hash = kernels.front().key.generator_hash;
    win.candidate = name;
    win.kernel_id = kernels.front().id;
    win.time_us = 7.5;
    w.put_winner(win);
  }
  Result ok = run({"cache", "export", "--winners-only", out, "--cache", c});
  ASSERT_TRUE(ok.ok()) << ok.describe();
  {
    Cache e(out, Cache::Mode::read_only);
    std::set<std::string> names;
    for (const auto& k : e.list_kernels()) names.insert(k.key.name);
    EXPECT_EQ(names, (std::set<std::string>{name, "i8g_sm80_utility"}));
    EXPECT_EQ(e.list_winners().size(), 1u);
  }
  const std::string before = read_bytes(out);
  Result again = run({"cache", "export", "--winners-only", out, "--cache", c});
  EXPECT_TRUE(again.failed_cleanly()) << again.describe();
  EXPECT_NE(again.err.find("exists"), std::string::npos) << again.describe();
  EXPECT_EQ(read_bytes(out), before);
  Result no_flag = run({"cache", "export", dir_.file("x.sqlite"), "--cache", c});
  EXPECT_TRUE(no_flag.failed_cleanly()) << no_flag.describe();
}

TEST_F(CliFleet, DeviceJobsAreRefusedClearlyWhereTheyCannotRun) {
  // This test runs where CI does, without a GPU: the device list is checked before any job starts.
  const std::string c = dir_.file("d.sqlite");
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"tune", "--shape", "256x512", "--devices", "0,1", "--cache", c},
        {"tune", "--shape", "256x512", "--devices", "0", "--device", "1", "--cache", c},
        {"tune", "--compile-only", "--arch", "sm_80", "--shape", "256x512", "--devices", "0", "--cache", c},
        {"tune", "--shape", "256x512", "--devices", "0", "--shard", "2/2", "--cache", c},
        {"tune", "--shape", "256x512", "--devices", "x", "--cache", c}}) {
    Result r = run(args);
    EXPECT_TRUE(r.failed_cleanly()) << r.describe();
    const bool named = r.err.find("--devices") != std::string::npos || r.err.find("--shard") != std::string::npos;
    EXPECT_TRUE(named) << "the error names the flag\n" << r.describe();
    EXPECT_FALSE(exists(c)) << r.describe();
  }
}

}  // namespace
}  // namespace i8g::clitest

// `i8gemm cache gc` and `i8gemm cache quarantine`, stale marking in `inspect`, and `inspect
// audit` on an untrusted file: maintenance happens only when asked, and nothing is deleted.
#include <gtest/gtest.h>

#include <sqlite3.h>
#include <sys/stat.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <tuple>

#include "tests/cache/cache_test_util.hpp"
#include "cli_test_support.hpp"

namespace i8g::clitest {
namespace {

using i8g::cache::Cache;
using nlohmann::json;

class CliCacheCmd : public ::testing::Test {
 protected:
  Result run(const std::vector<std::string>& args) { return run_cli(args, RunOptions(dir_.default_cache()), dir_.path()); }
  // A small real cache: two sm_80 kernels compiled by this build (current, not stale).
  std::string tuned(const std::string& name) {
    const std::string c = dir_.file(name);
    Result r = run({"tune", "--compile-only", "--arch", "sm_80", "--shape", "256x512", "--filter",
                    "simt_dp4a.*bm16_bn64_", "-j", "2", "--cache", c});
    EXPECT_TRUE(r.ok()) << r.describe();
    return c;
  }
  std::vector<std::string> broken_files() {
    std::vector<std::string> v;
    // The main file only: a -wal/-shm that SQLite made beside it moves with it.
    for (const auto& n : list_dir(dir_.path()))
      if (n.find(".broken-") != std::string::npos && n.find("-wal") == std::string::npos &&
          n.find("-shm") == std::string::npos)
        v.push_back(n);
    return v;
  }
  TempDir dir_;
};

TEST_F(CliCacheCmd, QuarantineMovesAnUnreadableCacheAsideAndDeletesNothing) {
  const std::string real = read_bytes(tuned("real.sqlite"));
  // Damaged i8gemm caches (their header says so) move on request; bytes with no header left
  // could be anyone's file and move only with --force.
  const std::vector<std::tuple<std::string, std::string, bool>> cases = {
      {"garbage", random_bytes(8192, 3), true},
      {"truncated", real.substr(0, real.size() / 2), false},
      {"header only", real.substr(0, 100), false}};
  int moved = 0;
  for (const auto& [what, bytes, force] : cases) {
    const std::string c = dir_.file("cache.sqlite");
    write_bytes(c, bytes);
    Result list = run({"inspect", "list", "--cache", c});
    EXPECT_TRUE(list.failed_cleanly()) << what << "\n" << list.describe();
    EXPECT_NE(list.err.find(c), std::string::npos) << "the error names the file\n" << list.describe();
    EXPECT_EQ(read_bytes(c), bytes) << what << ": inspect changed the file";
    if (force) {
      Result refused = run({"cache", "quarantine", "--cache", c});
      EXPECT_TRUE(refused.failed_cleanly()) << what << "\n" << refused.describe();
      EXPECT_NE(refused.err.find("--force"), std::string::npos) << refused.describe();
      EXPECT_EQ(read_bytes(c), bytes) << what << ": refused, yet changed";
    }
    Result q = force ? run({"cache", "quarantine", "--force", "--cache", c}) : run({"cache", "quarantine", "--cache", c});
    ASSERT_TRUE(q.ok()) << what << "\n" << q.describe();
    EXPECT_FALSE(exists(c));
    const auto broken = broken_files();
    ASSERT_EQ(broken.size(), 1u) << what;
    EXPECT_NE(q.out.find(dir_.file(broken[0])), std::string::npos) << "says where it went\n" << q.out;
    EXPECT_EQ(read_bytes(dir_.file(broken[0])), bytes) << what << ": moved, byte for byte";
    ++moved;
    for (const char* suffix : {"", "-wal", "-shm"})
      if (exists(dir_.file(broken[0]) + suffix))
        std::filesystem::rename(dir_.file(broken[0]) + suffix, dir_.file("kept-" + std::to_string(moved)) + suffix);
  }
  std::printf("unreadable caches refused untouched, then quarantined on request: %d/3, deleted: 0\n", moved);
}

// What is not an i8gemm cache is not quarantined unasked: a text file, another application's
// SQLite database; a directory not even with --force.
TEST_F(CliCacheCmd, QuarantineRefusesWhatIsNotAnI8gemmCache) {
  const std::string text = dir_.file("notes.txt");
  write_bytes(text, "my notes, not a cache\n");
  const std::string theirs = dir_.file("theirs.sqlite");
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(theirs.c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, "CREATE TABLE t (x); INSERT INTO t VALUES (1);", nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(db);
  }
  for (const std::string& f : {text, theirs}) {
    const std::string before = read_bytes(f);
    Result q = run({"cache", "quarantine", "--cache", f});
    EXPECT_TRUE(q.failed_cleanly()) << q.describe();
    EXPECT_NE(q.err.find("not recognizably an i8gemm cache"), std::string::npos) << q.describe();
    EXPECT_EQ(read_bytes(f), before);
  }
  const std::string d = dir_.file("adir");
  ASSERT_EQ(mkdir(d.c_str(), 0755), 0);
  Result q = run({"cache", "quarantine", "--force", "--cache", d});
  EXPECT_TRUE(q.failed_cleanly()) << q.describe();
  EXPECT_NE(q.err.find("not a regular file"), std::string::npos) << q.describe();
  EXPECT_TRUE(std::filesystem::is_directory(d));
  EXPECT_TRUE(broken_files().empty());
}

TEST_F(CliCacheCmd, QuarantineLeavesAHealthyCacheWhereItIs) {
  const std::string c = tuned("ok.sqlite");
  const std::string before = read_bytes(c);
  Result q = run({"cache", "quarantine", "--cache", c});
  EXPECT_TRUE(q.failed_cleanly()) << q.describe();
  EXPECT_NE(q.err.find("--force"), std::string::npos) << q.describe();
  EXPECT_EQ(read_bytes(c), before);
  EXPECT_TRUE(broken_files().empty());
  Result missing = run({"cache", "quarantine", "--cache", dir_.file("absent.sqlite")});
  EXPECT_TRUE(missing.failed_cleanly()) << missing.describe();
  EXPECT_FALSE(exists(dir_.file("absent.sqlite")));
}

TEST_F(CliCacheCmd, InspectMarksStaleEntriesAndGcRemovesThemOnlyWhenAsked) {
  const std::string c = tuned("gc.sqlite");
  {
    // Entries of another toolkit and another template version, beside the current ones.
    Cache cache(c, Cache::Mode::read_write);
    auto ks = cache.list_kernels({"", true});
    ASSERT_EQ(ks.size(), 3u) << "two kernels and the utility module";
    ks.erase(std::remove_if(ks.begin(), ks.end(), [](const auto& k) { return k.family == "utility"; }), ks.end());
    ASSERT_EQ(ks.size(), 2u);
    auto old_tk = ks[0], old_gen = ks[1];
    old_tk.key.compiler_version = "nvrtc 12.4";
    old_gen.key.generator_hash = std::string(64, 'b');
    cache.put_kernel(old_tk);
    cache.put_kernel(old_gen);
    auto tk = cache::testing::make_tune_key();
    tk.compiler_version = "nvrtc 12.4";
    cache.put_winner({tk, old_tk.key.name, 0, 1, 2, 2, 0});
  }
  Result list = run({"inspect", "list", "--json", "--cache", c});
  ASSERT_TRUE(list.ok()) << list.describe();
  int stale = 0, fresh = 0;
  const json listed = json::parse(list.out).at("kernels");
  for (const auto& k : listed) (k.value("stale", false) ? stale : fresh)++;
  EXPECT_EQ(stale, 2);
  EXPECT_EQ(fresh, 3);
  Result winners = run({"inspect", "winners", "--json", "--cache", c});
  ASSERT_TRUE(winners.ok()) << winners.describe();
  EXPECT_TRUE(json::parse(winners.out).at("winners").at(0).value("stale", false)) << winners.out;

  Result dry = run({"cache", "gc", "--dry-run", "--cache", c});
  ASSERT_TRUE(dry.ok()) << dry.describe();
  EXPECT_NE(dry.out.find("would remove 3 stale entries (2 kernels, 0 timings, 1 winners)"), std::string::npos) << dry.out;
  EXPECT_EQ(Cache(c, Cache::Mode::read_only).list_kernels().size(), 5u);
  Result gc = run({"cache", "gc", "--cache", c});
  ASSERT_TRUE(gc.ok()) << gc.describe();
  EXPECT_NE(gc.out.find("removed 3 stale entries"), std::string::npos) << gc.out;
  Result after = run({"inspect", "list", "--json", "--cache", c});
  const json listed_after = json::parse(after.out).at("kernels");
  for (const auto& k : listed_after) EXPECT_FALSE(k.value("stale", true)) << k.dump();
  EXPECT_EQ(json::parse(after.out).at("kernels").size(), 3u);
  Result again = run({"cache", "gc", "--cache", c});
  EXPECT_NE(again.out.find("removed 0 stale entries"), std::string::npos) << again.out;
  Result none = run({"cache", "gc", "--cache", dir_.file("absent.sqlite")});
  EXPECT_TRUE(none.failed_cleanly()) << none.describe();
  EXPECT_FALSE(exists(dir_.file("absent.sqlite"))) << "gc never creates a cache";
  std::printf("stale entries marked: 2 kernels + 1 winner; gc --dry-run removed 0; gc removed 3, kept 3\n");
}

// audit reads an untrusted file without loading anything: no GPU is needed (none is visible to
// it), the file stays byte-identical, and nothing in inspect or cache/ can load code.
TEST_F(CliCacheCmd, AuditOfAnUntrustedCacheNeedsNoGpuAndChangesNoByte) {
  const std::string c = tuned("untrusted.sqlite");
  const std::string bad = corrupt_one_binary(c);
  const std::string before = read_bytes(c);
  const auto files_before = list_dir(dir_.path());
  RunOptions o(dir_.default_cache());
  o.extra_env = {"CUDA_VISIBLE_DEVICES=", "HIP_VISIBLE_DEVICES="};
  Result r = run_cli({"inspect", "audit", "--cache", c}, o, dir_.path());
  EXPECT_TRUE(r.failed_cleanly()) << r.describe();
  EXPECT_NE(r.out.find(bad), std::string::npos) << r.describe();
  EXPECT_NE(r.out.find("does not match its sha256"), std::string::npos) << r.describe();
  EXPECT_EQ(read_bytes(c), before);
  // A read-only SQLite reader of a WAL-mode file may leave an empty WAL and its index beside it;
  // nothing else appears and the database file itself is untouched.
  for (const auto& n : list_dir(dir_.path())) {
    if (std::find(files_before.begin(), files_before.end(), n) != files_before.end()) continue;
    EXPECT_TRUE(n == "untrusted.sqlite-wal" || n == "untrusted.sqlite-shm") << n;
    if (n == "untrusted.sqlite-wal") {
      EXPECT_EQ(read_bytes(dir_.file(n)).size(), 0u);
    }
  }
  for (const char* src : {"tools/inspect.cpp", "cache/cache_kernels.cpp", "cache/cache_open.cpp",
                          "cache/cache_tuning.cpp", "cache/sqlite.cpp"}) {
    const std::string text = read_bytes(source_path(src));
    ASSERT_FALSE(text.empty()) << src;
    for (const char* loader : {"dlopen", "cuModuleLoad", "hipModuleLoad", "cuda_driver.hpp", "Module("})
      EXPECT_EQ(text.find(loader), std::string::npos) << src << " mentions " << loader;
  }
}

TEST_F(CliCacheCmd, CacheIsAKnownCommand) {
  Result r = run({"nonsense"});
  EXPECT_NE(r.err.find("cache"), std::string::npos) << r.describe();
  Result h = run({"cache", "--help"});
  EXPECT_TRUE(h.ok()) << h.describe();
  EXPECT_NE(h.out.find("quarantine"), std::string::npos);
  EXPECT_NE(h.out.find("gc"), std::string::npos);
}

}  // namespace
}  // namespace i8g::clitest

// Every refused input: a normal non-zero exit (never a signal), one line on stderr that says
// what was wrong, and no file of the user's touched: a missing cache is not created, a file that
// is not an i8gemm cache keeps every byte.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "cache/cache.hpp"
#include "cli_test_support.hpp"

namespace i8g::clitest {
namespace {

bool has(const std::string& hay, const std::string& needle) { return hay.find(needle) != std::string::npos; }

// The contract for a refused command.
void expect_refused(const Result& r, const std::string& word) {
  EXPECT_FALSE(r.signaled) << "crashed\n" << r.describe();
  EXPECT_FALSE(r.timed_out) << r.describe();
  EXPECT_TRUE(r.failed_cleanly()) << "should fail with a non-zero exit\n" << r.describe();
  const std::string e = r.err_trimmed();
  EXPECT_FALSE(e.empty()) << "no message on stderr\n" << r.describe();
  EXPECT_EQ(e.find('\n'), std::string::npos) << "the message should be one line\n" << r.describe();
  EXPECT_TRUE(has(e, word)) << "the message should mention '" << word << "'\n" << r.describe();
}

struct BadCase {
  const char* label;
  std::vector<std::string> args;  // after "tune --compile-only --arch sm_90a --cache T/x.sqlite" unless raw
  std::string word;
  bool raw = false;  // args are the whole command line
};

std::ostream& operator<<(std::ostream& os, const BadCase& c) { return os << c.label; }

class CliBadTune : public ::testing::TestWithParam<BadCase> {
 protected:
  TempDir dir_;
};

TEST_P(CliBadTune, IsRefusedWithOneUsefulLine) {
  ASSERT_TRUE(exists(cli_path())) << cli_path() << " is not built";
  const BadCase& c = GetParam();
  write_bytes(dir_.file("bad.shapes"), "# TP4\nqkv 2560x4096\n\no_proj 4096x20x48\nlast 8x8\n");
  write_bytes(dir_.file("empty.shapes"), "");
  std::vector<std::string> args;
  if (!c.raw) args = {"tune", "--compile-only", "--arch", "sm_90a", "--cache", dir_.file("x.sqlite")};
  for (std::string a : c.args) {
    if (a.rfind("T/", 0) == 0) a = dir_.file(a.substr(2));
    args.push_back(a);
  }
  std::string word = c.word;
  if (word.rfind("T/", 0) == 0) word = dir_.file(word.substr(2));
  Result r = run_cli(args, {dir_.default_cache()}, dir_.path());
  expect_refused(r, word);
  EXPECT_FALSE(exists(dir_.default_cache())) << "a refused command made the default cache";
}

const BadCase kBadTunes[] = {
    {"zero_n", {"--shape", "0x4096"}, "positive"},
    {"zero_k", {"--shape", "4096x0"}, "positive"},
    {"negative_n", {"--shape", "-1x4"}, "-1x4"},
    {"k_overflow", {"--shape", "4096x200000"}, "overflow"},
    {"k_overflow_asymmetric", {"--shape", "4096x70000", "--asym"}, "overflow"},
    {"n_too_large", {"--shape", "999999999x4096"}, "N"},
    {"too_many_digits", {"--shape", "99999999999999999999x4"}, "shape"},
    {"not_a_shape", {"--shape", "abc"}, "abc"},
    {"one_good_one_bad_shape", {"--shape", "768x4096", "--shape", "768y4096"}, "768y4096"},
    {"missing_shapes", {}, "shape"},
    {"arch_sm61", {"tune", "--compile-only", "--arch", "sm_61", "--shape", "768x4096", "--cache", "T/x.sqlite"}, "sm_61", true},
    {"arch_gfx942", {"tune", "--compile-only", "--arch", "gfx942", "--shape", "768x4096", "--cache", "T/x.sqlite"}, "gfx942", true},
    {"arch_nonsense", {"tune", "--compile-only", "--arch", "nonsense", "--shape", "768x4096", "--cache", "T/x.sqlite"}, "nonsense", true},
    {"no_arch", {"tune", "--compile-only", "--shape", "768x4096", "--cache", "T/x.sqlite"}, "--arch", true},
    {"unknown_flag", {"--shape", "768x4096", "--frobnicate"}, "frobnicate"},
    {"bad_out_type", {"--shape", "768x4096", "--out", "q4"}, "q4"},
    {"bad_layout", {"--shape", "768x4096", "--layout", "xx"}, "xx"},
    {"bias_with_i32", {"--shape", "768x4096", "--bias", "--out", "i32"}, "bias"},
    {"negative_jobs", {"--shape", "768x4096", "-j", "-1"}, "jobs"},
    {"prune_factor_below_one", {"--shape", "768x4096", "--prune-factor", "0.5"}, "prune-factor"},
    {"prune_factor_not_a_number", {"--shape", "768x4096", "--prune-factor", "x"}, "prune-factor"},
    {"shapes_file_missing", {"--shapes", "T/no_such.shapes"}, "T/no_such.shapes"},
    {"shapes_file_bad_line", {"--shapes", "T/bad.shapes"}, "line 4"},
    {"shapes_file_empty", {"--shapes", "T/empty.shapes"}, "no shapes"},
    {"shapes_file_is_a_directory", {"--shapes", "T/"}, "T/"},
    {"bad_filter_regex", {"--shape", "768x4096", "--filter", "("}, "filter"},
    {"filter_matches_nothing", {"--shape", "768x4096", "--filter", "^matches_no_kernel$"}, "matches none"},
    {"bad_m_without_gpu", {"--shape", "768x4096", "--m", "1,0"}, "--m"},
    {"resume_with_compile_only", {"--shape", "768x4096", "--resume"}, "--resume"},
    {"empty_cache_path", {"inspect", "list", "--cache", ""}, "empty path", true},
    {"empty_cache_path_tune", {"tune", "--compile-only", "--arch", "sm_90a", "--shape", "768x4096", "--cache", ""},
     "empty path", true},
    {"no_compile_only", {"tune", "--arch", "sm_90a", "--shape", "768x4096", "--cache", "T/x.sqlite"}, "--compile-only", true},
    {"no_subcommand", {}, "subcommand", true},
    {"unknown_subcommand", {"frobnicate"}, "frobnicate", true},
    {"show_without_name", {"inspect", "show", "--cache", "T/x.sqlite"}, "name", true},
};

INSTANTIATE_TEST_SUITE_P(All, CliBadTune, ::testing::ValuesIn(kBadTunes),
                         [](const ::testing::TestParamInfo<BadCase>& i) { return std::string(i.param.label); });

// ---------------------------------------------------------------------------------------------
// Caches that are missing, garbage or someone else's.

class CliCacheFiles : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(exists(cli_path())) << cli_path() << " is not built"; }
  Result run(const std::vector<std::string>& args) { return run_cli(args, {dir_.default_cache()}, dir_.path()); }
  // A valid cache with no kernels in it.
  std::string empty_cache() {
    const std::string c = dir_.file("empty.sqlite");
    { cache::Cache created(c, cache::Cache::Mode::read_write); }
    return c;
  }
  // Every way inspect can open a cache.
  std::vector<std::vector<std::string>> inspect_commands(const std::string& c) {
    return {{"inspect", "--cache", c},
            {"inspect", "list", "--cache", c},
            {"inspect", "list", "--json", "--cache", c},
            {"inspect", "show", "i8g_sm90a_simt_dp4a_n768_k4096_nk_tok_ch_bf16_bm16_bn128_bk32_tm4_tn4_v16", "--cache", c},
            {"inspect", "audit", "--cache", c},
            {"inspect", "audit", "--json", "--cache", c}};
  }
  TempDir dir_;
};

TEST_F(CliCacheFiles, InspectOfAMissingCacheCreatesNothing) {
  const std::string sub = dir_.file("not_there");
  const std::string c = sub + "/cache.sqlite";
  for (const auto& args : inspect_commands(c)) {
    Result r = run(args);
    expect_refused(r, c);
    EXPECT_FALSE(exists(sub)) << "inspect made the directory\n" << r.describe();
    EXPECT_FALSE(exists(c));
  }
  // The default location too.
  Result r = run({"inspect"});
  expect_refused(r, dir_.default_cache());
  EXPECT_FALSE(exists(dir_.default_cache()));
  EXPECT_FALSE(exists(dir_.file("default-cache")));
  const std::string c2 = dir_.file("here.sqlite");
  Result r2 = run({"inspect", "--cache", c2});
  expect_refused(r2, "exist");
  EXPECT_FALSE(exists(c2));
  EXPECT_FALSE(exists(c2 + "-wal"));
  EXPECT_FALSE(exists(c2 + "-shm"));
  EXPECT_FALSE(exists(c2 + "-journal"));
}

// Random bytes, and random bytes behind a valid SQLite magic: refused, every byte kept, no
// side files left beside them.
TEST_F(CliCacheFiles, GarbageFilesAreRefusedAndKept) {
  const std::string plain = random_bytes(8192, 1);
  const std::string looks_sqlite = std::string("SQLite format 3\0", 16) + random_bytes(8192 - 16, 2);
  int n = 0;
  for (const std::string& bytes : {plain, looks_sqlite}) {
    const std::string c = dir_.file("garbage" + std::to_string(++n) + ".sqlite");
    write_bytes(c, bytes);
    const auto before = list_dir(dir_.path());
    std::vector<std::vector<std::string>> commands = inspect_commands(c);
    commands.push_back({"tune", "--compile-only", "--arch", "sm_90a", "--shape", "768x4096", "--cache", c, "-j", "2",
                        "--filter", "bm16_bn128_bk32_tm4_tn4"});
    for (const auto& args : commands) {
      Result r = run(args);
      expect_refused(r, "cache");
      EXPECT_TRUE(read_bytes(c) == bytes) << "the file was changed by\n" << r.describe();
      EXPECT_EQ(list_dir(dir_.path()), before) << "files appeared beside it after\n" << r.describe();
    }
  }
}

TEST_F(CliCacheFiles, AnotherApplicationsDatabaseIsRefusedAndKept) {
  const std::string c = dir_.file("theirs.sqlite");
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(c.c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, "CREATE TABLE kernels (id INTEGER PRIMARY KEY, binary BLOB);"
                               "INSERT INTO kernels (binary) VALUES (x'00112233');",
                           nullptr, nullptr, nullptr),
              SQLITE_OK);
    sqlite3_close(db);
  }
  const std::string bytes = read_bytes(c);
  std::vector<std::vector<std::string>> commands = inspect_commands(c);
  commands.push_back({"tune", "--compile-only", "--arch", "sm_90a", "--shape", "768x4096", "--cache", c, "--filter",
                      "bm16_bn128_bk32_tm4_tn4"});
  for (const auto& args : commands) {
    Result r = run(args);
    expect_refused(r, "cache");
    EXPECT_TRUE(read_bytes(c) == bytes) << "the file was changed by\n" << r.describe();
  }
}

TEST_F(CliCacheFiles, ShowOfAnAbsentName) {
  const std::string c = empty_cache();
  Result r = run({"inspect", "show", "i8g_no_such_kernel", "--cache", c});
  expect_refused(r, "i8g_no_such_kernel");
}

TEST_F(CliCacheFiles, InspectWithABadFilter) {
  const std::string c = empty_cache();
  for (const std::string sub : {"list", "audit"}) {
    Result r = run({"inspect", sub, "--cache", c, "--filter", "("});
    expect_refused(r, "(");
  }
}

TEST_F(CliCacheFiles, InspectOfAnEmptyCache) {
  const std::string c = empty_cache();
  Result l = run({"inspect", "list", "--json", "--cache", c});
  EXPECT_TRUE(l.ok()) << l.describe();
  const nlohmann::json doc = nlohmann::json::parse(l.out, nullptr, false);
  ASSERT_TRUE(doc.is_object()) << l.out;
  EXPECT_EQ(doc.value("schema", ""), "i8gemm/inspect-list") << l.out;
  EXPECT_TRUE(doc.value("kernels", nlohmann::json()).is_array()) << l.out;
  EXPECT_TRUE(doc.value("kernels", nlohmann::json()).empty()) << l.out;
  Result a = run({"inspect", "audit", "--cache", c});
  EXPECT_TRUE(a.ok()) << a.describe();
}

TEST_F(CliCacheFiles, EmptyFileIsRefusedByInspect) {
  const std::string c = dir_.file("zero.sqlite");
  write_bytes(c, "");
  Result r = run({"inspect", "--cache", c});
  expect_refused(r, "empty");
  EXPECT_EQ(read_bytes(c), "");
}

TEST_F(CliCacheFiles, CacheThatIsADirectoryIsRefused) {
  const std::string c = dir_.file("adir");
  ASSERT_EQ(mkdir(c.c_str(), 0755), 0);
  expect_refused(run({"inspect", "--cache", c}), "adir");
  expect_refused(run({"tune", "--compile-only", "--arch", "sm_90a", "--shape", "768x4096", "--cache", c, "--filter",
                      "bm16_bn128_bk32_tm4_tn4"}),
                 "adir");
  EXPECT_TRUE(list_dir(c).empty());
}

}  // namespace
}  // namespace i8g::clitest

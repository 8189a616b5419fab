// End to end through the i8gemm binary: tune --compile-only fills a cache; inspect list, show
// and audit read it back; a re-run finds everything cached; a failing run loses nothing; a
// damaged binary is found by audit. One populated cache (a handful of kernels, kept small with
// --filter) is shared by the suite; tests that change a cache work on their own copy.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "cli_test_support.hpp"
#include "core/embedded.hpp"
#include "i8gemm/i8gemm.h"

namespace i8g::clitest {
namespace {

using nlohmann::json;

// Keeps the shared cache to two kernels (ctest runs every test in its own process, and each
// process populates the fixture's cache once).
constexpr const char* kFilter = "bm16_bn128_bk32_tm(2_tn4|4_tn4)_";
constexpr const char* kShape = "768x4096";

// The whitespace-separated fields of the table row that starts with `label`.
std::vector<std::string> table_row(const std::string& out, const std::string& label) {
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream f(line);
    std::vector<std::string> fields;
    for (std::string w; f >> w;) fields.push_back(w);
    if (!fields.empty() && fields[0] == label) return fields;
  }
  return {};
}

// shape problem kernels compiled cached failed spilling max-regs
struct Row {
  bool found = false;
  std::string problem;
  int kernels = -1, compiled = -1, cached = -1, failed = -1, spilling = -1, max_regs = -1;
};

Row parse_row(const std::string& out, const std::string& label) {
  Row r;
  auto f = table_row(out, label);
  if (f.size() != 8) return r;
  r.found = true;
  r.problem = f[1];
  r.kernels = std::stoi(f[2]);
  r.compiled = std::stoi(f[3]);
  r.cached = std::stoi(f[4]);
  r.failed = std::stoi(f[5]);
  r.spilling = std::stoi(f[6]);
  r.max_regs = std::stoi(f[7]);
  return r;
}

std::string section(const std::string& text, const std::string& header) {
  const std::string h = "== " + header + " ==";
  auto at = text.find(h);
  if (at == std::string::npos) return {};
  at += h.size();
  auto next = text.find("\n== ", at);
  return text.substr(at, next == std::string::npos ? std::string::npos : next - at);
}

bool has(const std::string& hay, const std::string& needle) { return hay.find(needle) != std::string::npos; }

class CliPopulated : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    shared_ = new TempDir();
    cache_ = shared_->file("c.sqlite");
    tune_ = new Result(run_cli({"tune", "--compile-only", "--arch", "sm_90a", "--shape", kShape, "--cache",
                                cache_, "-j", "2", "--filter", kFilter},
                               {shared_->default_cache()}, shared_->path()));
  }
  static void TearDownTestSuite() {
    delete tune_;
    tune_ = nullptr;
    delete shared_;
    shared_ = nullptr;
  }
  void SetUp() override {
    ASSERT_TRUE(exists(cli_path())) << cli_path() << " is not built";
    ASSERT_TRUE(tune_->ok()) << "populating the shared cache failed\n" << tune_->describe();
  }

  // Runs the CLI with this test's own directory for I8GEMM_CACHE and scratch files.
  Result run(const std::vector<std::string>& args) { return run_cli(args, {mine_.default_cache()}, mine_.path()); }

  // `inspect list --json` of a cache, parsed; fails the test when it cannot.
  json list_json(const std::string& cache, const std::string& filter = "") {
    std::vector<std::string> args = {"inspect", "list", "--json", "--cache", cache};
    if (!filter.empty()) args.insert(args.end(), {"--filter", filter});
    Result r = run(args);
    EXPECT_TRUE(r.ok()) << r.describe();
    json j = json::parse(r.out, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << "not JSON:\n" << r.describe();
    EXPECT_TRUE(j.is_object()) << r.out;
    if (!j.is_object()) return json::array();
    EXPECT_EQ(j.value("schema", ""), "i8gemm/inspect-list") << r.out;
    EXPECT_EQ(j.value("version", 0), 1) << r.out;
    EXPECT_TRUE(j.value("kernels", json()).is_array()) << r.out;
    return j.value("kernels", json::array());
  }

  std::vector<std::string> names(const json& list) {
    std::vector<std::string> v;
    for (const auto& k : list) v.push_back(k.value("name", ""));
    return v;
  }

  // A private copy of the shared cache.
  std::string copy_of_shared(const std::string& name = "copy.sqlite") {
    const std::string p = mine_.file(name);
    copy_database(cache_, p);
    return p;
  }

  TempDir mine_;
  static TempDir* shared_;
  static std::string cache_;
  static Result* tune_;
};

TempDir* CliPopulated::shared_ = nullptr;
std::string CliPopulated::cache_;
Result* CliPopulated::tune_ = nullptr;

TEST_F(CliPopulated, TuneCompileOnlyPrintsATable) {
  const std::string& out = tune_->out;
  EXPECT_TRUE(has(out, "shape")) << out;
  EXPECT_TRUE(has(out, "kernels")) << out;
  EXPECT_TRUE(has(out, "compiled")) << out;
  EXPECT_TRUE(has(out, "cached")) << out;
  const Row r = parse_row(out, kShape);
  ASSERT_TRUE(r.found) << out;
  EXPECT_EQ(r.problem, "n768_k4096_nk_tok_ch_bf16");
  EXPECT_GT(r.kernels, 0);
  EXPECT_LE(r.kernels, 8) << "the filter should keep the suite small";
  EXPECT_EQ(r.compiled, r.kernels);
  EXPECT_EQ(r.cached, 0);
  // stderr is not a terminal here: progress is a line when the stage starts and one when it
  // ends, with the count (the kernels and the utility module) and the elapsed time.
  EXPECT_TRUE(has(tune_->err, fmt::format("compiling: {} to do\n", r.kernels + 1))) << tune_->err;
  EXPECT_TRUE(std::regex_search(tune_->err, std::regex(fmt::format("compiling: {0}/{0} done in [0-9.]+ s\n", r.kernels + 1))))
      << tune_->err;
  EXPECT_TRUE(has(out, "utility module i8g_sm90a_utility: compiled")) << out;
  EXPECT_EQ(r.failed, 0);
  EXPECT_EQ(r.spilling, 0);
  EXPECT_GT(r.max_regs, 0);
  EXPECT_TRUE(has(out, "sm_90a")) << out;
  EXPECT_TRUE(has(out, cache_)) << "the table should name the cache file\n" << out;
  EXPECT_TRUE(exists(cache_));
  EXPECT_FALSE(exists(shared_->default_cache())) << "--cache was given: the default cache must not be made";
}

TEST_F(CliPopulated, InspectListsEveryKernelWithResources) {
  const json list = list_json(cache_);
  ASSERT_FALSE(list.empty());
  Result r = run({"inspect", "--cache", cache_});
  ASSERT_TRUE(r.ok()) << r.describe();
  const std::string header = r.out.substr(0, r.out.find('\n'));
  EXPECT_TRUE(has(header, "regs")) << header;
  EXPECT_TRUE(has(header, "smem")) << header;
  EXPECT_TRUE(has(header, "spills")) << header;
  for (const auto& k : list) {
    const std::string name = k["name"];
    auto f = table_row(r.out, name);
    ASSERT_FALSE(f.empty()) << name << " missing from\n" << r.out;
    // name arch regs smem stack spills occ status
    ASSERT_GE(f.size(), 8u) << r.out;
    EXPECT_EQ(f[1], "sm_90a");
    EXPECT_EQ(f[2], std::to_string(k["registers"].get<int>()));
    EXPECT_EQ(f[3], std::to_string(k["smem_bytes"].get<int>()));
    EXPECT_EQ(f[5], "0") << "spills";
  }
  EXPECT_TRUE(has(r.out, std::to_string(list.size()) + " kernels")) << r.out;
  // `inspect list` is the same as plain `inspect`.
  Result l = run({"inspect", "list", "--cache", cache_});
  ASSERT_TRUE(l.ok()) << l.describe();
  EXPECT_EQ(l.out, r.out);
}

TEST_F(CliPopulated, ListJsonHasOneObjectPerKernel) {
  const json list = list_json(cache_, kFilter);
  const Row row = parse_row(tune_->out, kShape);
  ASSERT_EQ(int(list.size()), row.kernels);
  EXPECT_EQ(list_json(cache_).size(), list.size() + 1) << "the kernels and the utility module";
  std::vector<std::string> seen;
  for (const auto& k : list) {
    ASSERT_TRUE(k.is_object());
    const std::string name = k.value("name", "");
    EXPECT_TRUE(std::regex_search(name, std::regex(kFilter))) << name;
    EXPECT_TRUE(has(name, "n768_k4096")) << name;
    EXPECT_EQ(k.value("arch", ""), "sm_90a");
    EXPECT_GT(k.value("registers", 0), 0) << name;
    EXPECT_EQ(k.value("spill_bytes", -1), 0) << name;
    EXPECT_GE(k.value("smem_bytes", -1), 0) << name;
    EXPECT_GT(k.value("binary_bytes", 0), 0) << name;
    EXPECT_FALSE(k.value("stale", true)) << name;
    seen.push_back(name);
  }
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(std::unique(seen.begin(), seen.end()), seen.end()) << "a kernel listed twice";
}

TEST_F(CliPopulated, InspectFilterSelects) {
  const json all = list_json(cache_);
  const json some = list_json(cache_, "tm4_tn4");
  EXPECT_LT(some.size(), all.size());
  EXPECT_GE(some.size(), 1u);
  for (const auto& k : some) EXPECT_TRUE(has(k.value("name", ""), "tm4_tn4"));
  EXPECT_TRUE(list_json(cache_, "no_such_kernel_anywhere").empty());
}

TEST_F(CliPopulated, ShowPrintsSourcePtxReportAndSass) {
  const json list = list_json(cache_);
  ASSERT_FALSE(list.empty());
  const std::string name = list[0]["name"];
  Result r = run({"inspect", "show", name, "--cache", cache_});
  ASSERT_TRUE(r.ok()) << r.describe();
  EXPECT_TRUE(has(r.out, name));
  const std::string report = section(r.out, "report");
  const std::string source = section(r.out, "source");
  const std::string ptx = section(r.out, "PTX");
  const std::string sass = section(r.out, "SASS");
  EXPECT_FALSE(report.empty()) << r.out.substr(0, 3000);
  EXPECT_TRUE(has(source, "#include") || has(source, "template")) << source;
  EXPECT_TRUE(has(ptx, ".entry")) << ptx.substr(0, 2000);
  EXPECT_TRUE(has(sass, "IDP") || has(sass, "unavailable")) << sass.substr(0, 2000);
  // And as JSON.
  Result j = run({"inspect", "show", name, "--json", "--cache", cache_});
  ASSERT_TRUE(j.ok()) << j.describe();
  json doc = json::parse(j.out, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << j.out.substr(0, 2000);
  EXPECT_EQ(doc.value("schema", ""), "i8gemm/inspect-show");
  EXPECT_EQ(doc.value("version", 0), 1);
  EXPECT_EQ(doc.value("name", ""), name);
  EXPECT_TRUE(has(doc.value("ptx", ""), ".entry"));
  EXPECT_FALSE(doc.value("source", "").empty());
  EXPECT_TRUE(doc.contains("report"));
}

TEST_F(CliPopulated, AuditIsCleanOnAFreshCache) {
  Result r = run({"inspect", "audit", "--cache", cache_});
  EXPECT_TRUE(r.ok()) << r.describe();
  EXPECT_TRUE(has(r.out, "integrity ok")) << r.out;
  EXPECT_FALSE(has(r.out, "error")) << r.out;
  Result j = run({"inspect", "audit", "--json", "--cache", cache_});
  ASSERT_TRUE(j.ok()) << j.describe();
  json doc = json::parse(j.out, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << j.out;
  EXPECT_EQ(doc.value("schema", ""), "i8gemm/inspect-audit");
  EXPECT_EQ(doc.value("version", 0), 1);
  EXPECT_EQ(doc.value("integrity", ""), "ok");
  // Clean but for kernels whose SASS was never checked (no nvdisasm here), which are named.
  for (const auto& f : doc["findings"]) {
    EXPECT_EQ(f.value("severity", ""), "info") << j.out;
    EXPECT_TRUE(has(f.value("finding", ""), "not disassembled: nvdisasm not found")) << j.out;
  }
}

TEST_F(CliPopulated, SameTuneAgainIsAllCachedAndChangesNothing) {
  const json before = list_json(cache_);
  ASSERT_FALSE(before.empty());
  Result again = run({"tune", "--compile-only", "--arch", "sm_90a", "--shape", kShape, "--cache", cache_,
                      "-j", "2", "--filter", kFilter});
  ASSERT_TRUE(again.ok()) << again.describe();
  const Row r = parse_row(again.out, kShape);
  ASSERT_TRUE(r.found) << again.out;
  EXPECT_EQ(r.kernels + 1, int(before.size())) << "the kernels and the utility module";
  EXPECT_TRUE(has(again.out, "utility module i8g_sm90a_utility: cached")) << again.out;
  EXPECT_EQ(r.compiled, 0) << again.out;
  EXPECT_EQ(r.cached, r.kernels) << again.out;
  EXPECT_EQ(r.failed, 0);
  EXPECT_EQ(list_json(cache_), before);
}

TEST_F(CliPopulated, FailingTunesLoseNothing) {
  const std::string c = copy_of_shared();
  const json before = list_json(c);
  ASSERT_FALSE(before.empty());
  const std::vector<std::vector<std::string>> failing = {
      {"tune", "--compile-only", "--arch", "sm_90a", "--cache", c, "--shape", "0x4096"},
      {"tune", "--compile-only", "--arch", "sm_90a", "--cache", c, "--shape", kShape, "--shape", "4096x200000"},
      {"tune", "--compile-only", "--arch", "sm_61", "--cache", c, "--shape", kShape},
      {"tune", "--compile-only", "--arch", "sm_90a", "--cache", c, "--shape", kShape, "--filter", "("},
      {"tune", "--compile-only", "--arch", "sm_90a", "--cache", c, "--shape", kShape, "--bias", "--out", "i32"},
  };
  for (const auto& args : failing) {
    Result r = run(args);
    EXPECT_TRUE(r.failed_cleanly()) << r.describe();
    EXPECT_EQ(list_json(c), before) << "after " << r.command;
  }
  Result audit = run({"inspect", "audit", "--cache", c});
  EXPECT_TRUE(audit.ok()) << audit.describe();
}

TEST_F(CliPopulated, AuditNamesACorruptedBinary) {
  const std::string c = copy_of_shared();
  const json before = list_json(c);
  const std::string bad = corrupt_one_binary(c);
  Result r = run({"inspect", "audit", "--cache", c});
  EXPECT_TRUE(r.failed_cleanly()) << r.describe();
  EXPECT_TRUE(has(r.out + r.err, bad)) << "audit should name " << bad << "\n" << r.describe();
  // Only the damaged one is reported as an error.
  for (const auto& k : before) {
    const std::string name = k["name"];
    if (name == bad) continue;
    std::istringstream in(r.out + r.err);
    for (std::string line; std::getline(in, line);)
      EXPECT_FALSE(has(line, name) && has(line, "error")) << line;
  }
  Result j = run({"inspect", "audit", "--json", "--cache", c});
  EXPECT_TRUE(j.failed_cleanly()) << j.describe();
  json doc = json::parse(j.out, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << j.out;
  bool named = false;
  for (const auto& f : doc["findings"]) named |= f.value("name", "") == bad && f.value("severity", "") == "error";
  EXPECT_TRUE(named) << j.out;
  // Listing still works and still shows every entry.
  EXPECT_EQ(list_json(c), before);
}

TEST_F(CliPopulated, ShowOfACorruptedBinaryDoesNotCrash) {
  const std::string c = copy_of_shared();
  const std::string bad = corrupt_one_binary(c);
  Result r = run({"inspect", "show", bad, "--cache", c});
  EXPECT_FALSE(r.signaled) << r.describe();
  EXPECT_TRUE(r.exited) << r.describe();
  if (r.exited && r.exit_code != 0) {
    EXPECT_FALSE(r.err_trimmed().empty()) << r.describe();
  }
}

// A stored binary that fails its hash is never used; tuning the same kernel again rebuilds it
// (the cache repairs such an entry on put) instead of giving up.
TEST_F(CliPopulated, TuneRepairsACorruptedBinary) {
  const std::string c = copy_of_shared();
  const json before = list_json(c);
  const std::string bad = corrupt_one_binary(c);
  Result r = run({"tune", "--compile-only", "--arch", "sm_90a", "--shape", kShape, "--cache", c, "-j", "2",
                  "--filter", "^" + bad + "$"});
  EXPECT_TRUE(r.ok()) << r.describe();
  const Row row = parse_row(r.out, kShape);
  EXPECT_EQ(row.kernels, 1) << r.out;
  EXPECT_EQ(row.failed, 0) << r.out;
  Result audit = run({"inspect", "audit", "--cache", c});
  EXPECT_TRUE(audit.ok()) << "the damaged entry should have been rebuilt\n" << audit.describe();
  EXPECT_EQ(list_json(c).size(), before.size());
}

// ---------------------------------------------------------------------------------------------
// Tests with their own cache.

class Cli : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(exists(cli_path())) << cli_path() << " is not built"; }
  Result run(const std::vector<std::string>& args, const std::string& cache_env = "") {
    return run_cli(args, {cache_env.empty() ? dir_.default_cache() : cache_env}, dir_.path());
  }
  TempDir dir_;
};

TEST_F(Cli, ShapesFileWithFilterCoversEveryShape) {
  const std::string c = dir_.file("tp4.sqlite");
  Result r = run({"tune", "--compile-only", "--arch", "sm_90a", "--shapes", source_path("examples/tp4.shapes"),
                  "--cache", c, "-j", "2", "--filter", "bm16_bn128_bk32_tm4_tn4"});
  ASSERT_TRUE(r.ok()) << r.describe();
  const std::vector<std::pair<std::string, std::string>> want = {
      {"qkv_proj", "n2560_k4096"}, {"o_proj", "n4096_k2048"}, {"shared_gate_up", "n768_k4096"},
      {"shared_down", "n4096_k384"}};
  int total = 0;
  for (const auto& [label, key] : want) {
    const Row row = parse_row(r.out, label);
    ASSERT_TRUE(row.found) << label << " missing from\n" << r.out;
    EXPECT_TRUE(has(row.problem, key)) << row.problem;
    EXPECT_EQ(row.failed, 0);
    EXPECT_EQ(row.compiled + row.cached, row.kernels);
    EXPECT_LE(row.kernels, 2) << "the filter should keep this small";
    total += row.kernels;
  }
  EXPECT_GT(total, 0);
  Result l = run({"inspect", "list", "--json", "--cache", c});
  ASSERT_TRUE(l.ok()) << l.describe();
  json list = json::parse(l.out, nullptr, false).value("kernels", json());
  ASSERT_TRUE(list.is_array()) << l.out;
  EXPECT_EQ(int(list.size()), total + 1) << "the kernels and the utility module";
  for (const auto& k : list)
    if (k.value("family", "") != "utility") {
      EXPECT_TRUE(has(k.value("name", ""), "bm16_bn128_bk32_tm4_tn4"));
    }
}

TEST_F(Cli, DefaultCacheComesFromTheEnvironment) {
  const std::string where = dir_.file("deep/er/cache.sqlite");  // parent directories are made
  Result r = run({"tune", "--compile-only", "--arch", "sm_90a", "--shape", kShape, "-j", "2", "--filter",
                  "bm16_bn128_bk32_tm4_tn4"},
                 where);
  ASSERT_TRUE(r.ok()) << r.describe();
  EXPECT_TRUE(exists(where)) << r.describe();
  EXPECT_TRUE(has(r.out, where)) << r.out;
  EXPECT_FALSE(exists(dir_.file("xdg"))) << "I8GEMM_CACHE wins over XDG_CACHE_HOME";
  // inspect without --cache reads the same file.
  Result l = run({"inspect", "list", "--json"}, where);
  ASSERT_TRUE(l.ok()) << l.describe();
  json list = json::parse(l.out, nullptr, false).value("kernels", json());
  ASSERT_TRUE(list.is_array()) << l.out;
  EXPECT_EQ(list.size(), 2u) << "the kernel and the utility module\n" << l.out;
  // --cache overrides the environment.
  Result other = run({"inspect", "list", "--json", "--cache", where}, dir_.file("elsewhere.sqlite"));
  ASSERT_TRUE(other.ok()) << other.describe();
  EXPECT_EQ(json::parse(other.out, nullptr, false).value("kernels", json()), list);
  EXPECT_FALSE(exists(dir_.file("elsewhere.sqlite")));
}

TEST_F(Cli, VersionAndHelp) {
  Result v = run({"--version"});
  EXPECT_TRUE(v.ok()) << v.describe();
  // The header's version, the commit and generator hash, and one line per compiler (its
  // version, or why it is unavailable).
  EXPECT_TRUE(has(v.out, std::string("i8gemm ") + I8GEMM_VERSION_STRING + " (commit ")) << v.describe();
  EXPECT_TRUE(has(v.out, std::string("generator ") + std::string(generator_hash()).substr(0, 16))) << v.describe();
  EXPECT_TRUE(has(v.out, "\nnvrtc ") || has(v.out, "\nNVRTC: unavailable")) << v.describe();
  EXPECT_TRUE(has(v.out, "\nhiprtc ") || has(v.out, "\nhipRTC: unavailable")) << v.describe();
  Result h = run({"--help"});
  EXPECT_TRUE(h.ok()) << h.describe();
  EXPECT_TRUE(has(h.out, "tune")) << h.out;
  EXPECT_TRUE(has(h.out, "inspect")) << h.out;
  for (const std::string sub : {"tune", "inspect"}) {
    Result s = run({sub, "--help"});
    EXPECT_TRUE(s.ok()) << s.describe();
    EXPECT_FALSE(s.out.empty());
  }
  Result t = run({"tune", "--help"});
  EXPECT_TRUE(has(t.out, "--compile-only")) << t.out;
  EXPECT_TRUE(has(t.out, "--shapes")) << t.out;
  EXPECT_FALSE(exists(dir_.default_cache())) << "--help must not create a cache";
}

}  // namespace
}  // namespace i8g::clitest

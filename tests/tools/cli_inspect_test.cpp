// `inspect source` (a kernel's source from its name alone, inlined on request), and how
// `inspect` and `cache gc` treat compile options, schema-1 files, source overrides, the utility
// module and rows with a malformed report.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_test_support.hpp"
#include "generator/generator.hpp"
#include "runtime/serve/jit.hpp"
#include "tests/cache/cache_test_util.hpp"
#include "tests/cache/schema_v1.hpp"

namespace i8g::clitest {
namespace {

using i8g::cache::Cache;
using nlohmann::json;

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

class CliInspect : public ::testing::Test {
 protected:
  Result run(const std::vector<std::string>& args, std::vector<std::string> env = {}) {
    RunOptions o(dir_.default_cache());
    o.extra_env = std::move(env);
    return run_cli(args, o, dir_.path());
  }
  // Two sm_80 simt_dp4a kernels and the utility module, compiled by this build (current, not stale).
  std::string tuned(const std::string& name, std::vector<std::string> env = {}) {
    const std::string c = dir_.file(name);
    Result r = run({"tune", "--compile-only", "--arch", "sm_80", "--shape", "256x512", "--filter",
                    "simt_dp4a.*bm16_bn64_", "-j", "2", "--cache", c},
                   std::move(env));
    EXPECT_TRUE(r.ok()) << r.describe();
    last_err_ = r.err;
    return c;
  }
  static std::string dp4a_name() {
    GemmProblem p;
    p.n = 256;
    p.k = 512;
    const Target t = Target::from_arch("sm_80");
    return KernelSpec{p, heuristic_default(p, t, 16, Family::simt_dp4a), t.arch}.name();
  }
  static std::string first_name(const std::string& cache_path) {
    return Cache(cache_path, Cache::Mode::read_only).list_kernels().at(0).key.name;
  }
  TempDir dir_;
  std::string last_err_;
};

TEST_F(CliInspect, SourceFromANameAloneNeedsNoCacheAndInlinesOnRequest) {
  const std::string name = dp4a_name();
  Result plain = run({"inspect", "source", name});
  ASSERT_TRUE(plain.ok()) << plain.describe();
  EXPECT_EQ(plain.out.rfind("// i8gemm kernel " + name + "\n", 0), 0u) << plain.out;
  EXPECT_NE(plain.out.find("// options:  --gpu-architecture=sm_80"), std::string::npos) << plain.out;
  EXPECT_NE(plain.out.find("#include \"simt_dp4a.cuh\""), std::string::npos) << plain.out;
  EXPECT_NE(plain.out.find(emit(KernelSpec::parse_name(name)).code), std::string::npos);

  Result inlined = run({"inspect", "source", name, "--inline", "-o", dir_.file("k.cu")});
  ASSERT_TRUE(inlined.ok()) << inlined.describe();
  EXPECT_TRUE(inlined.out.empty()) << inlined.out;
  const std::string text = read_bytes(dir_.file("k.cu"));
  EXPECT_EQ(text.find("#include \""), std::string::npos);
  EXPECT_NE(text.find("// ==== begin \"simt_dp4a.cuh\""), std::string::npos);
  EXPECT_NE(text.find("templates: inlined"), std::string::npos);

  Result utility = run({"inspect", "source", "i8g_sm90a_utility", "--inline"});
  ASSERT_TRUE(utility.ok()) << utility.describe();
  EXPECT_NE(utility.out.find("--gpu-architecture=sm_90a"), std::string::npos);
  EXPECT_NE(utility.out.find("i8g_colsum_nk"), std::string::npos);

  Result bad = run({"inspect", "source", "i8g_not_a_kernel"});
  EXPECT_TRUE(bad.failed_cleanly()) << bad.describe();
  EXPECT_NE(bad.err.find("--cached"), std::string::npos) << bad.describe();
  EXPECT_FALSE(exists(dir_.default_cache())) << "no cache is made or needed";
}

TEST_F(CliInspect, SourceCachedIsWhatTheEntryWasCompiledFromWithItsOptions) {
  const std::string c = tuned("c.sqlite");
  const std::string name = first_name(c);
  Result r = run({"inspect", "source", name, "--cached", "--cache", c});
  ASSERT_TRUE(r.ok()) << r.describe();
  EXPECT_NE(r.out.find("// origin:   cache entry id "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(generated)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("// compiler: nvrtc "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("-Xptxas -warn-spills"), std::string::npos) << r.out;
  Result missing = run({"inspect", "source", name, "--cached", "--cache", dir_.file("other.sqlite")});
  EXPECT_TRUE(missing.failed_cleanly()) << missing.describe();
  // inspect's own --cache, before the subcommand, is the same option (it was once ignored).
  Result before = run({"inspect", "--cache", c, "source", name, "--cached"});
  ASSERT_TRUE(before.ok()) << before.describe();
  EXPECT_EQ(before.out, r.out);
  Result json_flag = run({"inspect", "--json", "--cache", c, "source", name, "--cached"});
  EXPECT_TRUE(json_flag.failed_cleanly()) << json_flag.describe();
  EXPECT_NE(json_flag.err.find("do not apply"), std::string::npos) << json_flag.describe();
}

TEST_F(CliInspect, OtherCompileOptionsAreStaleInListAuditAndGc) {
  const std::string c = tuned("c.sqlite");
  exec_sql(c, "UPDATE kernels SET options_hash = '" + std::string(64, 'f') + "' WHERE id = (SELECT min(id) FROM kernels)");
  Result list = run({"inspect", "list", "--json", "--cache", c});
  ASSERT_TRUE(list.ok()) << list.describe();
  int stale = 0;
  const json listed = json::parse(list.out).at("kernels");
  for (const auto& k : listed)
    if (k.at("stale").get<bool>()) {
      ++stale;
      EXPECT_EQ(k.at("stale_reason"), "made with other compile options");
    }
  EXPECT_EQ(stale, 1);
  Result audit = run({"inspect", "audit", "--cache", c});
  EXPECT_TRUE(audit.ok()) << audit.describe();
  EXPECT_NE(audit.out.find("stale: made with other compile options"), std::string::npos) << audit.out;
  Result dry = run({"cache", "gc", "--dry-run", "--cache", c});
  EXPECT_NE(dry.out.find("would remove 1 stale entries (1 kernels"), std::string::npos) << dry.describe();
  Result gc = run({"cache", "gc", "--cache", c});
  EXPECT_NE(gc.out.find("removed 1 stale entries"), std::string::npos) << gc.describe();
  EXPECT_EQ(Cache(c, Cache::Mode::read_only).list_kernels().size(), 2u);
}

// A cache is untrusted input: a name or blob carrying terminal escapes (set the title, clear the
// screen) is printed as \xNN text by list, show and audit, never emitted raw.
TEST_F(CliInspect, TerminalEscapesFromACachePrintAsText) {
  const std::string c = dir_.file("escapes.sqlite");
  const std::string name = "i8g_evil\x1b]0;owned\x07\x1b[2J\xc2\x9b" "31m";
  {
    cache::StoredKernel k = cache::testing::make_kernel(name);
    k.source = "// \x1b[31mred\x1b[0m\n";
    Cache(c, Cache::Mode::read_write).put_kernel(k);
  }
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"inspect", "list", "--cache", c}, {"inspect", "show", name, "--cache", c}, {"inspect", "audit", "--cache", c}}) {
    Result r = run(args);
    EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << args[1] << " printed a raw ESC";
    EXPECT_EQ(r.out.find('\x07'), std::string::npos) << args[1] << " printed a raw BEL";
    EXPECT_EQ(r.out.find("\xc2\x9b"), std::string::npos) << args[1] << " printed a raw C1 CSI";
    EXPECT_NE(r.out.find("i8g_evil\\x1B]0;owned\\x07"), std::string::npos) << args[1] << ":\n" << r.out;
  }
  Result json_list = run({"inspect", "list", "--json", "--cache", c});
  ASSERT_TRUE(json_list.ok()) << json_list.describe();
  EXPECT_EQ(json::parse(json_list.out).at("kernels").at(0).at("name"), name) << "JSON keeps the name exact (escaped by JSON)";
}

TEST_F(CliInspect, ASchemaOneCacheIsListedAsStaleUntouchedThenMigratedByAWrite) {
  std::vector<cache::StoredKernel> rows = Cache(tuned("new.sqlite"), Cache::Mode::read_only).list_kernels({"", true});
  ASSERT_EQ(rows.size(), 3u);
  // A schema-1 cache of two GEMM kernels (older builds stored no utility module at compile-only).
  rows.erase(std::remove_if(rows.begin(), rows.end(), [](const auto& k) { return k.family == "utility"; }),
             rows.end());
  ASSERT_EQ(rows.size(), 2u);
  const std::string c = dir_.file("v1.sqlite");
  cache::testing::write_v1_cache(c, rows);
  const std::string before = read_bytes(c);
  Result list = run({"inspect", "list", "--json", "--cache", c});
  ASSERT_TRUE(list.ok()) << list.describe();
  const json listed = json::parse(list.out).at("kernels");
  for (const auto& k : listed)
    EXPECT_EQ(k.at("stale_reason"), "made before compile options were part of the key (schema 1)") << k.dump();
  Result audit = run({"inspect", "audit", "--cache", c});
  EXPECT_TRUE(audit.ok()) << audit.describe();
  Result dry = run({"cache", "gc", "--dry-run", "--cache", c});
  EXPECT_NE(dry.out.find("would remove 2 stale entries (2 kernels"), std::string::npos) << dry.describe();
  EXPECT_EQ(read_bytes(c), before) << "reading a schema-1 file changes nothing";
  EXPECT_EQ(cache::testing::user_version(c), 1);
  // A tune into it migrates it, misses the old rows and compiles afresh beside them.
  Result tune = run({"tune", "--compile-only", "--arch", "sm_80", "--shape", "256x512", "--filter",
                     "simt_dp4a.*bm16_bn64_", "-j", "2", "--cache", c});
  ASSERT_TRUE(tune.ok()) << tune.describe();
  EXPECT_EQ(cache::testing::user_version(c), 2);
  EXPECT_EQ(Cache(c, Cache::Mode::read_only).list_kernels().size(), 5u) << "two old, two new, the utility module";
  Result gc = run({"cache", "gc", "--cache", c});
  EXPECT_NE(gc.out.find("removed 2 stale entries (2 kernels"), std::string::npos) << gc.describe();
}

TEST_F(CliInspect, AuditNamesEveryRowWithAMalformedReportAndGoesOn) {
  const std::string c = tuned("c.sqlite");
  exec_sql(c, "UPDATE kernels SET report_json = '{\"registers\": \"many\"}'");
  Result audit = run({"inspect", "audit", "--cache", c});
  EXPECT_TRUE(audit.failed_cleanly()) << audit.describe();
  for (const auto& k : Cache(c, Cache::Mode::read_only).list_kernels())
    EXPECT_NE(audit.out.find("error    " + k.key.name + ": id " + std::to_string(k.id) + ": malformed resource report"),
              std::string::npos)
        << audit.out;
  EXPECT_NE(audit.out.find("audited 3 kernels"), std::string::npos) << audit.out;
  Result show = run({"inspect", "show", first_name(c), "--cache", c});
  EXPECT_TRUE(show.ok()) << show.describe();
  EXPECT_NE(show.out.find("malformed resource report"), std::string::npos) << show.out;
}

TEST_F(CliInspect, AuditNamesARowWithMalformedOptionsAndGoesOn) {
  const std::string c = tuned("c.sqlite");
  const auto ks = Cache(c, Cache::Mode::read_only).list_kernels();
  ASSERT_EQ(ks.size(), 3u);
  exec_sql(c, "UPDATE kernels SET options = '[1, 2]' WHERE id = " + std::to_string(ks[0].id));
  Result audit = run({"inspect", "audit", "--cache", c});
  EXPECT_TRUE(audit.failed_cleanly()) << audit.describe();
  EXPECT_NE(audit.out.find("error    " + ks[0].key.name + ": kernel id " + std::to_string(ks[0].id) + ": bad options"),
            std::string::npos)
      << audit.out;
  EXPECT_NE(audit.out.find("audited 3 kernels"), std::string::npos) << audit.out;
  // Loading such a row still refuses it (the JIT then compiles the kernel afresh).
  Cache cache(c, Cache::Mode::read_only);
  EXPECT_THROW(cache.get_kernel(ks[0].id), Error);
}

TEST_F(CliInspect, TheUtilityModuleShowsAndAuditsCleanly) {
  const std::string c = dir_.file("c.sqlite");
  {
    Cache cache(c, Cache::Mode::read_write);
    const Target t = Target::from_arch("sm_80");
    fetch_or_compile(&cache, *make_compiler(t), emit_utility(t.arch), std::nullopt, t);
  }
  Result show = run({"inspect", "show", "i8g_sm80_utility", "--cache", c});
  ASSERT_TRUE(show.ok()) << show.describe();
  EXPECT_NE(show.out.find("family    utility"), std::string::npos) << show.out;
  EXPECT_NE(show.out.find("utility module: the report is that of its entry kernel i8g_colsum_nk"), std::string::npos);
  Result audit = run({"inspect", "audit", "--cache", c});
  EXPECT_TRUE(audit.ok()) << audit.describe();
  EXPECT_NE(audit.out.find("audited 1 kernels"), std::string::npos) << audit.out;
  EXPECT_EQ(audit.out.find("warning"), std::string::npos) << audit.out;
}

TEST_F(CliInspect, ASourceOverrideIsAnnouncedMarkedAndKeptApartFromTheGeneratedKernel) {
  const std::string c = tuned("c.sqlite");
  const std::string name = first_name(c);
  ASSERT_EQ(mkdir(dir_.file("src").c_str(), 0700), 0);
  Result dump = run({"inspect", "source", name, "--inline", "-o", dir_.file("src/" + name + ".cu")});
  ASSERT_TRUE(dump.ok()) << dump.describe();
  tuned("c.sqlite", {"I8GEMM_SOURCE_OVERRIDE_DIR=" + dir_.file("src")});
  EXPECT_EQ(count(last_err_, "warning: " + name + " is compiled from the source override"), 1u) << last_err_;
  EXPECT_EQ(count(last_err_, "source override"), 1u) << "only the overridden kernel is announced\n" << last_err_;
  Result list = run({"inspect", "list", "--cache", c});
  ASSERT_TRUE(list.ok()) << list.describe();
  EXPECT_EQ(count(list.out, " override\n"), 1u) << list.out;
  EXPECT_NE(list.out.find("1 entries are source overrides"), std::string::npos) << list.out;
  Result show = run({"inspect", "show", name, "--cache", c});
  ASSERT_TRUE(show.ok()) << show.describe();
  EXPECT_NE(show.out.find("status    ok\n"), std::string::npos) << "show prefers the generated entry\n" << show.out;
  EXPECT_NE(show.out.find("(override: compiled from a source override"), std::string::npos) << show.out;
  Result audit = run({"inspect", "audit", "--cache", c});
  EXPECT_TRUE(audit.ok()) << audit.describe();
  EXPECT_NE(audit.out.find("info     " + name + ": source override"), std::string::npos) << audit.out;
  // Without the override, a tune finds the generated entries: nothing is compiled.
  tuned("c.sqlite");
  EXPECT_EQ(last_err_.find("source override"), std::string::npos) << last_err_;
  EXPECT_EQ(Cache(c, Cache::Mode::read_only).list_kernels().size(), 4u) << "two generated, one override, the utility";
}

}  // namespace
}  // namespace i8g::clitest

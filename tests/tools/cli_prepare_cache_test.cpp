// What a serving process finds in a cache the CLI filled, and what the CLI shows of one prepare
// filled: `tune --compile-only` stores the utility module too (strict prepare finds it, so a
// pre-tuned cache compiles nothing); an entry prepare stored without SASS is disassembled on
// demand by `inspect show`, and `inspect audit` says "not disassembled" rather than nothing.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <string>
#include <vector>

#include "cli_test_support.hpp"
#include "cache/cache.hpp"
#include "generator/generator.hpp"
#include "runtime/report/report.hpp"
#include "runtime/serve/jit.hpp"

namespace i8g::clitest {
namespace {

using cache::Cache;

class CliPrepareCache : public ::testing::Test {
 protected:
  Result run(const std::vector<std::string>& args, std::vector<std::string> env = {}) {
    RunOptions o(dir_.default_cache());
    o.extra_env = std::move(env);
    return run_cli(args, o, dir_.path());
  }
  // An nvdisasm stand-in that prints one SASS line: what `inspect show` prints is what it ran.
  std::string fake_nvdisasm() {
    const std::string path = dir_.file("nvdisasm");
    testsupport::write_bytes(path, "#!/bin/sh\necho '        /*0000*/                   IMMA.16816.S8.S8 R4, R8, R12, "
                                   "R4 ;'\n");
    chmod(path.c_str(), 0755);
    return path;
  }
  TempDir dir_;
};

TEST_F(CliPrepareCache, CompileOnlyStoresTheUtilityModuleStrictPrepareLooksUp) {
  const std::string c = dir_.file("c.sqlite");
  const std::vector<std::string> tune = {"tune", "--compile-only", "--arch", "sm_90a", "--shape", "256x512",
                                         "--filter", "bm16_bn128_bk32_tm4_tn4_", "--cache", c};
  Result first = run(tune);
  ASSERT_TRUE(first.ok()) << first.describe();
  EXPECT_NE(first.out.find("utility module i8g_sm90a_utility: compiled"), std::string::npos) << first.out;
  const Target t = Target::from_arch("sm_90a");
  {
    Cache cache(c, Cache::Mode::read_only);
    const std::optional<cache::StoredKernel> hit = fetch_cached(&cache, *make_compiler(t), emit_utility(t.arch), t);
    ASSERT_TRUE(hit) << "strict prepare would not find the utility module";
    EXPECT_EQ(hit->family, "utility");
    EXPECT_FALSE(hit->binary.empty());
  }
  Result again = run(tune);
  ASSERT_TRUE(again.ok()) << again.describe();
  EXPECT_NE(again.out.find("utility module i8g_sm90a_utility: cached"), std::string::npos) << again.out;
}

TEST_F(CliPrepareCache, AnEntryPrepareStoredIsDisassembledOnDemandAndAuditedAsNotDisassembled) {
  const std::string c = dir_.file("c.sqlite");
  const Target t = Target::from_arch("sm_80");
  {
    Cache cache(c, Cache::Mode::read_write);
    fetch_or_compile(&cache, *make_compiler(t), emit_utility(t.arch), std::nullopt, t);  // prepare's path
  }
  const std::string name = emit_utility(t.arch).name;
  Result show = run({"inspect", "show", name, "--cache", c}, {"I8GEMM_NVDISASM=" + fake_nvdisasm()});
  ASSERT_TRUE(show.ok()) << show.describe();
  EXPECT_NE(show.out.find("== SASS ==\n        /*0000*/                   IMMA.16816.S8.S8"), std::string::npos)
      << show.out;
  EXPECT_NE(show.out.find("SASS disassembled by this inspect"), std::string::npos) << show.out;
  EXPECT_NE(show.out.find("IMMA=1"), std::string::npos) << "the report's instruction mix\n" << show.out;
  // Without a disassembler, show says why there is none.
  Result bare = run({"inspect", "show", name, "--cache", c}, {"I8GEMM_NVDISASM=" + dir_.file("no-such-tool")});
  ASSERT_TRUE(bare.ok()) << bare.describe();
  EXPECT_NE(bare.out.find("== SASS ==\nunavailable: nvdisasm not found"), std::string::npos) << bare.out;
  // show wrote nothing back: the entry is as prepare stored it.
  EXPECT_TRUE(Cache(c, Cache::Mode::read_only).list_kernels({"", true}).at(0).isa.empty());

  Result audit = run({"inspect", "audit", "--cache", c});
  EXPECT_TRUE(audit.ok()) << audit.describe();
  EXPECT_NE(audit.out.find("info     " + name + ": " + kSassSkipped), std::string::npos) << audit.out;
}

}  // namespace
}  // namespace i8g::clitest

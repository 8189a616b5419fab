// Without NVRTC (I8GEMM_NVRTC naming a file that is not there), the CLI still starts: what
// reads a cache works, what must compile fails with a message that says what was tried, and
// nothing crashes. Neither the library nor the CLI links NVRTC or cuBLASLt (readelf -d).
#include <gtest/gtest.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <memory>

#include "runtime/compile/nvrtc_lib.hpp"
#include "tests/tools/cli_test_support.hpp"

namespace i8g::clitest {
namespace {

constexpr const char* kMissing = "I8GEMM_NVRTC=/nonexistent/libnvrtc.so.13";
constexpr const char* kShape = "768x4096";
constexpr const char* kFilter = "bm16_bn128_bk32_tm2_tn4_";

bool has(const std::string& hay, const std::string& needle) { return hay.find(needle) != std::string::npos; }

class CliWithoutNvrtc : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(exists(cli_path())) << cli_path() << " is not built";
    Result tune = run({"tune", "--compile-only", "--arch", "sm_90a", "--shape", kShape, "--cache", cache_, "--filter",
                       kFilter}, {});
    ASSERT_TRUE(tune.ok()) << tune.describe();
  }
  Result run(const std::vector<std::string>& args, const std::vector<std::string>& env) {
    RunOptions o(dir_.default_cache());
    o.extra_env = env;
    return run_cli(args, o, dir_.path());
  }
  TempDir dir_;
  const std::string cache_ = dir_.file("c.sqlite");
};

TEST_F(CliWithoutNvrtc, InspectReadsTheCache) {
  Result list = run({"inspect", "list", "--json", "--cache", cache_}, {kMissing});
  ASSERT_TRUE(list.ok()) << list.describe();
  const nlohmann::json j = nlohmann::json::parse(list.out, nullptr, false);
  ASSERT_TRUE(j.is_object() && j["kernels"].is_array() && !j["kernels"].empty()) << list.describe();
  const std::string name = j["kernels"][0].value("name", "");
  EXPECT_TRUE(has(name, kFilter)) << list.describe();
  Result show = run({"inspect", "show", "--cache", cache_, name}, {kMissing});
  EXPECT_TRUE(show.ok()) << show.describe();
  EXPECT_TRUE(has(show.out, name)) << show.describe();
}

TEST_F(CliWithoutNvrtc, CompilingFailsCleanlyNamingWhatWasTried) {
  Result r = run({"tune", "--compile-only", "--arch", "sm_90a", "--shape", "1024x1024", "--cache", cache_, "--filter",
                  kFilter}, {kMissing});
  EXPECT_TRUE(r.failed_cleanly()) << r.describe();
  EXPECT_TRUE(has(r.err, "NVRTC could not be loaded from I8GEMM_NVRTC")) << r.describe();
  EXPECT_TRUE(has(r.err, "/nonexistent/libnvrtc.so.13")) << r.describe();
}

TEST_F(CliWithoutNvrtc, VersionSaysNvrtcIsUnavailableAndWhy) {
  Result r = run({"--version"}, {kMissing});
  EXPECT_TRUE(r.ok()) << r.describe();
  EXPECT_TRUE(has(r.out, "NVRTC: unavailable")) << r.describe();
  EXPECT_TRUE(has(r.out, "/nonexistent/libnvrtc.so.13")) << r.describe();
}

TEST_F(CliWithoutNvrtc, VersionNamesTheNvrtcItLoaded) {
  std::string why;
  const auto found = load_nvrtc(library_search(""), why);
  ASSERT_NE(found, nullptr) << why;
  Result r = run({"--version"}, {});
  EXPECT_TRUE(r.ok()) << r.describe();
  EXPECT_TRUE(has(r.out, " (" + found->path + ")\n")) << found->path << "\n" << r.describe();
}

TEST_F(CliWithoutNvrtc, CacheGcRefusesRatherThanGuessWhatIsStale) {
  Result r = run({"cache", "gc", "--cache", cache_}, {kMissing});
  EXPECT_TRUE(r.failed_cleanly()) << r.describe();
  EXPECT_TRUE(has(r.err, "nothing removed")) << r.describe();
  Result list = run({"inspect", "list", "--cache", cache_}, {});
  EXPECT_TRUE(has(list.out, kFilter)) << "gc removed entries:\n" << list.describe();
}

// The shared objects' DT_NEEDED entries, from `readelf -d`; empty when readelf is absent.
std::vector<std::string> needed(const std::string& file) {
  std::vector<std::string> out;
  std::unique_ptr<FILE, int (*)(FILE*)> p(popen(("readelf -d '" + file + "' 2>/dev/null").c_str(), "r"), pclose);
  if (!p) return out;
  char line[1024];
  while (fgets(line, sizeof line, p.get())) {
    const std::string l = line;
    const size_t open = l.find("(NEEDED)") == std::string::npos ? std::string::npos : l.find('[');
    if (open != std::string::npos) out.push_back(l.substr(open + 1, l.find(']', open) - open - 1));
  }
  return out;
}

TEST(Linkage, NeitherTheLibraryNorTheCliNeedsNvrtcCublasLtOrTheDriver) {
  if (std::system("readelf --version >/dev/null 2>&1") != 0) GTEST_SKIP() << "readelf is not installed";
  for (const std::string& file : {std::string(I8G_TEST_LIBI8GEMM), cli_path()}) {
    const std::vector<std::string> libs = needed(file);
    EXPECT_FALSE(libs.empty()) << file << ": no DT_NEEDED read (every program needs libc)";
    for (const std::string& lib : libs)
      for (const char* banned : {"libnvrtc", "libcublas", "libcuda."})
        EXPECT_EQ(lib.find(banned), std::string::npos) << file << " needs " << lib << ": it must be dlopen'ed";
  }
}

}  // namespace
}  // namespace i8g::clitest

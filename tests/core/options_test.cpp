// Options: every environment variable read once, in one place; tests replace the snapshot.
#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "core/options.hpp"

namespace i8g {
namespace {

// Sets (or unsets) environment variables for one scope, restoring what was there.
class Env {
 public:
  ~Env() {
    for (auto it = saved_.rbegin(); it != saved_.rend(); ++it)
      it->second ? setenv(it->first.c_str(), it->second->c_str(), 1) : unsetenv(it->first.c_str());
  }
  void set(const std::string& name, const char* value) {
    const char* old = std::getenv(name.c_str());
    saved_.emplace_back(name, old ? std::optional<std::string>(old) : std::nullopt);
    value ? setenv(name.c_str(), value, 1) : unsetenv(name.c_str());
  }

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

TEST(Options, FromEnvironmentReadsEveryVariable) {
  Env env;
  env.set("I8GEMM_FAMILY", "simt_dp4a");
  env.set("I8GEMM_SPLIT_K", "3");
  env.set("I8GEMM_SOURCE_OVERRIDE_DIR", "/src");
  env.set("I8GEMM_NVDISASM", "/bin/nvdisasm");
  env.set("I8GEMM_HIPRTC_WORKER", "/bin/worker");
  env.set("I8GEMM_CACHE", "/c.sqlite");
  env.set("XDG_CACHE_HOME", "/xdg");
  env.set("HOME", "/home/u");
  env.set("PATH", "/a:/b");
  env.set("TMPDIR", "/scratch");
  env.set("I8GEMM_NVRTC", "/lib/libnvrtc.so.12");
  env.set("I8GEMM_CUBLASLT", "/lib/libcublasLt.so.12");
  env.set("PYTHONPATH", "/p1:/p2");
  env.set("VIRTUAL_ENV", "/venv");
  env.set("CONDA_PREFIX", "/conda");
  env.set("CUDA_HOME", "/cuda12");
  env.set("CUDA_PATH", "/cuda13");
  const Options o = Options::from_environment();
  EXPECT_EQ(o.family, "simt_dp4a");
  EXPECT_EQ(o.split_k, 3);
  EXPECT_EQ(o.source_override_dir, "/src");
  EXPECT_EQ(o.nvdisasm, "/bin/nvdisasm");
  EXPECT_EQ(o.hiprtc_worker, "/bin/worker");
  EXPECT_EQ(o.cache, "/c.sqlite");
  EXPECT_EQ(o.xdg_cache_home, "/xdg");
  EXPECT_EQ(o.home, "/home/u");
  EXPECT_EQ(o.path, "/a:/b");
  EXPECT_EQ(o.tmpdir, "/scratch");
  EXPECT_EQ(o.nvrtc, "/lib/libnvrtc.so.12");
  EXPECT_EQ(o.cublaslt, "/lib/libcublasLt.so.12");
  EXPECT_EQ(o.pythonpath, "/p1:/p2");
  EXPECT_EQ(o.virtual_env, "/venv");
  EXPECT_EQ(o.conda_prefix, "/conda");
  EXPECT_EQ(o.cuda_home, "/cuda12");
  EXPECT_EQ(o.cuda_path, "/cuda13");
}

TEST(Options, UnsetEmptyAndNonNumericSplitKReadAsUnset) {
  Env env;
  env.set("I8GEMM_FAMILY", nullptr);
  env.set("I8GEMM_SPLIT_K", "many");
  env.set("I8GEMM_CACHE", "");
  const Options o = Options::from_environment();
  EXPECT_EQ(o.family, "");
  EXPECT_EQ(o.split_k, 0);
  EXPECT_EQ(o.cache, "");
}

TEST(Options, TheSnapshotIsTakenOnceAndAChangedEnvironmentDoesNotMoveIt) {
  const Options& first = options();
  const std::string before = first.source_override_dir;
  Env env;
  env.set("I8GEMM_SOURCE_OVERRIDE_DIR", (before + "/changed").c_str());
  EXPECT_EQ(&options(), &first);
  EXPECT_EQ(options().source_override_dir, before);
}

TEST(Options, ScopedOptionsReplacesTheSnapshotAndRestoresIt) {
  const Options* outer = &options();
  {
    Options o;
    o.family = "mma_sync";
    ScopedOptions a(o);
    EXPECT_EQ(options().family, "mma_sync");
    {
      o.family = "mfma";
      ScopedOptions b(o);
      EXPECT_EQ(options().family, "mfma");
    }
    EXPECT_EQ(options().family, "mma_sync");
  }
  EXPECT_EQ(&options(), outer);
}

}  // namespace
}  // namespace i8g

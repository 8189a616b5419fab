// The only getenv calls of the library and the CLI.
#include "core/options.hpp"

#include <atomic>
#include <cstdlib>

namespace i8g {
namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

std::atomic<const Options*> installed{nullptr};

}  // namespace

Options Options::from_environment() {
  Options o;
  o.family = env("I8GEMM_FAMILY");
  // atoi, as before: text that is not a number reads as 0, which leaves the default alone.
  o.split_k = std::atoi(env("I8GEMM_SPLIT_K").c_str());
  o.pdl = env("I8GEMM_PDL") != "0";
  o.source_override_dir = env("I8GEMM_SOURCE_OVERRIDE_DIR");
  o.nvdisasm = env("I8GEMM_NVDISASM");
  o.hiprtc_worker = env("I8GEMM_HIPRTC_WORKER");
  o.nvrtc = env("I8GEMM_NVRTC");
  o.cublaslt = env("I8GEMM_CUBLASLT");
  o.pythonpath = env("PYTHONPATH");
  o.virtual_env = env("VIRTUAL_ENV");
  o.conda_prefix = env("CONDA_PREFIX");
  o.cuda_home = env("CUDA_HOME");
  o.cuda_path = env("CUDA_PATH");
  o.cache = env("I8GEMM_CACHE");
  o.allow_shared_cache = env("I8GEMM_ALLOW_SHARED_CACHE") == "1";
  o.log_level = env("I8GEMM_LOG_LEVEL");
  o.strict = env("I8GEMM_STRICT") == "1";
  o.xdg_cache_home = env("XDG_CACHE_HOME");
  o.home = env("HOME");
  o.path = env("PATH");
  o.tmpdir = env("TMPDIR");
  return o;
}

const Options& options() {
  static const Options from_env = Options::from_environment();
  const Options* o = installed.load(std::memory_order_acquire);
  return o ? *o : from_env;
}

ScopedOptions::ScopedOptions(Options o)
    : mine_(std::make_unique<Options>(std::move(o))), previous_(installed.load(std::memory_order_acquire)) {
  installed.store(mine_.get(), std::memory_order_release);
}

ScopedOptions::~ScopedOptions() { installed.store(previous_, std::memory_order_release); }

}  // namespace i8g

// Every environment variable i8gemm reads, read in one place (docs/options.md lists them).
// A library must not reread its environment at arbitrary points: a variable set halfway
// through a process would then change some decisions and not others. So the environment is
// read once, on the first call of options(), and that snapshot is what every layer sees.
#pragma once
#include <memory>
#include <string>

namespace i8g {

struct Options {
  // Serving (runtime/serve/engine.cpp), for tests and debugging; docs/tuning.md.
  std::string family;  // I8GEMM_FAMILY: prepare's untuned default uses this family where it can
  int split_k = 0;     // I8GEMM_SPLIT_K: an mma_sync default splits K this many ways (0: unset)
  // I8GEMM_PDL=0: no programmatic dependent launches on sm_90 (runtime/gpu/kernel_instance.cpp).
  bool pdl = true;
  // Debugging: <dir>/<kernel name>.cu replaces that kernel's generated source (runtime/serve/jit.cpp).
  std::string source_override_dir;  // I8GEMM_SOURCE_OVERRIDE_DIR
  // Helper programs.
  std::string nvdisasm;       // I8GEMM_NVDISASM: the nvdisasm to run for SASS
  std::string hiprtc_worker;  // I8GEMM_HIPRTC_WORKER: the hipRTC helper executable
  // CUDA libraries opened at run time (core/shared_library.hpp): a path names the one copy to
  // use; otherwise the loader's path, Python's site-packages and the toolkit are searched.
  std::string nvrtc;     // I8GEMM_NVRTC
  std::string cublaslt;  // I8GEMM_CUBLASLT
  // Where those searches look: Python environments and the CUDA toolkit.
  std::string pythonpath;    // PYTHONPATH
  std::string virtual_env;   // VIRTUAL_ENV
  std::string conda_prefix;  // CONDA_PREFIX
  std::string cuda_home;     // CUDA_HOME
  std::string cuda_path;     // CUDA_PATH
  // Where the cache lives when no path is given (cache/cache_open.cpp).
  std::string cache;           // I8GEMM_CACHE
  // I8GEMM_ALLOW_SHARED_CACHE=1: serve from a cache other users can write (refused otherwise:
  // its binaries run in the serving process).
  bool allow_shared_cache = false;
  // I8GEMM_LOG_LEVEL: quiet, error, warning (default), info or debug (core/log.hpp).
  std::string log_level;
  // I8GEMM_STRICT=1: prepare never compiles; what the cache lacks is an error (every context).
  bool strict = false;
  std::string xdg_cache_home;  // XDG_CACHE_HOME
  std::string home;            // HOME
  // Standard variables: where nvdisasm is searched for, where temp files go.
  std::string path;    // PATH
  std::string tmpdir;  // TMPDIR

  // Reads the variables now (unset and empty are the same: empty).
  static Options from_environment();
};

// The snapshot taken on the first call (thread-safe), or the one a ScopedOptions installed.
const Options& options();

// Replaces what options() returns until it goes out of scope, for tests. Not for concurrent
// use: a reference obtained from options() inside the scope dangles after it.
class ScopedOptions {
 public:
  explicit ScopedOptions(Options o);
  ~ScopedOptions();
  ScopedOptions(const ScopedOptions&) = delete;
  ScopedOptions& operator=(const ScopedOptions&) = delete;

 private:
  std::unique_ptr<Options> mine_;
  const Options* previous_;
};

}  // namespace i8g

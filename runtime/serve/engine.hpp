// The engine behind the C ABI: one device, its loaded kernels, prepare and the run path.
// Prepare does all compiling, loading and allocating; run is a table lookup, argument checks
// and one asynchronous launch on the caller's stream.
#pragma once
#include <cuda.h>

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <vector>

#include "cache/cache.hpp"
#include "core/error.hpp"
#include "runtime/gpu/device.hpp"
#include "runtime/gpu/kernel_instance.hpp"
#include "runtime/gpu/lt_dequant.hpp"
#include "runtime/serve/candidate.hpp"
#include "runtime/serve/workspace.hpp"
#include "generator/types.hpp"
#include "templates/i8g_args.h"

namespace i8g {

// The tuning key of `p` at `m_bucket` on this device and toolchain.
cache::TuneKey tune_key(const DeviceInfo& dev, const std::string& compiler_version,
                        const GemmProblem& p, int64_t m_bucket);

struct QuantizeRequest {
  int64_t m = 0, k = 0;
  int in_type = 0;  // 0 bf16, 1 f16, 2 f32
  const void* x = nullptr;
  bool per_token = true;
  bool asymmetric = false;
  int8_t* x_q = nullptr;
  float* scale = nullptr;
  int32_t* zero_point = nullptr;
};

struct EngineOptions {
  // Prepare never compiles: what the cache lacks is an ErrorKind::not_in_cache error naming
  // every missing kernel. I8GEMM_STRICT=1 sets it for every engine.
  bool strict = false;
};

// What run() launches for some m (i8gemm_chosen).
struct Choice {
  std::string kernel;         // the kernel's name or the cuBLASLt candidate
  int64_t bucket_max_m = 0;   // the bucket's bound
  bool tuned = false;         // a tuned winner (else the untuned default)
  enum class Binary { cached, compiled, cublaslt } binary = Binary::cached;
};

class Engine {
 public:
  // cache_path empty: the default; with no default location (no I8GEMM_CACHE, XDG_CACHE_HOME or
  // HOME) the engine serves without a cache and says so once.
  Engine(int device, const std::string& cache_path, EngineOptions options = {});
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  const DeviceInfo& device() const { return dev_; }
  void prepare(const GemmProblem& p, int64_t max_m);
  // With `ws`, the run's scratch memory (split-K partials and counters, cuBLASLt's accumulator
  // and workspace) is the caller's, checked against what this run needs before anything is
  // launched; without, the prepared problem's own (one per problem: runs of it on two streams
  // must not overlap).
  void run(const GemmProblem& p, const I8gArgs& a, CUstream stream, const CallerWorkspace* ws = nullptr) const;
  // Bytes of caller workspace any run of prepared `p` over m <= max_m rows needs (0: none).
  size_t workspace_size(const GemmProblem& p, int64_t max_m) const;
  void weight_colsum(const GemmProblem& p, const int8_t* w, int32_t* colsum, CUstream stream);
  void quantize(const QuantizeRequest& q, CUstream stream);
  // What run() would launch for m rows (for tests and `bench`), or nothing if unprepared.
  std::optional<Candidate> kernel_for(const GemmProblem& p, int64_t m) const;
  // The same with where it came from, or nothing if prepare did not cover m.
  std::optional<Choice> choice_for(const GemmProblem& p, int64_t m) const;
  bool strict() const { return strict_; }

  // For the autotuner, bench and tests, at prepare time (both allocate): one kernel (cache or
  // JIT) with its own workspace for up to max_m rows, launched without the run path's checks;
  // and the cuBLASLt baseline with this engine's dequant. Neither may outlive the engine.
  KernelInstance instantiate(const KernelSpec& spec, int64_t max_m);
  std::unique_ptr<LtDequant> lt_dequant(const GemmProblem& p, int64_t max_m);
  const std::string& cache_path() const { return cache_path_; }  // empty: no cache
  CUcontext context() const { return ctx_; }

 private:
  struct Module;
  struct Loaded;
  struct Prepared;
  // Loads each of `specs` not loaded yet, and the utility module if it is not: from the cache,
  // else compiled (all that is missing in parallel, without spawning a helper) and stored; a
  // failed compile throws, naming each kernel that failed with its log. Strict mode compiles
  // nothing: what the cache lacks is appended to `missing`. Caller holds mu_
  // (runtime/serve/engine_load.cpp).
  void load_all(const std::vector<KernelSpec>& specs, cache::Cache* c, std::vector<std::string>& missing);
  void ensure_utility(cache::Cache* c);  // load_all of no kernel; strict mode: throws not_in_cache
  CUfunction utility(const char* name) const;
  // Loads the utility module if needed (never while `stream` is capturing).
  void utility_for(CUstream stream, const char* where);
  void launch_dequant(const int32_t* acc, const GemmProblem& p, const I8gArgs& a, CUstream stream) const;
  std::unique_ptr<LtDequant> make_lt_dequant(const GemmProblem& p, int64_t max_m) const;  // utility loaded
  void check_stream(CUstream stream, const char* where) const;
  void check_pointer(const void* p, size_t align, const char* what, const char* where) const;

  DeviceInfo dev_;
  bool strict_ = false;
  CUcontext ctx_ = nullptr;
  std::string cache_path_;
  std::string cache_warning_;
  mutable std::shared_mutex mu_;
  std::map<std::string, std::unique_ptr<Loaded>> loaded_;      // by kernel name
  std::map<std::string, std::unique_ptr<Prepared>> prepared_;  // by problem key
  std::vector<std::unique_ptr<Prepared>> retired_;             // replaced, kept until destruction
  std::unique_ptr<Module> utility_;
};

}  // namespace i8g

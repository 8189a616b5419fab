#include "runtime/serve/engine.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "cache/cache.hpp"
#include "core/log.hpp"
#include "core/options.hpp"
#include "generator/families.hpp"
#include "generator/generator.hpp"
#include "i8gemm/i8gemm.h"
#include "runtime/compile/compiler.hpp"
#include "runtime/gpu/cuda_driver.hpp"
#include "runtime/serve/engine_parts.hpp"
#include "runtime/serve/jit.hpp"
#include "runtime/serve/stream_order.hpp"

namespace i8g {

// ---------------------------------------------------------------------------------------------
// Prepared problems (Module and Loaded: runtime/serve/engine_parts.hpp)

struct Engine::Prepared {
  struct Bucket {
    int64_t max_m;                 // covers m <= max_m
    const KernelInstance* kernel;  // or null for a bucket cuBLASLt won
    int lt_algo;                   // that bucket's algorithm: its index in the tune's heuristic list
    bool tuned;                    // from a tuned winner (else the untuned default)
    bool compiled;                 // its kernel was compiled by this process
    LtAlgorithm lt;                // the algorithm itself, fixed at prepare (cuBLASLt buckets)
    // Bytes of a caller's workspace a run of m rows (> 0) here needs: the kernel's split-K
    // workspace, or cuBLASLt's accumulator and workspace. Arithmetic only (the run path).
    size_t workspace(int64_t n, int64_t m) const {
      return kernel ? workspace_bytes(kernel->spec(), m) : LtDequant::scratch_bytes(n, m, lt);
    }
  };
  GemmProblem problem;
  int64_t max_m = 0;
  std::vector<Bucket> buckets;  // ascending
  // One instance per kernel, sized for the largest M it serves: buckets running the same kernel
  // share its workspace (its tile blocks do not move with M).
  std::map<const Loaded*, KernelInstance> instances;
  std::unique_ptr<LtDequant> lt;  // when a bucket is cuBLASLt's
  // Orders plain runs that use the scratch above across streams (runtime/serve/stream_order.hpp).
  std::unique_ptr<StreamOrder> order;
};

namespace {

// The problem part of a lookup key, without the formatting cost on the run path.
std::string problem_id(const GemmProblem& p) { return p.key(); }

// The untuned default of prepare, with two overrides for tests and debugging (docs/tuning.md):
// I8GEMM_FAMILY=<family> takes that family's default wherever it has a candidate, and
// I8GEMM_SPLIT_K=<s> splits the default's K s ways wherever its family splits K and that is valid.
KernelConfig untuned_default(const GemmProblem& p, const Target& t, int64_t m) {
  KernelConfig c = heuristic_default(p, t, m);
  if (const std::string& f = options().family; !f.empty()) {
    const std::optional<Family> fam = parse_family(f);
    if (!fam)
      throw Error(ErrorKind::invalid_argument, "i8gemm_prepare",
                     fmt::format("I8GEMM_FAMILY={} names no kernel family", f));
    try {
      c = heuristic_default(p, t, m, *fam);
    } catch (const Error&) {  // that family cannot run this problem: keep the default
    }
  }
  if (const int s = options().split_k; s != 0 && family_info(c.family).splits_k) {
    KernelConfig sc = c;
    sc.split_k = s;
    if (invalid_reason(p, sc, t).empty()) c = sc;
  }
  return c;
}

// Makes the engine's context current for one call and puts the caller's back afterwards, so a
// call leaves the thread's CUDA state as it found it (no call when they are the same).
struct CurrentContext {
  explicit CurrentContext(CUcontext ctx) {
    driver().cuCtxGetCurrent(&caller_);
    if (caller_ != ctx) {
      check_cu(driver().cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
      switched_ = true;
    }
  }
  ~CurrentContext() {
    if (switched_) driver().cuCtxSetCurrent(caller_);
  }
  CurrentContext(const CurrentContext&) = delete;
  CurrentContext& operator=(const CurrentContext&) = delete;

 private:
  CUcontext caller_ = nullptr;
  bool switched_ = false;
};

}  // namespace

Engine::Engine(int device, const std::string& cache_path, EngineOptions options_)
    : dev_(query_device(device)), strict_(options_.strict || options().strict) {
  check_cu(driver().cuDevicePrimaryCtxRetain(&ctx_, dev_.device), "cuDevicePrimaryCtxRetain");
  // The creating thread keeps the context current, so its own driver calls (streams, events,
  // buffers in tools and tests) work without further setup.
  check_cu(driver().cuCtxSetCurrent(ctx_), "cuCtxSetCurrent");
  if (!cache_path.empty()) {
    cache_path_ = cache_path;
  } else {
    try {
      cache_path_ = cache::Cache::default_path();
    } catch (const Error& e) {  // no HOME, XDG_CACHE_HOME or I8GEMM_CACHE: serve without a cache
      log_warning(e.message() + "; serving without a cache (kernels are compiled in memory)");
    }
  }
}

Engine::~Engine() {
  if (!ctx_) return;
  driver().cuCtxSetCurrent(ctx_);
  prepared_.clear();  // device buffers go while the context is still held
  retired_.clear();
  utility_.reset();
  loaded_.clear();
  driver().cuDevicePrimaryCtxRelease(dev_.device);
}

void Engine::utility_for(CUstream stream, const char* where) {
  std::unique_lock lock(mu_);
  if (utility_) return;
  CUstreamCaptureStatus cs = CU_STREAM_CAPTURE_STATUS_NONE;
  driver().cuStreamIsCapturing(stream, &cs);
  if (cs != CU_STREAM_CAPTURE_STATUS_NONE)
    throw Error(ErrorKind::not_prepared, where,
                   "the utility kernels are not loaded and the stream is capturing; call i8gemm_prepare first");
  CurrentContext cc(ctx_);
  std::unique_ptr<cache::Cache> c = open_cache_or_warn(cache_path_, cache_warning_);
  ensure_utility(c.get());
}

cache::TuneKey tune_key(const DeviceInfo& dev, const std::string& compiler_version,
                        const GemmProblem& p, int64_t m_bucket) {
  return {p.key(), m_bucket, dev.target.arch, dev.target.sm_count, dev.name, compiler_version,
          dev.driver_version, generator_hash()};
}

void Engine::prepare(const GemmProblem& p, int64_t max_m) {
  if (std::string why = p.invalid_reason(); !why.empty())
    throw Error(ErrorKind::invalid_argument, "i8gemm_prepare", why);
  if (max_m < 1 || max_m > (int64_t(1) << 31))
    throw Error(ErrorKind::invalid_argument, "i8gemm_prepare",
                   fmt::format("max_m={} must be in [1, 2^31]", max_m));
  std::unique_lock lock(mu_);
  CurrentContext cc(ctx_);
  const std::string id = problem_id(p);
  if (auto it = prepared_.find(id); it != prepared_.end() && it->second->max_m >= max_m) return;
  std::unique_ptr<cache::Cache> c = open_cache_or_warn(cache_path_, cache_warning_);
  const std::string cv = serving_compiler(dev_.target, strict_, c.get())->version();

  // Tuned winners for this problem on this device and toolchain, by M bucket.
  std::map<int64_t, cache::Winner> tuned;
  if (c) {
    const cache::TuneKey want = tune_key(dev_, cv, p, 0);
    std::map<std::string, int> elsewhere;  // winners of this problem measured elsewhere, by why
    for (cache::Winner& w : c->list_winners()) {
      cache::TuneKey k = w.key;
      k.m_bucket = 0;
      if (k == want) {
        tuned[w.key.m_bucket] = std::move(w);
      } else if (std::string why = cache::tune_key_mismatch(k, want); !why.empty()) {
        ++elsewhere[why];
      }
    }
    // Winners that cannot serve here (most often: tuned before an upgrade changed the generator)
    // are kept, never used; say so where none can, so that the slower untuned default is not a
    // surprise.
    if (tuned.empty())
      for (const auto& [why, count] : elsewhere)
        log_warning(fmt::format("{}: the cache holds {} tuned bucket(s) of this problem measured elsewhere — {} — "
                                "not used here; the untuned default serves until `i8gemm tune` runs on this "
                                "setup",
                                id, count, why));
  }
  std::vector<int64_t> bounds = m_buckets(max_m);
  for (const auto& [m, w] : tuned)
    if (m < max_m) bounds.push_back(m);
  std::sort(bounds.begin(), bounds.end());
  bounds.erase(std::unique(bounds.begin(), bounds.end()), bounds.end());

  std::vector<std::string> missing;  // strict mode: binaries the cache lacks
  auto prep = std::make_unique<Prepared>();
  prep->problem = p;
  prep->max_m = max_m;
  prep->order = std::make_unique<StreamOrder>();
  std::vector<std::optional<KernelSpec>> bucket_specs;  // per bucket; none where cuBLASLt won
  for (int64_t bound : bounds) {
    auto w = tuned.lower_bound(bound);  // the smallest tuned bucket covering this one
    std::optional<Candidate> won;
    if (w != tuned.end()) {
      try {
        won = parse_candidate(w->second.candidate);
      } catch (const Error&) {  // an unreadable winner falls back to the default
      }
    }
    if (const LtAlgo* algo = won ? lt_algo_of(*won) : nullptr) {
      // The algorithm the tune timed (its index in the heuristic list of the tuned M), kept by
      // value and checked for both ends of this bucket now, not looked up on the run path.
      if (!prep->lt) prep->lt = make_lt_dequant(p, max_m);
      const int64_t lo = prep->buckets.empty() ? 1 : prep->buckets.back().max_m + 1;
      const LtAlgorithm a = prep->lt->pick(algo->index, w->first, lo, std::min(bound, max_m));
      prep->buckets.push_back({bound, nullptr, algo->index, true, false, a});
      bucket_specs.push_back(std::nullopt);
      continue;
    }
    KernelConfig config;
    try {
      config = untuned_default(p, dev_.target, bound);
    } catch (const Error& e) {
      throw Error(ErrorKind::unsupported, "i8gemm_prepare", e.what());
    }
    KernelSpec spec{p, config, dev_.target.arch};
    bool tuned_kernel = false;
    // A kernel that reads a packed weight (generator/packed_weight.hpp) is never served: the caller
    // hands the plain [N,K] weight (the tuner never stores one as a winner; a cache that holds
    // one falls back to the default here).
    if (const KernelSpec* t = won ? kernel_of(*won) : nullptr;
        t && t->problem == p && t->arch == dev_.target.arch && !t->config.packed_weight) {
      spec = *t;
      tuned_kernel = true;
    }
    if (launch_shape(spec, max_m).grid[1] > 65535)
      throw Error(ErrorKind::unsupported, "i8gemm_prepare",
                     fmt::format("max_m={} needs more than 65535 row blocks", max_m));
    prep->buckets.push_back({bound, nullptr, 0, tuned_kernel, false, {}});
    bucket_specs.push_back(spec);
  }
  // Every bucket's kernel and the utility module in one batch: what the cache lacks compiles in
  // parallel (strict mode: is named in `missing`).
  std::vector<KernelSpec> specs;
  for (const std::optional<KernelSpec>& s : bucket_specs)
    if (s) specs.push_back(*s);
  load_all(specs, c.get(), missing);
  if (!missing.empty()) {
    std::string names;
    for (const std::string& n : missing) names += (names.empty() ? "" : ", ") + n;
    throw Error(ErrorKind::not_in_cache, "i8gemm_prepare",
                fmt::format("strict mode: {} lacks {} binar{} that problem {} up to M={} needs: {}; store them "
                            "first (i8gemm tune on this GPU, or tune --compile-only for the untuned defaults) "
                            "or create the context without strict mode",
                            c ? "the cache " + c->path() : std::string("no cache is open, so it"), missing.size(),
                            missing.size() == 1 ? "y" : "ies", p.key(), max_m, names));
  }
  std::vector<const Loaded*> bucket_kernels(prep->buckets.size(), nullptr);  // null where cuBLASLt won
  std::map<const Loaded*, int64_t> rows_served;
  for (size_t i = 0; i < bucket_specs.size(); ++i) {
    if (!bucket_specs[i]) continue;
    const Loaded* k = loaded_.at(bucket_specs[i]->name()).get();
    bucket_kernels[i] = k;
    prep->buckets[i].compiled = k->compiled;
    rows_served[k] = std::max(rows_served[k], std::min(prep->buckets[i].max_m, max_m));
  }
  for (const auto& [k, rows] : rows_served)
    prep->instances.emplace(k, KernelInstance(k->spec, k->fn, rows, dev_.target.sm_count));
  for (size_t i = 0; i < prep->buckets.size(); ++i)
    if (bucket_kernels[i]) prep->buckets[i].kernel = &prep->instances.at(bucket_kernels[i]);
  // A wider re-prepare retires the old entry instead of freeing it: work already enqueued, and
  // graphs captured with its kernels and workspaces, may still use them.
  if (auto old = prepared_.find(id); old != prepared_.end()) retired_.push_back(std::move(old->second));
  prepared_[id] = std::move(prep);
}

KernelInstance Engine::instantiate(const KernelSpec& spec, int64_t max_m) {
  std::unique_lock lock(mu_);
  CurrentContext cc(ctx_);
  std::unique_ptr<cache::Cache> c = open_cache_or_warn(cache_path_, cache_warning_);
  std::vector<std::string> missing;
  load_all({spec}, c.get(), missing);
  if (!missing.empty())
    throw Error(ErrorKind::not_in_cache, "i8gemm_prepare",
                fmt::format("strict mode: the cache lacks {}", fmt::join(missing, ", ")));
  const Loaded& k = *loaded_.at(spec.name());
  return KernelInstance(k.spec, k.fn, max_m, dev_.target.sm_count);
}

std::unique_ptr<LtDequant> Engine::lt_dequant(const GemmProblem& p, int64_t max_m) {
  std::unique_lock lock(mu_);
  CurrentContext cc(ctx_);
  std::unique_ptr<cache::Cache> c = open_cache_or_warn(cache_path_, cache_warning_);
  ensure_utility(c.get());
  return make_lt_dequant(p, max_m);
}

std::unique_ptr<LtDequant> Engine::make_lt_dequant(const GemmProblem& p, int64_t max_m) const {
  return std::make_unique<LtDequant>(p, max_m, [this, p](const int32_t* acc, const I8gArgs& a, CUstream s) {
    launch_dequant(acc, p, a, s);
  });
}

namespace {

bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15) == 0; }

// The dequant's vector kernel reads and writes 16 bytes at a time and never crosses a row.
bool dequant_vector_ok(const GemmProblem& p, const I8gArgs& a) {
  return p.n % 8 == 0 && aligned16(a.out) &&
         (p.out == OutType::i32 || p.weight_scale == WeightScale::per_tensor || aligned16(a.w_scale)) &&
         (!p.bias || aligned16(a.bias)) && (!p.asymmetric || aligned16(a.w_colsum));
}

}  // namespace

void Engine::launch_dequant(const int32_t* acc, const GemmProblem& p, const I8gArgs& a, CUstream stream) const {
  CurrentContext cc(ctx_);
  I8gArgs args = a;
  args.n = p.n;
  args.k = p.k;
  if (dequant_vector_ok(p, args)) {  // grid (M, N / 1024), 128 threads of 8 outputs
    void* params[] = {&acc, &args};
    check_cu(driver().cuLaunchKernel(utility(dequant_entry(p).c_str()), unsigned(a.m), unsigned((p.n + 1023) / 1024),
                                     1, 128, 1, 1, 0, stream, params, nullptr),
             "cuLaunchKernel");
    return;
  }
  int per_token = p.act_scale == ActScale::per_token, per_channel = p.weight_scale == WeightScale::per_channel;
  void* params[] = {&acc, &args, &per_token, &per_channel};
  const unsigned blocks = unsigned((a.m * p.n + 8 * 256 - 1) / (8 * 256));
  check_cu(driver().cuLaunchKernel(utility(dequant_any_entry(p).c_str()), blocks, 1, 1, 256, 1, 1, 0, stream, params,
                                   nullptr),
           "cuLaunchKernel");
}

std::optional<Candidate> Engine::kernel_for(const GemmProblem& p, int64_t m) const {
  std::shared_lock lock(mu_);
  auto it = prepared_.find(problem_id(p));
  if (it == prepared_.end()) return std::nullopt;
  for (const auto& b : it->second->buckets)
    if (m <= b.max_m) return b.kernel ? Candidate{b.kernel->spec()} : Candidate{LtAlgo{b.lt_algo}};
  return std::nullopt;
}

std::optional<Choice> Engine::choice_for(const GemmProblem& p, int64_t m) const {
  std::shared_lock lock(mu_);
  auto it = prepared_.find(problem_id(p));
  if (it == prepared_.end() || m < 1 || m > it->second->max_m) return std::nullopt;
  for (const auto& b : it->second->buckets)
    if (m <= b.max_m) {
      Choice c;
      c.kernel = b.kernel ? b.kernel->spec().name() : to_string(Candidate{LtAlgo{b.lt_algo}});
      c.bucket_max_m = b.max_m;
      c.tuned = b.tuned;
      c.binary = !b.kernel ? Choice::Binary::cublaslt : b.compiled ? Choice::Binary::compiled : Choice::Binary::cached;
      return c;
    }
  return std::nullopt;
}

void Engine::check_stream(CUstream stream, const char* where) const {
  if (!stream) return;
  CUcontext c = nullptr;
  if (driver().cuStreamGetCtx(stream, &c) != CUDA_SUCCESS)
    throw Error(ErrorKind::invalid_argument, where, "the stream is not a valid CUDA stream");
  if (c == ctx_) return;
  // Name the stream's context and its device (error path only: push/pop leaves this thread's
  // current context as it was).
  std::string its_device = "an unknown device";
  CUdevice d = 0;
  if (driver().cuCtxPushCurrent(c) == CUDA_SUCCESS) {
    if (driver().cuCtxGetDevice(&d) == CUDA_SUCCESS) its_device = fmt::format("device {}", int(d));
    CUcontext popped = nullptr;
    driver().cuCtxPopCurrent(&popped);
  }
  throw Error(ErrorKind::invalid_argument, where,
                 fmt::format("the stream belongs to CUDA context {} on {}, not to the context this i8gemm "
                             "context uses (device {}'s primary context {}); create the stream in that "
                             "context",
                             fmt::ptr(c), its_device, dev_.ordinal, fmt::ptr(ctx_)));
}

void Engine::check_pointer(const void* p, size_t align, const char* what, const char* where) const {
  if (!p)
    throw Error(ErrorKind::invalid_argument, where, fmt::format("{} is null", what));
  if (reinterpret_cast<uintptr_t>(p) % align != 0)
    throw Error(ErrorKind::invalid_argument, where,
                   fmt::format("{} is not {}-byte aligned, as the chosen kernel's loads need", what, align));
  int ordinal = -1;
  if (driver().cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                                     reinterpret_cast<CUdeviceptr>(p)) != CUDA_SUCCESS)
    throw Error(ErrorKind::invalid_argument, where,
                   fmt::format("{} is not a CUDA device pointer", what));
  if (ordinal != dev_.ordinal)
    throw Error(ErrorKind::invalid_argument, where,
                   fmt::format("{} lives on device {}, the context is on device {}", what, ordinal,
                               dev_.ordinal));
}

void Engine::run(const GemmProblem& p, const I8gArgs& a, CUstream stream, const CallerWorkspace* ws) const {
  const char* where = ws ? "i8gemm_run_with_workspace" : "i8gemm_run";
  std::shared_lock lock(mu_);
  auto it = prepared_.find(problem_id(p));
  if (it == prepared_.end()) {
    CUstreamCaptureStatus cs = CU_STREAM_CAPTURE_STATUS_NONE;
    driver().cuStreamIsCapturing(stream, &cs);
    throw Error(ErrorKind::not_prepared, where,
                   fmt::format("problem {} was not prepared{}; call i8gemm_prepare first, before any "
                               "graph capture", p.key(),
                               cs == CU_STREAM_CAPTURE_STATUS_ACTIVE ? " (the stream is capturing)" : ""));
  }
  const Prepared& prep = *it->second;
  if (a.m < 0 || a.m > prep.max_m)
    throw Error(ErrorKind::invalid_argument, where,
                   fmt::format("m={} is outside [0, {}] (the max_m it was prepared for)", a.m, prep.max_m));
  const Prepared::Bucket* bucket = nullptr;
  for (const auto& b : prep.buckets)
    if (a.m <= b.max_m) { bucket = &b; break; }
  const KernelInstance* k = bucket->kernel;
  const size_t need = ws && a.m > 0 ? bucket->workspace(p.n, a.m) : 0;
  if (ws)
    if (std::string why = workspace_refusal(*ws, need); !why.empty())
      throw Error(ErrorKind::invalid_argument, where,
                  fmt::format("{} ({} over m={}); size it with i8gemm_workspace_size for the largest m it serves", why,
                              k ? k->spec().name() : "cuBLASLt's accumulator and workspace", a.m));
  if (a.m == 0) return;
  const int vec = k ? required_alignment(k->spec().config) : 16;
  check_stream(stream, where);
  check_pointer(a.x, size_t(vec), "x", where);
  check_pointer(a.w, size_t(vec), "w", where);
  check_pointer(a.out, out_element_size(p.out), "out", where);
  if (p.out != OutType::i32) {
    check_pointer(a.x_scale, 4, "x_scale", where);
    check_pointer(a.w_scale, 4, "w_scale", where);
  }
  if (p.bias) check_pointer(a.bias, 4, "bias", where);
  if (p.asymmetric) {
    check_pointer(a.x_zero_point, 4, "x_zero_point", where);
    check_pointer(a.w_colsum, 4, "w_colsum", where);
  }
  if (need > 0) check_pointer(ws->ptr, kWorkspaceAlignment, "workspace", where);
  CurrentContext cc(ctx_);
  // Prepare fixed the cuBLASLt algorithm and loaded the utility module.
  if (ws) return k ? k->launch(a, stream, ws->ptr) : prep.lt->run(bucket->lt, a, stream, ws->ptr);
  if (k && bucket->workspace(p.n, a.m) == 0) return k->launch(a, stream);  // no scratch to share
  // The problem's own scratch: ordered after the last plain run of it on another stream.
  std::lock_guard order(prep.order->mu);
  prep.order->before(stream);
  if (k)
    k->launch(a, stream);
  else
    prep.lt->run(bucket->lt, a, stream);
  prep.order->after(stream);
}

size_t Engine::workspace_size(const GemmProblem& p, int64_t max_m) const {
  std::shared_lock lock(mu_);
  auto it = prepared_.find(problem_id(p));
  if (it == prepared_.end())
    throw Error(ErrorKind::not_prepared, "i8gemm_workspace_size",
                fmt::format("problem {} was not prepared; call i8gemm_prepare first", p.key()));
  const Prepared& prep = *it->second;
  if (max_m > prep.max_m)
    throw Error(ErrorKind::not_prepared, "i8gemm_workspace_size",
                fmt::format("problem {} is prepared for m up to {}, not max_m={}; prepare it for that many rows "
                            "first",
                            p.key(), prep.max_m, max_m));
  // Each bucket's need grows with m, so its largest m at or below max_m is its worst.
  size_t bytes = 0;
  int64_t lo = 1;
  for (const auto& b : prep.buckets) {
    if (lo > max_m) break;
    bytes = std::max(bytes, b.workspace(p.n, std::min(b.max_m, max_m)));
    lo = b.max_m + 1;
  }
  return bytes;
}

void Engine::weight_colsum(const GemmProblem& p, const int8_t* w, int32_t* colsum, CUstream stream) {
  if (std::string why = p.invalid_reason(); !why.empty())
    throw Error(ErrorKind::invalid_argument, "i8gemm_weight_colsum", why);
  utility_for(stream, "i8gemm_weight_colsum");
  check_stream(stream, "i8gemm_weight_colsum");
  check_pointer(w, 1, "w", "i8gemm_weight_colsum");
  check_pointer(colsum, 4, "colsum", "i8gemm_weight_colsum");
  CurrentContext cc(ctx_);
  long long n = p.n, k = p.k;
  void* params[] = {&w, &colsum, &n, &k};
  const bool nk = p.layout == WeightLayout::nk;
  const unsigned blocks = unsigned(nk ? (p.n + 7) / 8 : (p.n + 255) / 256);
  check_cu(driver().cuLaunchKernel(utility(nk ? "i8g_colsum_nk" : "i8g_colsum_kn"), blocks, 1, 1,
                                   256, 1, 1, 0, stream, params, nullptr),
           "cuLaunchKernel");
}

void Engine::quantize(const QuantizeRequest& q, CUstream stream) {
  if (q.m < 0 || q.k <= 0 || q.in_type < 0 || q.in_type > 2)
    throw Error(ErrorKind::invalid_argument, "i8gemm_quantize",
                   fmt::format("bad quantize arguments (m={}, k={}, in_type={})", q.m, q.k, q.in_type));
  utility_for(stream, "i8gemm_quantize");
  if (q.m == 0) return;
  check_stream(stream, "i8gemm_quantize");
  const size_t in_size = q.in_type == 2 ? 4 : 2;
  check_pointer(q.x, in_size, "x", "i8gemm_quantize");
  check_pointer(q.x_q, 1, "x_q", "i8gemm_quantize");
  check_pointer(q.scale, 4, "scale", "i8gemm_quantize");
  if (q.asymmetric) check_pointer(q.zero_point, 4, "zero_point", "i8gemm_quantize");
  CurrentContext cc(ctx_);
  static const char* kIn[] = {"bf16", "f16", "f32"};
  const std::string suffix = fmt::format("{}_{}", kIn[q.in_type], q.asymmetric ? "asym" : "sym");
  const void* x = q.x;
  int8_t* xq = q.x_q;
  float* scale = q.scale;
  int32_t* zp = q.zero_point;
  long long k = q.k;
  if (q.per_token) {
    void* params[] = {&x, &xq, &scale, &zp, &k};
    check_cu(driver().cuLaunchKernel(utility(("i8g_quantize_rows_" + suffix).c_str()), unsigned(q.m), 1, 1,
                                     256, 1, 1, 0, stream, params, nullptr),
             "cuLaunchKernel");
    return;
  }
  long long total = q.m * q.k;
  const unsigned blocks = unsigned(std::min<long long>((total + 255) / 256, 4L * dev_.target.sm_count * 8));
  check_cu(driver().cuMemsetD32Async(reinterpret_cast<CUdeviceptr>(scale), 0u, 1, stream), "cuMemsetD32Async");
  if (q.asymmetric)
    check_cu(driver().cuMemsetD32Async(reinterpret_cast<CUdeviceptr>(zp), 0xffffffffu, 1, stream),
             "cuMemsetD32Async");
  void* range_params[] = {&x, &scale, &zp, &total};
  check_cu(driver().cuLaunchKernel(utility(("i8g_range_" + suffix).c_str()), blocks, 1, 1, 256, 1, 1, 0,
                                   stream, range_params, nullptr),
           "cuLaunchKernel");
  void* fin_params[] = {&scale, &zp, &scale, &zp};
  check_cu(driver().cuLaunchKernel(utility(q.asymmetric ? "i8g_finalize_range_asym" : "i8g_finalize_range_sym"),
                                   1, 1, 1, 1, 1, 1, 0, stream, fin_params, nullptr),
           "cuLaunchKernel");
  void* quant_params[] = {&x, &xq, &scale, &zp, &total};
  check_cu(driver().cuLaunchKernel(utility(("i8g_quantize_tensor_" + suffix).c_str()), blocks, 1, 1, 256, 1, 1,
                                   0, stream, quant_params, nullptr),
           "cuLaunchKernel");
}

}  // namespace i8g

#include "runtime/engine.hpp"

#include <fmt/format.h>

#include <cstdio>

#include "cache/cache.hpp"
#include "generator/generator.hpp"
#include "i8gemm/i8gemm.h"
#include "runtime/compiler.hpp"
#include "runtime/cuda_driver.hpp"
#include "runtime/jit.hpp"

namespace i8g {

// ---------------------------------------------------------------------------------------------
// Device

DeviceInfo query_device(int ordinal) {
  std::string why;
  const Driver* d = Driver::get(&why);
  if (!d) throw ApiError(I8GEMM_ERROR_NO_DEVICE, "i8gemm_create", why);
  int count = 0;
  check_cu(d->cuDeviceGetCount(&count), "cuDeviceGetCount");
  if (ordinal < 0 || ordinal >= count)
    throw ApiError(I8GEMM_ERROR_INVALID_ARGUMENT, "i8gemm_create",
                   fmt::format("device {} does not exist ({} CUDA device(s))", ordinal, count));
  DeviceInfo info;
  info.ordinal = ordinal;
  check_cu(d->cuDeviceGet(&info.device, ordinal), "cuDeviceGet");
  char name[256] = {};
  check_cu(d->cuDeviceGetName(name, sizeof(name) - 1, info.device), "cuDeviceGetName");
  info.name = name;
  auto attr = [&](CUdevice_attribute a) {
    int v = 0;
    check_cu(d->cuDeviceGetAttribute(&v, a, info.device), "cuDeviceGetAttribute");
    return v;
  };
  info.cc = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) * 10 +
            attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  // sm_90 devices get the arch-specific target (wgmma, setmaxnreg need it).
  const std::string arch = fmt::format("sm_{}{}", info.cc, info.cc == 90 ? "a" : "");
  try {
    info.target = Target::from_arch(arch);
  } catch (const Error& e) {
    throw ApiError(I8GEMM_ERROR_UNSUPPORTED, "i8gemm_create",
                   fmt::format("{} (compute capability {}.{}): {}", info.name, info.cc / 10,
                               info.cc % 10, e.message()));
  }
  Target& t = info.target;
  t.sm_count = attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  t.smem_per_block_optin = attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  t.smem_per_sm = attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
  t.regs_per_sm = attr(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR);
  t.max_threads_per_sm = attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
  t.max_blocks_per_sm = attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR);
  int v = 0;
  check_cu(d->cuDriverGetVersion(&v), "cuDriverGetVersion");
  info.driver_version = fmt::format("{}.{}", v / 1000, (v % 1000) / 10);
  return info;
}

// ---------------------------------------------------------------------------------------------
// Loaded modules

struct Engine::Module {
  CUmodule handle = nullptr;
  explicit Module(const std::vector<uint8_t>& image) {
    check_cu(driver().cuModuleLoadData(&handle, image.data()), "cuModuleLoadData");
  }
  ~Module() {
    if (handle) driver().cuModuleUnload(handle);
  }
  CUfunction function(const std::string& symbol) const {
    CUfunction f = nullptr;
    check_cu(driver().cuModuleGetFunction(&f, handle, symbol.c_str()), "cuModuleGetFunction");
    return f;
  }
};

struct Engine::Loaded {
  KernelSpec spec;
  std::unique_ptr<Module> module;
  CUfunction fn = nullptr;
};

struct Engine::Prepared {
  GemmProblem problem;
  int64_t max_m = 0;
  std::vector<std::pair<int64_t, const Loaded*>> buckets;  // (largest m, kernel), ascending
};

namespace {

// The problem part of a lookup key, without the formatting cost on the run path.
std::string problem_id(const GemmProblem& p) { return p.key(); }

struct CurrentContext {
  explicit CurrentContext(CUcontext ctx) {
    CUcontext cur = nullptr;
    driver().cuCtxGetCurrent(&cur);
    if (cur != ctx) check_cu(driver().cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
  }
};

}  // namespace

Engine::Engine(int device, const std::string& cache_path) : dev_(query_device(device)) {
  check_cu(driver().cuDevicePrimaryCtxRetain(&ctx_, dev_.device), "cuDevicePrimaryCtxRetain");
  cache_path_ = cache_path.empty() ? cache::Cache::default_path() : cache_path;
}

Engine::~Engine() {
  if (!ctx_) return;
  driver().cuCtxSetCurrent(ctx_);
  utility_.reset();
  loaded_.clear();
  driver().cuDevicePrimaryCtxRelease(dev_.device);
}

namespace {

// Opens the cache for prepare. A cache that cannot be opened does not stop serving: kernels
// are compiled in memory and the reason is printed once.
std::unique_ptr<cache::Cache> open_cache(const std::string& path, std::string& warned) {
  try {
    return std::make_unique<cache::Cache>(path, cache::Cache::Mode::read_write);
  } catch (const Error& e) {
    if (warned != e.what()) {
      std::fprintf(stderr, "i8gemm: warning: %s; compiling without the cache\n", e.what());
      warned = e.what();
    }
    return nullptr;
  }
}

// The stored binary for `key`, or nothing. A damaged entry is reported and skipped (never
// loaded); the kernel is then compiled afresh.
std::optional<cache::StoredKernel> lookup(cache::Cache* c, const cache::BinaryKey& key) {
  if (!c) return std::nullopt;
  try {
    return c->get_kernel(key);
  } catch (const Error& e) {
    std::fprintf(stderr, "i8gemm: warning: %s; compiling %s afresh\n", e.what(), key.name.c_str());
    return std::nullopt;
  }
}

// From the cache if there, else compiled now (and stored when a cache is open).
cache::StoredKernel fetch_or_compile(cache::Cache* c, const Compiler& compiler, const Source& src,
                                     const std::optional<KernelSpec>& spec, const Target& target) {
  const cache::BinaryKey key{src.name, target.arch, compiler.version(), generator_hash()};
  if (auto hit = lookup(c, key)) return *hit;
  Binary bin;
  try {
    bin = compiler.compile(src, target);
  } catch (const Error& e) {
    throw ApiError(I8GEMM_ERROR_COMPILE, "i8gemm_prepare", e.what());
  }
  cache::StoredKernel k;
  if (spec) {
    k = make_stored_kernel(*spec, src, bin, target);
  } else {
    k.key = key;
    k.family = "utility";
    k.source = src.code;
    k.entry = src.entry;
    k.lowered_name = bin.lowered_name;
    k.options = bin.options;
    k.binary = bin.image;
    k.binary_sha256 = cache::sha256_hex(bin.image.data(), bin.image.size());
    k.ir = bin.ir;
    k.log = bin.log;
    k.compile_ms = bin.compile_ms;
  }
  if (c) {
    try {
      k.id = c->put_kernel(k);
    } catch (const Error& e) {
      std::fprintf(stderr, "i8gemm: warning: could not store %s: %s\n", src.name.c_str(), e.what());
    }
  }
  return k;
}

}  // namespace

const Engine::Loaded& Engine::load(const KernelSpec& spec) {
  const std::string name = spec.name();
  if (auto it = loaded_.find(name); it != loaded_.end()) return *it->second;
  const std::unique_ptr<Compiler> compiler = make_compiler(dev_.target);
  std::unique_ptr<cache::Cache> c = open_cache(cache_path_, cache_warning_);
  const cache::StoredKernel k = fetch_or_compile(c.get(), *compiler, emit(spec), spec, dev_.target);
  if (k.key.arch != dev_.target.arch)
    throw ApiError(I8GEMM_ERROR_INTERNAL, "i8gemm_prepare", "binary arch does not match the device");
  auto l = std::make_unique<Loaded>();
  l->spec = spec;
  l->module = std::make_unique<Module>(k.binary);
  l->fn = l->module->function(k.lowered_name);
  return *loaded_.emplace(name, std::move(l)).first->second;
}

void Engine::ensure_utility() {
  if (utility_) return;
  const std::unique_ptr<Compiler> compiler = make_compiler(dev_.target);
  std::unique_ptr<cache::Cache> c = open_cache(cache_path_, cache_warning_);
  const cache::StoredKernel k =
      fetch_or_compile(c.get(), *compiler, emit_utility(dev_.target.arch), std::nullopt, dev_.target);
  utility_ = std::make_unique<Module>(k.binary);
}

CUfunction Engine::utility(const char* name) const { return utility_->function(name); }

void Engine::prepare(const GemmProblem& p, int64_t max_m) {
  if (std::string why = p.invalid_reason(); !why.empty())
    throw ApiError(I8GEMM_ERROR_INVALID_ARGUMENT, "i8gemm_prepare", why);
  if (max_m < 1 || max_m > (int64_t(1) << 31))
    throw ApiError(I8GEMM_ERROR_INVALID_ARGUMENT, "i8gemm_prepare",
                   fmt::format("max_m={} must be in [1, 2^31]", max_m));
  std::unique_lock lock(mu_);
  CurrentContext cc(ctx_);
  const std::string id = problem_id(p);
  if (auto it = prepared_.find(id); it != prepared_.end() && it->second->max_m >= max_m) return;
  auto prep = std::make_unique<Prepared>();
  prep->problem = p;
  prep->max_m = max_m;
  for (int64_t bucket : m_buckets(max_m)) {
    KernelSpec spec{p, heuristic_default(p, dev_.target, bucket), dev_.target.arch};
    const LaunchShape s = launch_shape(spec, std::min(bucket, max_m));
    if (s.grid[1] > 65535)
      throw ApiError(I8GEMM_ERROR_UNSUPPORTED, "i8gemm_prepare",
                     fmt::format("max_m={} needs more than 65535 row blocks", max_m));
    prep->buckets.emplace_back(bucket, &load(spec));
  }
  ensure_utility();
  prepared_[id] = std::move(prep);
}

std::string Engine::kernel_for(const GemmProblem& p, int64_t m) const {
  std::shared_lock lock(mu_);
  auto it = prepared_.find(problem_id(p));
  if (it == prepared_.end()) return {};
  for (const auto& [bucket, k] : it->second->buckets)
    if (m <= bucket) return k->spec.name();
  return {};
}

void Engine::check_stream(CUstream stream) const {
  if (!stream) return;
  CUcontext c = nullptr;
  if (driver().cuStreamGetCtx(stream, &c) != CUDA_SUCCESS)
    throw ApiError(I8GEMM_ERROR_INVALID_ARGUMENT, "i8gemm_run", "the stream is not a valid CUDA stream");
  if (c != ctx_)
    throw ApiError(I8GEMM_ERROR_INVALID_ARGUMENT, "i8gemm_run",
                   fmt::format("the stream belongs to another context than device {}'s", dev_.ordinal));
}

void Engine::check_pointer(const void* p, size_t align, const char* what) const {
  if (!p)
    throw ApiError(I8GEMM_ERROR_INVALID_ARGUMENT, "i8gemm_run", fmt::format("{} is null", what));
  if (reinterpret_cast<uintptr_t>(p) % align != 0)
    throw ApiError(I8GEMM_ERROR_INVALID_ARGUMENT, "i8gemm_run",
                   fmt::format("{} is not {}-byte aligned, as the chosen kernel's loads need", what, align));
  int ordinal = -1;
  if (driver().cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                                     reinterpret_cast<CUdeviceptr>(p)) != CUDA_SUCCESS)
    throw ApiError(I8GEMM_ERROR_INVALID_ARGUMENT, "i8gemm_run",
                   fmt::format("{} is not a CUDA device pointer", what));
  if (ordinal != dev_.ordinal)
    throw ApiError(I8GEMM_ERROR_INVALID_ARGUMENT, "i8gemm_run",
                   fmt::format("{} lives on device {}, the context is on device {}", what, ordinal,
                               dev_.ordinal));
}

void Engine::run(const GemmProblem& p, const I8gArgs& a, CUstream stream) const {
  std::shared_lock lock(mu_);
  auto it = prepared_.find(problem_id(p));
  if (it == prepared_.end()) {
    CUstreamCaptureStatus cs = CU_STREAM_CAPTURE_STATUS_NONE;
    driver().cuStreamIsCapturing(stream, &cs);
    throw ApiError(I8GEMM_ERROR_NOT_PREPARED, "i8gemm_run",
                   fmt::format("problem {} was not prepared{}; call i8gemm_prepare first, before any "
                               "graph capture", p.key(),
                               cs == CU_STREAM_CAPTURE_STATUS_ACTIVE ? " (the stream is capturing)" : ""));
  }
  const Prepared& prep = *it->second;
  if (a.m < 0 || a.m > prep.max_m)
    throw ApiError(I8GEMM_ERROR_INVALID_ARGUMENT, "i8gemm_run",
                   fmt::format("m={} is outside [0, {}] (the max_m it was prepared for)", a.m, prep.max_m));
  if (a.m == 0) return;
  const Loaded* k = nullptr;
  for (const auto& [bucket, l] : prep.buckets)
    if (a.m <= bucket) { k = l; break; }
  const int vec = required_alignment(k->spec.config);
  check_stream(stream);
  check_pointer(a.x, size_t(vec), "x");
  check_pointer(a.w, size_t(vec), "w");
  check_pointer(a.out, p.out == OutType::bf16 || p.out == OutType::f16 ? 2 : 4, "out");
  if (p.out != OutType::i32) {
    check_pointer(a.x_scale, 4, "x_scale");
    check_pointer(a.w_scale, 4, "w_scale");
  }
  if (p.bias) check_pointer(a.bias, 4, "bias");
  if (p.asymmetric) {
    check_pointer(a.x_zero_point, 4, "x_zero_point");
    check_pointer(a.w_colsum, 4, "w_colsum");
  }
  CurrentContext cc(ctx_);
  I8gArgs args = a;
  args.n = p.n;
  args.k = p.k;
  args.workspace = nullptr;
  const LaunchShape s = launch_shape(k->spec, a.m);
  void* params[] = {&args};
  check_cu(driver().cuLaunchKernel(k->fn, s.grid[0], s.grid[1], s.grid[2], s.block[0], s.block[1],
                                   s.block[2], s.dynamic_smem, stream, params, nullptr),
           "cuLaunchKernel");
}

void Engine::weight_colsum(const GemmProblem& p, const int8_t* w, int32_t* colsum, CUstream stream) {
  if (std::string why = p.invalid_reason(); !why.empty())
    throw ApiError(I8GEMM_ERROR_INVALID_ARGUMENT, "i8gemm_weight_colsum", why);
  {
    std::unique_lock lock(mu_);
    if (!utility_) {
      CUstreamCaptureStatus cs = CU_STREAM_CAPTURE_STATUS_NONE;
      driver().cuStreamIsCapturing(stream, &cs);
      if (cs != CU_STREAM_CAPTURE_STATUS_NONE)
        throw ApiError(I8GEMM_ERROR_NOT_PREPARED, "i8gemm_weight_colsum",
                       "the utility kernels are not loaded and the stream is capturing; call i8gemm_prepare first");
      CurrentContext cc(ctx_);
      ensure_utility();
    }
  }
  check_stream(stream);
  check_pointer(w, 1, "w");
  check_pointer(colsum, 4, "colsum");
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
    throw ApiError(I8GEMM_ERROR_INVALID_ARGUMENT, "i8gemm_quantize",
                   fmt::format("bad quantize arguments (m={}, k={}, in_type={})", q.m, q.k, q.in_type));
  {
    std::unique_lock lock(mu_);
    if (!utility_) {
      CUstreamCaptureStatus cs = CU_STREAM_CAPTURE_STATUS_NONE;
      driver().cuStreamIsCapturing(stream, &cs);
      if (cs != CU_STREAM_CAPTURE_STATUS_NONE)
        throw ApiError(I8GEMM_ERROR_NOT_PREPARED, "i8gemm_quantize",
                       "the utility kernels are not loaded and the stream is capturing; call i8gemm_prepare first");
      CurrentContext cc(ctx_);
      ensure_utility();
    }
  }
  if (q.m == 0) return;
  check_stream(stream);
  const size_t in_size = q.in_type == 2 ? 4 : 2;
  check_pointer(q.x, in_size, "x");
  check_pointer(q.x_q, 1, "x_q");
  check_pointer(q.scale, 4, "scale");
  if (q.asymmetric) check_pointer(q.zero_point, 4, "zero_point");
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

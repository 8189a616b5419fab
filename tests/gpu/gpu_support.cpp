#include "tests/gpu/gpu_support.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>
#include <mutex>

#include "cache/cache.hpp"
#include "generator/problem_enums.hpp"
#include "runtime/compile/compiler.hpp"
#include "runtime/serve/engine.hpp"

namespace i8g::gputest {
namespace {

struct Shared {
  std::mutex mu;
  i8gemm_context* ctx = nullptr;
  std::string dir;  // temp dir we made (removed at exit), or empty
  std::string path;
};
Shared& shared() {
  static Shared s;
  return s;
}
uint32_t g_seed = 0;

class SharedContextEnv : public ::testing::Environment {
 public:
  void TearDown() override {
    Shared& s = shared();
    std::lock_guard lock(s.mu);
    if (s.ctx) i8gemm_destroy(s.ctx);
    s.ctx = nullptr;
    if (!s.dir.empty()) {
      std::error_code ec;
      std::filesystem::remove_all(s.dir, ec);
    }
  }
};
[[maybe_unused]] ::testing::Environment* const g_env =
    ::testing::AddGlobalTestEnvironment(new SharedContextEnv);

}  // namespace

std::string test_cache_path() {
  Shared& s = shared();
  std::lock_guard lock(s.mu);
  if (s.path.empty()) {
    if (const char* env = std::getenv("I8GEMM_TEST_CACHE"); env && *env) {
      s.path = env;
    } else {
      std::string tmpl = (std::filesystem::temp_directory_path() / "i8g_gpu_test_XXXXXX").string();
      if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
      s.dir = tmpl;
      s.path = tmpl + "/cache.sqlite";
    }
  }
  return s.path;
}

i8gemm_context* shared_ctx() {
  const std::string path = test_cache_path();
  Shared& s = shared();
  std::lock_guard lock(s.mu);
  if (!s.ctx) {
    const i8gemm_status st = i8gemm_create(0, path.c_str(), &s.ctx);
    if (st != I8GEMM_SUCCESS)
      throw std::runtime_error(fmt::format("i8gemm_create: {}: {}", i8gemm_status_string(st),
                                           i8gemm_last_error()));
  }
  return s.ctx;
}

uint32_t current_seed() { return g_seed; }

void GpuTest::SetUp() {
  I8G_REQUIRE_GPU();
  const char* env = std::getenv("I8GEMM_TEST_SEED");
  seed_ = env && *env ? uint32_t(std::strtoul(env, nullptr, 0)) : std::random_device{}();
  g_seed = seed_;
  rng_.seed(seed_);
  trace_.emplace(__FILE__, __LINE__,
                 fmt::format("seed {} (rerun with I8GEMM_TEST_SEED={} to reproduce)", seed_, seed_));
  RecordProperty("seed", std::to_string(seed_));
  I8G_CU(cuDeviceGet(&dev_, 0));
  I8G_CU(cuDevicePrimaryCtxRetain(&ctx_, dev_));
  I8G_CU(cuCtxSetCurrent(ctx_));
}

void GpuTest::TearDown() {
  if (ctx_) {
    driver().cuCtxSynchronize();
    driver().cuDevicePrimaryCtxRelease(dev_);
  }
  trace_.reset();
}

// ---- problems and operands ------------------------------------------------------------------

i8gemm_problem make_problem(int64_t n, int64_t k, i8gemm_weight_layout layout, i8gemm_scale act,
                            i8gemm_scale wsc, i8gemm_out out, bool bias, bool asym) {
  i8gemm_problem p{};
  p.n = n;
  p.k = k;
  p.weight_layout = layout;
  p.act_scale = act;
  p.weight_scale = wsc;
  p.out = out;
  p.has_bias = bias ? 1 : 0;
  p.asymmetric = asym ? 1 : 0;
  return p;
}

GemmProblem to_gemm_problem(const i8gemm_problem& p) {
  GemmProblem g;
  g.n = p.n;
  g.k = p.k;
  // The tests' problems hold valid C values; an invalid one falls back to the default.
  g.layout = from_c_value<WeightLayout>(p.weight_layout).value_or(g.layout);
  g.act_scale = from_c_value<ActScale>(p.act_scale).value_or(g.act_scale);
  g.weight_scale = from_c_value<WeightScale>(p.weight_scale).value_or(g.weight_scale);
  g.out = from_c_value<OutType>(p.out).value_or(g.out);
  g.bias = p.has_bias != 0;
  g.asymmetric = p.asymmetric != 0;
  return g;
}

std::string describe(const i8gemm_problem& p) { return to_gemm_problem(p).key(); }

std::vector<int8_t> random_i8(std::mt19937& rng, size_t n, int lo, int hi) {
  std::uniform_int_distribution<int> d(lo, hi);
  std::vector<int8_t> v(n);
  for (auto& e : v) e = int8_t(d(rng));
  return v;
}

std::vector<float> random_f32(std::mt19937& rng, size_t n, float lo, float hi) {
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (auto& e : v) e = d(rng);
  return v;
}

std::vector<int32_t> random_i32(std::mt19937& rng, size_t n, int lo, int hi) {
  std::uniform_int_distribution<int> d(lo, hi);
  std::vector<int32_t> v(n);
  for (auto& e : v) e = d(rng);
  return v;
}

HostOperands random_operands(const i8gemm_problem& p, int64_t m, std::mt19937& rng) {
  HostOperands h;
  h.m = m;
  const bool tok = p.act_scale == I8GEMM_SCALE_PER_TOKEN;
  h.x = random_i8(rng, size_t(m * p.k), p.asymmetric ? -128 : -127, 127);
  h.w = random_i8(rng, size_t(p.n * p.k));
  h.x_scale = random_f32(rng, tok ? size_t(m) : 1, 1e-3f, 1e-2f);
  h.w_scale = random_f32(rng, p.weight_scale == I8GEMM_SCALE_PER_CHANNEL ? size_t(p.n) : 1, 1e-3f, 1e-2f);
  if (p.has_bias) h.bias = random_f32(rng, size_t(p.n), -4.0f, 4.0f);
  if (p.asymmetric) h.x_zero_point = random_i32(rng, tok ? size_t(m) : 1, -128, 127);
  return h;
}

std::vector<uint8_t> reference_bytes(const i8gemm_problem& p, const HostOperands& h) {
  GemmProblem g = to_gemm_problem(p);
  if (g.layout == WeightLayout::kn && h.m * p.n * p.k > (int64_t(1) << 24)) {
    HostOperands t = h;
    for (int64_t k = 0; k < p.k; ++k)
      for (int64_t n = 0; n < p.n; ++n) t.w[size_t(n * p.k + k)] = h.w[size_t(k * p.n + n)];
    g.layout = WeightLayout::nk;
    return reference_output(g, t);
  }
  return reference_output(g, h);
}

namespace {
std::string decode(i8gemm_out o, const uint8_t* b) {
  switch (o) {
    case I8GEMM_OUT_BF16: { uint16_t v; std::memcpy(&v, b, 2); return fmt::format("{:g} (0x{:04x})", bf16_to_f32(v), v); }
    case I8GEMM_OUT_F16: { uint16_t v; std::memcpy(&v, b, 2); return fmt::format("{:g} (0x{:04x})", f16_to_f32(v), v); }
    case I8GEMM_OUT_F32: { float v; uint32_t u; std::memcpy(&v, b, 4); std::memcpy(&u, b, 4); return fmt::format("{:.9g} (0x{:08x})", v, u); }
    default: { int32_t v; std::memcpy(&v, b, 4); return std::to_string(v); }
  }
}
}  // namespace

std::string compare_outputs(const i8gemm_problem& p, int64_t m, const std::vector<uint8_t>& got,
                            const std::vector<uint8_t>& want) {
  const size_t es = out_element_size(to_gemm_problem(p).out);
  if (got.size() != want.size() || want.size() != size_t(m * p.n) * es)
    return fmt::format("size mismatch: got {} bytes, want {}", got.size(), want.size());
  if (std::memcmp(got.data(), want.data(), got.size()) == 0) return {};
  std::vector<uint8_t> poison(es, kPoison);
  size_t diff = 0, unwritten = 0;
  std::string first;
  for (int64_t i = 0; i < m * p.n; ++i) {
    const uint8_t* g = got.data() + size_t(i) * es;
    const uint8_t* w = want.data() + size_t(i) * es;
    if (std::memcmp(g, w, es) == 0) continue;
    ++diff;
    if (std::memcmp(g, poison.data(), es) == 0) ++unwritten;
    if (diff <= 8)
      first += fmt::format("\n  (m={}, n={}): got {}, want {}", i / p.n, i % p.n, decode(p.out, g),
                           decode(p.out, w));
  }
  return fmt::format("{} M={}: {} of {} elements differ ({} still hold the 0x{:02X} poison, "
                     "i.e. were never written); first ones:{}",
                     describe(p), m, diff, m * p.n, unwritten, kPoison, first);
}

// ---- DeviceGemm -----------------------------------------------------------------------------

DeviceGemm::DeviceGemm(i8gemm_context* ctx, const i8gemm_problem& p, HostOperands& h, const Stream& s)
    : x(h.x), w(h.w), xs(h.x_scale), ws(h.w_scale), bias(h.bias), zp(h.x_zero_point),
      colsum(size_t(p.n) * 4), out(size_t(h.m * p.n) * out_element_size(to_gemm_problem(p).out)),
      p_(p), m_(h.m), out_size_(out.bytes()) {
  if (!p.asymmetric) return;
  const i8gemm_status st = i8gemm_weight_colsum(ctx, &p, w.as<int8_t>(), colsum.as<int32_t>(), s.handle());
  if (st != I8GEMM_SUCCESS)
    throw std::runtime_error(fmt::format("i8gemm_weight_colsum: {}", i8gemm_last_error()));
  s.sync();
  const std::vector<int32_t> gpu = colsum.download<int32_t>(size_t(p.n));
  h.w_colsum = weight_colsum(to_gemm_problem(p), h.w);
  EXPECT_EQ(gpu, h.w_colsum) << "i8gemm_weight_colsum differs from the CPU's, " << describe(p);
}

i8gemm_args DeviceGemm::args() const {
  i8gemm_args a{};
  a.m = m_;
  a.x = x.as<int8_t>();
  a.w = w.as<int8_t>();
  a.x_scale = xs.as<float>();
  a.w_scale = ws.as<float>();
  a.bias = p_.has_bias ? bias.as<float>() : nullptr;
  a.x_zero_point = p_.asymmetric ? zp.as<int32_t>() : nullptr;
  a.w_colsum = p_.asymmetric ? colsum.as<int32_t>() : nullptr;
  a.out = out.as<void>();
  return a;
}

void DeviceGemm::poison_out(const Stream& s) { I8G_CU(cuMemsetD8Async(out.ptr(), kPoison, out_size_, s.get())); }

std::vector<uint8_t> DeviceGemm::out_bytes() const { return out.download<uint8_t>(out_size_); }

void DeviceGemm::update(const HostOperands& h) {
  x.upload(h.x);
  xs.upload(h.x_scale);
  ws.upload(h.w_scale);
  bias.upload(h.bias);
  zp.upload(h.x_zero_point);
}

void put_winner(const std::string& cache_path, const i8gemm_problem& p, int64_t m_bucket,
                const std::string& candidate, const std::string& generator_hash) {
  const DeviceInfo dev = query_device(0);
  const std::string cv = make_compiler(dev.target)->version();
  cache::Cache c(cache_path, cache::Cache::Mode::read_write);
  cache::Winner w;
  w.key = tune_key(dev, cv, to_gemm_problem(p), m_bucket);
  if (!generator_hash.empty()) w.key.generator_hash = generator_hash;
  w.candidate = candidate;
  w.time_us = 1.0;
  w.baseline_us = 1.0;
  w.speedup = 1.0;
  c.put_winner(w);
}

void put_cublaslt_winner(const std::string& cache_path, const i8gemm_problem& p, int64_t m_bucket) {
  put_winner(cache_path, p, m_bucket, "cublaslt:algo=0");
}

std::string rerun_with_new_activations(const i8gemm_problem& p, int64_t m, const HostOperands& h, DeviceGemm& d,
                                       const Stream& s, std::mt19937& rng, const std::function<void()>& launch) {
  HostOperands next = random_operands(p, m, rng);
  next.w = h.w;
  next.w_scale = h.w_scale;
  d.update(next);
  d.poison_out(s);
  launch();
  s.sync();
  return compare_outputs(p, m, d.out_bytes(), reference_bytes(p, next));
}

std::string run_and_compare(i8gemm_context* ctx, const i8gemm_problem& p, int64_t m, std::mt19937& rng,
                            HostOperands* operands) {
  const i8gemm_status pst = i8gemm_prepare(ctx, &p, m);
  if (pst != I8GEMM_SUCCESS)
    return fmt::format("i8gemm_prepare({}, max_m={}): {}: {}", describe(p), m, i8gemm_status_string(pst),
                       i8gemm_last_error());
  HostOperands h = operands ? *operands : random_operands(p, m, rng);
  Stream s;
  DeviceGemm d(ctx, p, h, s);
  d.poison_out(s);
  const i8gemm_args a = d.args();
  const i8gemm_status st = i8gemm_run(ctx, &p, &a, s.handle());
  if (st != I8GEMM_SUCCESS)
    return fmt::format("i8gemm_run({}, m={}): {}: {}", describe(p), m, i8gemm_status_string(st),
                       i8gemm_last_error());
  s.sync();
  return compare_outputs(p, m, d.out_bytes(), reference_bytes(p, h));
}

}  // namespace i8g::gputest

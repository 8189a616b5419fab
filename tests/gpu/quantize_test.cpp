// i8gemm_quantize against docs/quantization.md on the CPU (quantize_host.hpp): bf16/f16/f32
// inputs, per token and per tensor, symmetric and asymmetric; q, scales and zero points must
// be exactly equal.
#include <fmt/format.h>

#include "tests/gpu/gpu_support.hpp"
#include "tests/gpu/quantize_host.hpp"

namespace i8g::gputest {
namespace {

struct QCase {
  int in_type;  // i8gemm_in
  bool per_token;
  bool asym;
};

const char* kInName[] = {"bf16", "f16", "f32"};

// Quantizes raw on the device; returns the report of differences (empty when exact).
std::string quantize_and_compare(const std::vector<uint8_t>& raw, int in_type, int64_t m, int64_t k,
                                 bool per_token, bool asym) {
  const HostQuantized want = host_quantize(in_type, raw, m, k, per_token, asym);
  const size_t groups = per_token ? size_t(m) : 1;
  Stream s;
  DevBuf dx(raw), dq(size_t(m * k)), ds(groups * 4), dz(groups * 4);
  dq.fill(kPoison);
  ds.fill(kPoison);
  dz.fill(kPoison);
  i8gemm_quantize_args a{};
  a.m = m;
  a.k = k;
  a.in_type = static_cast<i8gemm_in>(in_type);
  a.x = dx.as<void>();
  a.granularity = per_token ? I8GEMM_SCALE_PER_TOKEN : I8GEMM_SCALE_PER_TENSOR;
  a.asymmetric = asym;
  a.x_q = dq.as<int8_t>();
  a.scale = ds.as<float>();
  a.zero_point = asym ? dz.as<int32_t>() : nullptr;
  const i8gemm_status st = i8gemm_quantize(shared_ctx(), &a, s.handle());
  if (st != I8GEMM_SUCCESS) return fmt::format("i8gemm_quantize: {}", i8gemm_last_error());
  s.sync();
  std::string report;
  const std::vector<int8_t> q = dq.download<int8_t>(size_t(m * k));
  const std::vector<float> sc = ds.download<float>(groups);
  size_t bad = 0;
  for (size_t i = 0; i < q.size(); ++i)
    if (q[i] != want.q[i] && ++bad <= 6)
      report += fmt::format("\n  q[m={}, k={}] = {}, want {} (x = {:.9g})", i / size_t(k), i % size_t(k),
                            int(q[i]), int(want.q[i]), input_value(in_type, raw, i));
  if (bad) report += fmt::format("\n  {} of {} q values differ", bad, q.size());
  for (size_t g = 0; g < groups; ++g)
    if (std::memcmp(&sc[g], &want.scale[g], 4) != 0)
      report += fmt::format("\n  scale[{}] = {:.9g}, want {:.9g}", g, sc[g], want.scale[g]);
  if (asym) {
    const std::vector<int32_t> z = dz.download<int32_t>(groups);
    for (size_t g = 0; g < groups; ++g)
      if (z[g] != want.zero_point[g])
        report += fmt::format("\n  zero_point[{}] = {}, want {}", g, z[g], want.zero_point[g]);
  }
  return report;
}

// Gaussian rows whose magnitude varies by 4 orders across rows, with a few outliers.
std::vector<float> activation_like(std::mt19937& rng, int64_t m, int64_t k) {
  std::normal_distribution<float> g(0.0f, 1.0f);
  std::uniform_real_distribution<float> mag(-2.0f, 2.0f);
  std::uniform_int_distribution<int64_t> pick(0, k - 1);
  std::vector<float> v(size_t(m * k));
  for (int64_t r = 0; r < m; ++r) {
    const float rs = std::pow(10.0f, mag(rng));
    for (int64_t c = 0; c < k; ++c) v[size_t(r * k + c)] = g(rng) * rs;
    v[size_t(r * k + pick(rng))] = 8.0f * rs;  // an outlier sets the row's range
  }
  return v;
}

class QuantizeExact : public GpuTest, public ::testing::WithParamInterface<QCase> {};

TEST_P(QuantizeExact, MatchesDocsFormulasExactly) {
  const QCase c = GetParam();
  const i8gemm_problem prep = make_problem(64, 64);
  I8G_OK(i8gemm_prepare(shared_ctx(), &prep, 1));  // loads the utility kernels
  for (auto [m, k] : {std::pair<int64_t, int64_t>{37, 1000}, {1, 4096}, {5, 3}, {300, 2560}}) {
    SCOPED_TRACE(fmt::format("{} m={} k={}", kInName[c.in_type], m, k));
    const std::vector<uint8_t> raw = encode_input(c.in_type, activation_like(rng_, m, k));
    const std::string r = quantize_and_compare(raw, c.in_type, m, k, c.per_token, c.asym);
    EXPECT_TRUE(r.empty()) << r;
  }
}

std::vector<QCase> q_cases() {
  std::vector<QCase> out;
  for (int in : {0, 1, 2})
    for (bool tok : {true, false})
      for (bool asym : {false, true}) out.push_back({in, tok, asym});
  return out;
}

INSTANTIATE_TEST_SUITE_P(All, QuantizeExact, ::testing::ValuesIn(q_cases()),
                         [](const ::testing::TestParamInfo<QCase>& i) {
                           return fmt::format("{}_{}_{}", kInName[i.param.in_type],
                                              i.param.per_token ? "per_token" : "per_tensor",
                                              i.param.asym ? "asym" : "sym");
                         });

class QuantizeEdges : public GpuTest {
 protected:
  void SetUp() override {
    GpuTest::SetUp();
    if (IsSkipped()) return;
    const i8gemm_problem prep = make_problem(64, 64);
    I8G_OK(i8gemm_prepare(shared_ctx(), &prep, 1));
  }
};

// s = 127/127 = 1 exactly, so x/s are the halfway values themselves: ties go to even.
TEST_F(QuantizeEdges, HalfwayValuesRoundToEven) {
  const std::vector<float> row = {127.0f, 0.5f, 1.5f, 2.5f, -2.5f, -0.5f, 126.5f, -126.5f, 3.5f, -3.5f};
  const std::vector<int8_t> want = {127, 0, 2, 2, -2, 0, 126, -126, 4, -4};
  for (bool tok : {true, false}) {
    const std::string r = quantize_and_compare(encode_input(2, row), 2, 1, int64_t(row.size()), tok, false);
    EXPECT_TRUE(r.empty()) << r;
    EXPECT_EQ(host_quantize(2, encode_input(2, row), 1, int64_t(row.size()), tok, false).q, want)
        << "the CPU model itself must round half to even";
  }
}

// An all-zero row: s = 1 and q = 0 (symmetric), z = -128 (asymmetric, so that x~ = 0).
TEST_F(QuantizeEdges, ZeroRowGetsScaleOne) {
  std::vector<float> x = activation_like(rng_, 3, 512);
  std::fill(x.begin() + 512, x.begin() + 1024, 0.0f);  // row 1
  for (int in : {0, 1, 2})
    for (bool asym : {false, true}) {
      SCOPED_TRACE(fmt::format("{} asym={}", kInName[in], asym));
      const HostQuantized h = host_quantize(in, encode_input(in, x), 3, 512, true, asym);
      EXPECT_EQ(h.scale[1], 1.0f);
      const std::string r = quantize_and_compare(encode_input(in, x), in, 3, 512, true, asym);
      EXPECT_TRUE(r.empty()) << r;
    }
}

// Rows that do not straddle zero: the range is widened to include 0 (see quantize_host.hpp).
TEST_F(QuantizeEdges, OneSignedRowsUseARangeThatIncludesZero) {
  std::uniform_real_distribution<float> d(1.0f, 3.0f);
  std::vector<float> x(4 * 256);
  for (size_t i = 0; i < x.size(); ++i) x[i] = (i / 256) % 2 ? -d(rng_) : d(rng_);
  for (bool tok : {true, false})
    for (bool asym : {false, true}) {
      SCOPED_TRACE(fmt::format("per_token={} asym={}", tok, asym));
      const std::string r = quantize_and_compare(encode_input(2, x), 2, 4, 256, tok, asym);
      EXPECT_TRUE(r.empty()) << r;
    }
}

// Largest finite f16 and bf16 magnitudes: nothing overflows to inf/NaN in s or q.
TEST_F(QuantizeEdges, LargestFiniteInputsQuantizeCleanly) {
  for (int in : {0, 1, 2}) {
    const float big = in == 1 ? 65504.0f : in == 0 ? 3.3895314e38f : 3.4028235e38f;
    std::vector<float> x = activation_like(rng_, 2, 300);
    x[7] = big;
    x[300 + 9] = -big;
    for (bool asym : {false, true}) {
      SCOPED_TRACE(fmt::format("{} asym={}", kInName[in], asym));
      for (float s : host_quantize(in, encode_input(in, x), 2, 300, true, asym).scale)
        EXPECT_TRUE(std::isfinite(s) && s > 0.0f) << s;
      const std::string r = quantize_and_compare(encode_input(in, x), in, 2, 300, true, asym);
      EXPECT_TRUE(r.empty()) << r;
    }
  }
}

}  // namespace
}  // namespace i8g::gputest

// Correctness through the C ABI, bit for bit against i8g::reference_output: every problem
// option, M from 1 to 3072, N and K tails, extreme int8 values and the largest K. The output
// is poisoned (0xA5) before each run, so an element the kernel never wrote is reported as such.
#include <fmt/format.h>

#include "tests/gpu/gpu_support.hpp"

namespace i8g::gputest {
namespace {

class GemmCorrect : public GpuTest {};

// ---- every option on two small shapes --------------------------------------------------------

std::vector<i8gemm_problem> option_matrix() {
  std::vector<i8gemm_problem> out;
  for (auto [n, k] : {std::pair<int64_t, int64_t>{100, 68}, {64, 4095}})
    for (auto layout : {I8GEMM_WEIGHT_NK, I8GEMM_WEIGHT_KN})
      for (auto act : {I8GEMM_SCALE_PER_TENSOR, I8GEMM_SCALE_PER_TOKEN})
        for (auto wsc : {I8GEMM_SCALE_PER_TENSOR, I8GEMM_SCALE_PER_CHANNEL})
          for (auto o : {I8GEMM_OUT_BF16, I8GEMM_OUT_F16, I8GEMM_OUT_F32, I8GEMM_OUT_I32})
            for (bool bias : {false, true})
              for (bool asym : {false, true}) {
                if (bias && o == I8GEMM_OUT_I32) continue;  // rejected by design
                out.push_back(make_problem(n, k, layout, act, wsc, o, bias, asym));
              }
  return out;
}

class GemmOptions : public GemmCorrect, public ::testing::WithParamInterface<i8gemm_problem> {};

TEST_P(GemmOptions, MatchesReferenceBitForBitForEveryOption) {
  const i8gemm_problem p = GetParam();
  for (int64_t m : {int64_t(1), int64_t(3)}) {
    SCOPED_TRACE(fmt::format("{} M={}", describe(p), m));
    const std::string r = run_and_compare(shared_ctx(), p, m, rng_);
    EXPECT_TRUE(r.empty()) << r;
  }
}

INSTANTIATE_TEST_SUITE_P(AllOptions, GemmOptions, ::testing::ValuesIn(option_matrix()),
                         [](const ::testing::TestParamInfo<i8gemm_problem>& i) { return describe(i.param); });

// ---- M: decode sizes, bucket edges, tails, prefill -------------------------------------------

struct MCase {
  int64_t m;
  i8gemm_weight_layout layout;
};

class GemmRows : public GemmCorrect, public ::testing::WithParamInterface<MCase> {};

TEST_P(GemmRows, MatchesReferenceForEveryRowCount) {
  const auto [m, layout] = GetParam();
  const i8gemm_problem p = make_problem(256, 512, layout);
  const std::string r = run_and_compare(shared_ctx(), p, m, rng_);
  EXPECT_TRUE(r.empty()) << r;
}

std::vector<MCase> m_cases() {
  std::vector<MCase> out;
  for (auto layout : {I8GEMM_WEIGHT_NK, I8GEMM_WEIGHT_KN})
    for (int64_t m : {1, 2, 3, 4, 8, 16, 17, 33, 65, 127, 129, 1000, 3072}) out.push_back({m, layout});
  return out;
}

INSTANTIATE_TEST_SUITE_P(M, GemmRows, ::testing::ValuesIn(m_cases()),
                         [](const ::testing::TestParamInfo<MCase>& i) {
                           return fmt::format("m{}_{}", i.param.m, i.param.layout == I8GEMM_WEIGHT_NK ? "nk" : "kn");
                         });

// A problem prepared once for a large max_m must serve every smaller M with the right bucket.
TEST_F(GemmCorrect, OnePrepareServesEveryMUpToMaxM) {
  const i8gemm_problem p = make_problem(192, 256, I8GEMM_WEIGHT_NK, I8GEMM_SCALE_PER_TOKEN,
                                        I8GEMM_SCALE_PER_CHANNEL, I8GEMM_OUT_F32);
  I8G_OK(i8gemm_prepare(shared_ctx(), &p, 600));
  for (int64_t m : {600, 1, 513, 64, 2, 129, 31}) {
    const std::string r = run_and_compare(shared_ctx(), p, m, rng_);
    EXPECT_TRUE(r.empty()) << r;
  }
}

// ---- N and K tails ---------------------------------------------------------------------------

struct TailCase {
  int64_t n, k;
  i8gemm_weight_layout layout;
};

class GemmTails : public GemmCorrect, public ::testing::WithParamInterface<TailCase> {};

TEST_P(GemmTails, MatchesReferenceWhenNAndKAreNotTileMultiples) {
  const auto [n, k, layout] = GetParam();
  for (i8gemm_out o : {I8GEMM_OUT_BF16, I8GEMM_OUT_F32}) {
    const i8gemm_problem p =
        make_problem(n, k, layout, I8GEMM_SCALE_PER_TOKEN, I8GEMM_SCALE_PER_CHANNEL, o, /*bias=*/true);
    const std::string r = run_and_compare(shared_ctx(), p, 7, rng_);
    EXPECT_TRUE(r.empty()) << r;
  }
}

std::vector<TailCase> tail_cases() {
  std::vector<TailCase> out;
  for (auto layout : {I8GEMM_WEIGHT_NK, I8GEMM_WEIGHT_KN})
    for (int64_t n : {1, 3, 37, 1000})
      for (int64_t k : {1, 3, 17, 68, 4095}) out.push_back({n, k, layout});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Tails, GemmTails, ::testing::ValuesIn(tail_cases()),
                         [](const ::testing::TestParamInfo<TailCase>& i) {
                           return fmt::format("n{}_k{}_{}", i.param.n, i.param.k,
                                              i.param.layout == I8GEMM_WEIGHT_NK ? "nk" : "kn");
                         });

// ---- [K,N] weights on tensor cores: N and K multiples of 16, not of the tile ----------------
// mma_sync takes [K,N] weights when N % 16 == 0 and K % 16 == 0 (the tails above are mostly
// simt_dp4a's): partial N tiles (48, 80, 1040 against bn 32..256), partial K tiles (16, 80,
// 4080 against bk 64/128), M tails, and four epilogue option sets over the remapped columns.

struct KnCase {
  int64_t n, k;
};

class GemmKnTensorCore : public GemmCorrect, public ::testing::WithParamInterface<KnCase> {};

TEST_P(GemmKnTensorCore, MatchesReferenceWithNKAndMTails) {
  const auto [n, k] = GetParam();
  const i8gemm_problem problems[] = {
      make_problem(n, k, I8GEMM_WEIGHT_KN, I8GEMM_SCALE_PER_TOKEN, I8GEMM_SCALE_PER_CHANNEL,
                   I8GEMM_OUT_BF16, /*bias=*/true),
      make_problem(n, k, I8GEMM_WEIGHT_KN, I8GEMM_SCALE_PER_TENSOR, I8GEMM_SCALE_PER_TENSOR,
                   I8GEMM_OUT_F16, false, /*asym=*/true),
      make_problem(n, k, I8GEMM_WEIGHT_KN, I8GEMM_SCALE_PER_TOKEN, I8GEMM_SCALE_PER_CHANNEL,
                   I8GEMM_OUT_F32, true, true),
      make_problem(n, k, I8GEMM_WEIGHT_KN, I8GEMM_SCALE_PER_TOKEN, I8GEMM_SCALE_PER_TENSOR,
                   I8GEMM_OUT_I32, false, true)};
  for (const i8gemm_problem& p : problems)
    for (int64_t m : {1, 17, 130}) {
      SCOPED_TRACE(fmt::format("{} M={}", describe(p), m));
      const std::string r = run_and_compare(shared_ctx(), p, m, rng_);
      EXPECT_TRUE(r.empty()) << r;
    }
}

std::vector<KnCase> kn_tensor_core_cases() {
  std::vector<KnCase> out;
  for (int64_t n : {48, 80, 1040})
    for (int64_t k : {16, 80, 4080}) out.push_back({n, k});
  return out;
}

INSTANTIATE_TEST_SUITE_P(KnTails, GemmKnTensorCore, ::testing::ValuesIn(kn_tensor_core_cases()),
                         [](const ::testing::TestParamInfo<KnCase>& i) {
                           return fmt::format("n{}_k{}", i.param.n, i.param.k);
                         });

// ---- extreme values --------------------------------------------------------------------------

// x[m,k] and w(n,k) from a pattern; w is laid out per the problem.
HostOperands patterned(const i8gemm_problem& p, int64_t m, std::mt19937& rng,
                       int (*xf)(int64_t, int64_t), int (*wf)(int64_t, int64_t)) {
  HostOperands h = random_operands(p, m, rng);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t k = 0; k < p.k; ++k) h.x[size_t(i * p.k + k)] = int8_t(xf(i, k));
  for (int64_t n = 0; n < p.n; ++n)
    for (int64_t k = 0; k < p.k; ++k)
      h.w[size_t(p.weight_layout == I8GEMM_WEIGHT_NK ? n * p.k + k : k * p.n + n)] = int8_t(wf(n, k));
  return h;
}

struct Pattern {
  const char* name;
  int (*x)(int64_t, int64_t);
  int (*w)(int64_t, int64_t);
};

const Pattern kPatterns[] = {
    {"x-128_w127", [](int64_t, int64_t) { return -128; }, [](int64_t, int64_t) { return 127; }},
    {"x-128_w-128", [](int64_t, int64_t) { return -128; }, [](int64_t, int64_t) { return -128; }},
    {"x-127_w-127", [](int64_t, int64_t) { return -127; }, [](int64_t, int64_t) { return -127; }},
    {"x127_w127", [](int64_t, int64_t) { return 127; }, [](int64_t, int64_t) { return 127; }},
    {"x-127_w127", [](int64_t, int64_t) { return -127; }, [](int64_t, int64_t) { return 127; }},
    {"alternating_opposite", [](int64_t, int64_t k) { return k % 2 ? 127 : -128; },
     [](int64_t, int64_t k) { return k % 2 ? -128 : 127; }},
    {"alternating_same", [](int64_t, int64_t k) { return k % 2 ? 127 : -128; },
     [](int64_t, int64_t k) { return k % 2 ? 127 : -128; }},
    {"checkerboard", [](int64_t m, int64_t k) { return (m + k) % 2 ? 127 : -128; },
     [](int64_t n, int64_t k) { return (n * 3 + k) % 2 ? -128 : 127; }},
    {"sign_blocks", [](int64_t m, int64_t k) { return (k / 4 + m) % 2 ? -128 : 127; },
     [](int64_t n, int64_t k) { return (k / 16 + n) % 2 ? -127 : 127; }},
};

TEST_F(GemmCorrect, ExtremeInt8ValuesAreExactForEveryLayoutAndOutput) {
  for (const Pattern& pat : kPatterns)
    for (int64_t k : {4096, 4095})
      for (auto layout : {I8GEMM_WEIGHT_NK, I8GEMM_WEIGHT_KN})
        for (i8gemm_out o : {I8GEMM_OUT_I32, I8GEMM_OUT_F32, I8GEMM_OUT_BF16, I8GEMM_OUT_F16}) {
          const i8gemm_problem p = make_problem(67, k, layout, I8GEMM_SCALE_PER_TOKEN,
                                                I8GEMM_SCALE_PER_CHANNEL, o);
          SCOPED_TRACE(fmt::format("pattern {} {}", pat.name, describe(p)));
          HostOperands h = patterned(p, 5, rng_, pat.x, pat.w);
          const std::string r = run_and_compare(shared_ctx(), p, 5, rng_, &h);
          EXPECT_TRUE(r.empty()) << r;
        }
}

TEST_F(GemmCorrect, AsymmetricExtremesAreExact) {
  // |x - z| reaches 255: x = -128 with z = 127, and x = 127 with z = -128.
  for (auto act : {I8GEMM_SCALE_PER_TOKEN, I8GEMM_SCALE_PER_TENSOR})
    for (i8gemm_out o : {I8GEMM_OUT_I32, I8GEMM_OUT_F32}) {
      const i8gemm_problem p = make_problem(40, 4096, I8GEMM_WEIGHT_NK, act, I8GEMM_SCALE_PER_CHANNEL,
                                            o, false, /*asym=*/true);
      HostOperands h = patterned(p, 4, rng_, [](int64_t m, int64_t) { return m % 2 ? 127 : -128; },
                                 [](int64_t n, int64_t) { return n % 3 ? 127 : -128; });
      for (size_t i = 0; i < h.x_zero_point.size(); ++i) h.x_zero_point[i] = i % 2 ? -128 : 127;
      const std::string r = run_and_compare(shared_ctx(), p, 4, rng_, &h);
      EXPECT_TRUE(r.empty()) << r;
    }
}

// The largest K the overflow bound allows: 127*127*133144 and 255*127*66311 both fit in int32.
TEST_F(GemmCorrect, LargestAllowedKDoesNotOverflow) {
  struct Case { int64_t k; bool asym; int x; int z; };
  for (const Case c : {Case{133144, false, 127, 0}, Case{133144, false, -127, 0}, Case{66311, true, -128, 127},
                       Case{66311, true, 127, -128}}) {
    for (auto layout : {I8GEMM_WEIGHT_NK, I8GEMM_WEIGHT_KN}) {
      const i8gemm_problem p = make_problem(9, c.k, layout, I8GEMM_SCALE_PER_TOKEN,
                                            I8GEMM_SCALE_PER_CHANNEL, I8GEMM_OUT_I32, false, c.asym);
      SCOPED_TRACE(fmt::format("{} x={} z={}", describe(p), c.x, c.z));
      HostOperands h = random_operands(p, 2, rng_);
      std::fill(h.x.begin(), h.x.end(), int8_t(c.x));
      std::fill(h.w.begin(), h.w.end(), int8_t(127));
      for (auto& z : h.x_zero_point) z = c.z;
      const std::string r = run_and_compare(shared_ctx(), p, 2, rng_, &h);
      EXPECT_TRUE(r.empty()) << r;
    }
  }
}

// m == 0 is a documented no-op: success, and the output is not touched.
TEST_F(GemmCorrect, ZeroRowsIsANoOpThatWritesNothing) {
  const i8gemm_problem p = make_problem(64, 128);
  I8G_OK(i8gemm_prepare(shared_ctx(), &p, 4));
  HostOperands h = random_operands(p, 4, rng_);
  Stream s;
  DeviceGemm d(shared_ctx(), p, h, s);
  d.poison_out(s);
  i8gemm_args a = d.args();
  a.m = 0;
  I8G_OK(i8gemm_run(shared_ctx(), &p, &a, s.handle()));
  s.sync();
  const std::vector<uint8_t> out = d.out_bytes();
  EXPECT_EQ(std::count(out.begin(), out.end(), kPoison), std::ptrdiff_t(out.size()));
}

}  // namespace
}  // namespace i8g::gputest

// The seed's TP4 serving shapes (N x K = 2560x4096 qkv, 4096x2048 o_proj, 768x4096 gate_up,
// 4096x384 down_proj) at decode and tail M, both weight layouts, bit for bit. M stays at 65 or
// below so that the CPU reference (at most 65*4096*4096 MACs) takes seconds, not minutes.
#include <fmt/format.h>

#include <cstdio>
#include <set>
#include <string>

#include "tests/gpu/gpu_support.hpp"

namespace i8g::gputest {
namespace {

struct Tp4Case {
  const char* name;
  int64_t n, k;
  i8gemm_weight_layout layout;
};

class Tp4Correct : public GpuTest, public ::testing::WithParamInterface<Tp4Case> {};

TEST_P(Tp4Correct, MatchesReferenceAtDecodeAndTailM) {
  const Tp4Case c = GetParam();
  const i8gemm_problem p = make_problem(c.n, c.k, c.layout);  // per token, per channel, bf16
  I8G_OK(i8gemm_prepare(shared_ctx(), &p, 65));
  for (int64_t m : {1, 16, 65}) {
    SCOPED_TRACE(fmt::format("{} M={}", c.name, m));
    const std::string r = run_and_compare(shared_ctx(), p, m, rng_);
    EXPECT_TRUE(r.empty()) << r;
  }
}

std::vector<Tp4Case> tp4_cases() {
  std::vector<Tp4Case> out;
  for (auto layout : {I8GEMM_WEIGHT_KN, I8GEMM_WEIGHT_NK}) {
    out.push_back({"qkv_proj", 2560, 4096, layout});
    out.push_back({"o_proj", 4096, 2048, layout});
    out.push_back({"shared_gate_up_proj", 768, 4096, layout});
    out.push_back({"shared_down_proj", 4096, 384, layout});
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Tp4, Tp4Correct, ::testing::ValuesIn(tp4_cases()),
                         [](const ::testing::TestParamInfo<Tp4Case>& i) {
                           return fmt::format("{}_n{}_k{}_{}", i.param.name, i.param.n, i.param.k,
                                              i.param.layout == I8GEMM_WEIGHT_NK ? "nk" : "kn");
                         });

// The untuned default at prefill M through the C ABI, where it takes wgmma_tma's wide tiles
// (cooperative 128x96, 128x160, 128x192 and ping-pong 64x160 where the width divides N) beside
// the 64/128-wide ones: bit for bit, and the widths it chose are the ones the rule names.
TEST_F(GpuTest, UntunedPrefillDefaultsAreExactWithWideTiles) {
  std::set<std::string> kernels;
  for (auto [n, k] : {std::pair<int64_t, int64_t>{2560, 4096}, {768, 4096}, {6144, 4096}}) {
    const i8gemm_problem p = make_problem(n, k);  // [N,K], per token, per channel, bf16
    I8G_OK(i8gemm_prepare(shared_ctx(), &p, 2048));
    for (int64_t m : {256, 512, 1024, 2048}) {
      i8gemm_choice c{};
      I8G_OK(i8gemm_chosen(shared_ctx(), &p, m, &c));
      if (std::string(c.kernel).find("wgmma_tma") == std::string::npos)
        GTEST_SKIP() << "the wide defaults are wgmma_tma's (sm_90a); this GPU's default is " << c.kernel;
      SCOPED_TRACE(fmt::format("{}x{} M={} {}", n, k, m, c.kernel));
      kernels.insert(c.kernel);
      const std::string r = run_and_compare(shared_ctx(), p, m, rng_);
      EXPECT_TRUE(r.empty()) << r;
    }
  }
  std::set<std::string> widths;
  for (const std::string& name : kernels) {
    std::printf("[ figure ] untuned prefill default: %s\n", name.c_str());
    for (const char* w : {"_bn96_", "_bn160_", "_bn192_"})
      if (name.find(w) != std::string::npos) widths.insert(w);
  }
  EXPECT_EQ(widths, (std::set<std::string>{"_bn96_", "_bn160_", "_bn192_"}));
}

// Where K is short (4096 x 384: 3 K tiles) the untuned default from M = 1024 is the picked
// tile's staged-store twin (session 33): bit for bit through the C ABI at M = 1024, a row tail
// (1100) and 4096, bf16 and f16 with bias; below M = 1024 the register store.
TEST_F(GpuTest, UntunedShortKDefaultsStageTheOutputAndAreExact) {
  std::set<std::string> kernels;
  for (i8gemm_out out : {I8GEMM_OUT_BF16, I8GEMM_OUT_F16}) {
    const i8gemm_problem p = make_problem(4096, 384, I8GEMM_WEIGHT_NK, I8GEMM_SCALE_PER_TOKEN, I8GEMM_SCALE_PER_CHANNEL,
                                          out, out == I8GEMM_OUT_F16);
    I8G_OK(i8gemm_prepare(shared_ctx(), &p, 4096));
    for (int64_t m : {512, 1024, 1100, 4096}) {
      i8gemm_choice c{};
      I8G_OK(i8gemm_chosen(shared_ctx(), &p, m, &c));
      if (std::string(c.kernel).find("wgmma_tma") == std::string::npos)
        GTEST_SKIP() << "the staged default is wgmma_tma's (sm_90a); this GPU's default is " << c.kernel;
      SCOPED_TRACE(fmt::format("4096x384 M={} {}", m, c.kernel));
      const bool staged = std::string(c.kernel).find("_es1") != std::string::npos;
      EXPECT_EQ(staged, m >= 1024);
      kernels.insert(c.kernel);
      const std::string r = run_and_compare(shared_ctx(), p, m, rng_);
      EXPECT_TRUE(r.empty()) << r;
    }
  }
  for (const std::string& name : kernels) std::printf("[ figure ] untuned short-K default: %s\n", name.c_str());
}

// The other epilogues on one TP4 shape: f16/f32 with bias, per-tensor scales, asymmetric
// activations with the GPU column sums (checked against the CPU's inside DeviceGemm).
TEST_F(GpuTest, Tp4QkvShapeIsExactForOtherEpilogues) {
  struct Opt { i8gemm_scale act, wsc; i8gemm_out out; bool bias, asym; };
  for (const Opt o : {Opt{I8GEMM_SCALE_PER_TOKEN, I8GEMM_SCALE_PER_CHANNEL, I8GEMM_OUT_F16, true, false},
                      Opt{I8GEMM_SCALE_PER_TENSOR, I8GEMM_SCALE_PER_TENSOR, I8GEMM_OUT_F32, true, false},
                      Opt{I8GEMM_SCALE_PER_TOKEN, I8GEMM_SCALE_PER_CHANNEL, I8GEMM_OUT_BF16, false, true},
                      Opt{I8GEMM_SCALE_PER_TENSOR, I8GEMM_SCALE_PER_CHANNEL, I8GEMM_OUT_I32, false, true}})
    for (auto layout : {I8GEMM_WEIGHT_KN, I8GEMM_WEIGHT_NK}) {
      const i8gemm_problem p = make_problem(2560, 4096, layout, o.act, o.wsc, o.out, o.bias, o.asym);
      SCOPED_TRACE(describe(p));
      const std::string r = run_and_compare(shared_ctx(), p, 16, rng_);
      EXPECT_TRUE(r.empty()) << r;
    }
}

// i8gemm_weight_colsum against i8g::weight_colsum on the TP4 weights, both layouts, with
// extreme columns (all 127, all -127, all -128) beside random ones.
TEST_F(GpuTest, WeightColsumMatchesCpuExactlyOnTp4Weights) {
  for (auto [n, k] : {std::pair<int64_t, int64_t>{2560, 4096}, {4096, 2048}, {768, 4096}, {4096, 384}, {37, 4095}})
    for (auto layout : {I8GEMM_WEIGHT_NK, I8GEMM_WEIGHT_KN}) {
      const i8gemm_problem p = make_problem(n, k, layout, I8GEMM_SCALE_PER_TOKEN, I8GEMM_SCALE_PER_CHANNEL,
                                            I8GEMM_OUT_BF16, false, true);
      SCOPED_TRACE(describe(p));
      std::vector<int8_t> w = random_i8(rng_, size_t(n * k), -128, 127);
      for (int64_t kk = 0; kk < k; ++kk)
        for (int64_t col = 0; col < 3; ++col)
          w[size_t(layout == I8GEMM_WEIGHT_NK ? col * k + kk : kk * n + col)] = int8_t(col == 0 ? 127 : col == 1 ? -127 : -128);
      Stream s;
      DevBuf dw(w), dcs(size_t(n) * 4);
      dcs.fill(kPoison);
      I8G_OK(i8gemm_weight_colsum(shared_ctx(), &p, dw.as<int8_t>(), dcs.as<int32_t>(), s.handle()));
      s.sync();
      const std::vector<int32_t> got = dcs.download<int32_t>(size_t(n));
      const std::vector<int32_t> want = weight_colsum(to_gemm_problem(p), w);
      ASSERT_EQ(want[0], 127 * k);
      size_t bad = 0;
      for (size_t i = 0; i < got.size(); ++i)
        if (got[i] != want[i] && ++bad <= 5) ADD_FAILURE() << "colsum[" << i << "] = " << got[i] << ", want " << want[i];
      EXPECT_EQ(bad, 0u);
    }
}

}  // namespace
}  // namespace i8g::gputest

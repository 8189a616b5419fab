// The decode_mma family on a GPU (sm_80+): every candidate bit-exact against the CPU reference at
// M = 1, 2, 3, 4, 8, 16, 17, 33, 64 (each M in the bucket a tune races it in, plus two row tiles
// at M = bm + 1), with N and K tails and odd N, every split variant, every epilogue option; each
// launched twice (the second launch relies on the first leaving the split-K counters at zero)
// and the counters checked; graph replays with new activations. Operands and references are
// made once per problem and M and shared by every spec. Skips where there is no GPU.
#include <fmt/format.h>

#include <cstdio>
#include <set>

#include "generator/generator.hpp"
#include "tests/gpu/kernel_check.hpp"

namespace i8g::gputest {
namespace {

class DecodeMma : public KernelCheckTest {
 protected:
  void SetUp() override {
    KernelCheckTest::SetUp();
    if (IsSkipped()) return;
    if (target_.sm < 80) GTEST_SKIP() << "decode_mma needs sm_80 or later, this GPU is " << target_.arch;
  }
  std::vector<KernelSpec> specs(const GemmProblem& p) const { return family_specs(p, Family::decode_mma); }
  // The specs a tune races in the bucket that serves m rows.
  std::vector<KernelSpec> raced(const GemmProblem& p, int64_t m) const {
    std::vector<KernelSpec> out;
    for (const KernelSpec& s : specs(p))
      if (raced_at(s, m_buckets(m).back())) out.push_back(s);
    return out;
  }
};

// 1000 x 4080: a partial 16/32/64-row tile and a partial chunk, at every M; 1001: odd N as
// well, at two M (the element stores of an odd row pitch).
TEST_F(DecodeMma, EveryCandidateIsExactAtEveryDecodeRowCount) {
  int runs = 0, exact = 0;
  std::set<int> splits;
  for (const int64_t n : {1000, 1001}) {
    const i8gemm_problem p = make_problem(n, 4080);
    const GemmProblem gp = to_gemm_problem(p);
    const std::vector<int64_t> ms =
        n == 1000 ? std::vector<int64_t>{1, 2, 3, 4, 8, 16, 17, 33, 64} : std::vector<int64_t>{3, 33};
    for (int64_t m : ms) {
      const std::vector<KernelSpec> s = raced(gp, m);
      ASSERT_FALSE(s.empty()) << "no decode_mma candidate raced at M=" << m;
      for (const KernelSpec& spec : s) splits.insert(spec.config.split_k);
      check_all(p, s, {m}, runs, exact);
    }
  }
  EXPECT_GT(splits.size(), 1u) << "split variants among the candidates";
  std::printf("[ figure ] decode_mma: %d of %d candidate launches exact over M = 1..64 and tails\n", exact, runs);
}

// Every candidate of a target shape in its own bucket (M = 1, 16, 64: what tune races there),
// and every candidate over two row tiles (M = bm + 1: grid y > 0, the weight read twice).
TEST_F(DecodeMma, EveryCandidateOfATargetShapeIsExactInItsBucketAndOverTwoRowTiles) {
  const i8gemm_problem p = make_problem(2560, 4096);
  const GemmProblem gp = to_gemm_problem(p);
  int runs = 0, exact = 0;
  for (int64_t m : {1, 16, 64}) check_all(p, raced(gp, m), {m}, runs, exact);
  for (int bm : {8, 16, 32}) {
    std::vector<KernelSpec> tile;
    for (const KernelSpec& s : specs(gp))
      if (s.config.bm == bm) tile.push_back(s);
    check_all(p, tile, {bm + 1}, runs, exact);
  }
  ASSERT_GT(runs, 0);
  std::printf("[ figure ] decode_mma %s: %d of %d candidate launches exact\n", describe(p).c_str(), exact, runs);
}

TEST_F(DecodeMma, EveryEpilogueOptionIsExact) {
  int runs = 0, exact = 0;
  std::vector<i8gemm_problem> problems;
  for (i8gemm_out o : {I8GEMM_OUT_BF16, I8GEMM_OUT_F16, I8GEMM_OUT_F32, I8GEMM_OUT_I32})
    for (int flags = 0; flags < 4; ++flags) {
      const bool bias = flags & 1, asym = flags & 2;
      if (bias && o == I8GEMM_OUT_I32) continue;
      problems.push_back(
          make_problem(1000, 4080, I8GEMM_WEIGHT_NK, I8GEMM_SCALE_PER_TOKEN, I8GEMM_SCALE_PER_CHANNEL, o, bias, asym));
    }
  problems.push_back(make_problem(1000, 4080, I8GEMM_WEIGHT_NK, I8GEMM_SCALE_PER_TENSOR, I8GEMM_SCALE_PER_TENSOR));
  for (const i8gemm_problem& p : problems) {
    // M = 5 on the first 8-row candidate, M = 40 on a split 64-row one.
    for (int64_t m : {5, 40}) {
      std::vector<KernelSpec> one;
      for (const KernelSpec& s : raced(to_gemm_problem(p), m))
        if (one.empty() && (m < 8 || s.config.split_k > 1)) one.push_back(s);
      ASSERT_EQ(one.size(), 1u) << describe(p) << " M=" << m;
      check_all(p, one, {m}, runs, exact);
    }
  }
  std::printf("[ figure ] decode_mma epilogue options: %d of %d launches exact\n", exact, runs);
}

// A split and an unsplit kernel captured once and replayed with new activations each time; the
// split one's counters must be back at zero after the replays (checked by graph_replays_exact).
TEST_F(DecodeMma, GraphReplaysWithNewActivationsStayExact) {
  const GemmProblem p{2560, 4096};
  for (int64_t m : {3, 64}) {
    const std::vector<KernelSpec> s = raced(p, m);
    ASSERT_FALSE(s.empty());
    const KernelSpec* split = nullptr;
    for (const KernelSpec& spec : s)
      if (!split && spec.config.split_k > 1) split = &spec;
    ASSERT_NE(split, nullptr) << "no split candidate at M=" << m;
    for (const KernelSpec& spec : {s.front(), *split}) {
      const int exact = graph_replays_exact(spec, m);
      EXPECT_EQ(exact, 10) << spec.name();
      std::printf("[ figure ] decode_mma %s M=%lld: %d of 10 graph replays exact\n", spec.name().c_str(),
                  (long long)m, exact);
    }
  }
}

}  // namespace
}  // namespace i8g::gputest

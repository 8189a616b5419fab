// The CPU reference the tuner and the GPU tests trust: its row-split threads must give exactly the
// naive single loop's int32 sums, in both weight layouts, for row counts that do not divide evenly.
#include <gtest/gtest.h>

#include <random>

#include "runtime/tune/reference.hpp"

namespace i8g {
namespace {

std::vector<int32_t> naive(const GemmProblem& p, const HostOperands& in) {
  std::vector<int32_t> acc(size_t(in.m * p.n));
  for (int64_t m = 0; m < in.m; ++m)
    for (int64_t n = 0; n < p.n; ++n) {
      int32_t s = 0;
      for (int64_t k = 0; k < p.k; ++k) {
        const int8_t w = p.layout == WeightLayout::nk ? in.w[size_t(n * p.k + k)] : in.w[size_t(k * p.n + n)];
        s += int32_t(in.x[size_t(m * p.k + k)]) * int32_t(w);
      }
      acc[size_t(m * p.n + n)] = s;
    }
  return acc;
}

HostOperands operands(const GemmProblem& p, int64_t m, std::mt19937& rng) {
  std::uniform_int_distribution<int> d(-128, 127);
  HostOperands h;
  h.m = m;
  h.x.resize(size_t(m * p.k));
  h.w.resize(size_t(p.n * p.k));
  for (auto& v : h.x) v = int8_t(d(rng));
  for (auto& v : h.w) v = int8_t(d(rng));
  return h;
}

TEST(Reference, RowSplitThreadsGiveTheNaiveSums) {
  std::mt19937 rng(7);
  for (WeightLayout layout : {WeightLayout::nk, WeightLayout::kn}) {
    GemmProblem p;
    p.n = 520;
    p.k = 1024;
    p.layout = layout;
    // 601 x 520 x 1024 multiply-adds: several threads' worth, rows not a multiple of any count.
    for (int64_t m : {int64_t(1), int64_t(601)}) {
      const HostOperands h = operands(p, m, rng);
      EXPECT_EQ(reference_accumulate(p, h), naive(p, h)) << "m " << m << " layout " << int(layout);
    }
  }
}

}  // namespace
}  // namespace i8g

#include "runtime/gpu/lt_dequant.hpp"

#include <fmt/format.h>

namespace i8g {

LtDequant::LtDequant(const GemmProblem& p, int64_t max_m, Dequant dequant)
    : p_(p), max_m_(max_m), dequant_(std::move(dequant)),
      acc_(size_t(max_m) * size_t(p.n) * 4), workspace_(LtGemm::kWorkspaceBytes) {}

const LtGemm& LtDequant::gemm(int64_t m) const {
  std::lock_guard guard(mu_);
  auto it = by_m_.find(m);
  if (it == by_m_.end())
    it = by_m_.emplace(m, std::make_unique<LtGemm>(LtGemm::Kind::i8_i32, m, p_.n, p_.k, p_.layout)).first;
  return *it->second;
}

int LtDequant::algo_count(int64_t m) const { return gemm(m).algo_count(); }

void LtDequant::run(int algo, const I8gArgs& a, CUstream stream) const {
  run_gemm(algo, a, stream);
  dequant_(acc_.get<int32_t>(), a, stream);
}

void LtDequant::run_gemm(int algo, const I8gArgs& a, CUstream stream) const {
  check_rows(a.m);
  gemm(a.m).run(algo, a.x, a.w, acc_.get(), workspace_.get(), stream);
}

void LtDequant::run_dequant(const I8gArgs& a, CUstream stream) const {
  check_rows(a.m);
  dequant_(acc_.get<int32_t>(), a, stream);
}

void LtDequant::check_rows(int64_t m) const {
  // More rows than the accumulator holds would write past its end.
  if (m > max_m_)
    throw Error(ErrorKind::invalid_argument, "LtDequant::run",
                fmt::format("the accumulator holds {} rows, not M={}", max_m_, m));
}

}  // namespace i8g

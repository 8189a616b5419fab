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

LtAlgorithm LtDequant::pick(int index, int64_t tuned_m, int64_t m_lo, int64_t m_hi) const {
  const LtGemm& at = gemm(tuned_m);
  if (index < 0 || index >= at.algo_count())
    throw Error(ErrorKind::unsupported, "i8gemm_prepare",
                fmt::format("the tuned cuBLASLt algorithm {} of M={} is not in this cuBLASLt's list of {} ({}); "
                            "tune again with this cuBLASLt",
                            index, tuned_m, at.algo_count(), at.version()));
  const LtAlgorithm a = at.algorithm(index);
  base_.store(&at, std::memory_order_release);
  for (int64_t m : {m_lo, m_hi})
    if (!at.supports(a, m))
      throw Error(ErrorKind::unsupported, "i8gemm_prepare",
                  fmt::format("cuBLASLt refuses its tuned algorithm {} (tuned at M={}) for M={} of N={} K={}; tune "
                              "that bucket again",
                              index, tuned_m, m, p_.n, p_.k));
  return a;
}

void LtDequant::run(const LtAlgorithm& algo, const I8gArgs& a, CUstream stream) const {
  run_into(algo, a, stream, acc_.get<int32_t>(), workspace_.get());
}

namespace {

size_t round256(size_t bytes) { return (bytes + 255) / 256 * 256; }
size_t acc_bytes(int64_t n, int64_t m) { return round256(size_t(m) * size_t(n) * 4); }

}  // namespace

size_t LtDequant::scratch_bytes(int64_t n, int64_t m, const LtAlgorithm& algo) {
  return m > 0 ? acc_bytes(n, m) + LtGemm::run_workspace_bytes(algo) : 0;
}

void LtDequant::run(const LtAlgorithm& algo, const I8gArgs& a, CUstream stream, void* scratch) const {
  char* base = static_cast<char*>(scratch);
  run_into(algo, a, stream, reinterpret_cast<int32_t*>(base), base + acc_bytes(p_.n, a.m));
}

void LtDequant::run_into(const LtAlgorithm& algo, const I8gArgs& a, CUstream stream, int32_t* acc,
                         void* workspace) const {
  check_rows(a.m);
  // Any M's descriptor serves: the m-row layouts are made per call.
  const LtGemm* g = base_.load(std::memory_order_acquire);
  if (!g) throw Error(ErrorKind::internal, "LtDequant::run", "no descriptor was made at prepare (pick first)");
  g->run(algo, a.m, a.x, a.w, acc, workspace, stream);
  dequant_(acc, a, stream);
}

void LtDequant::check_rows(int64_t m) const {
  // More rows than the accumulator holds would write past its end.
  if (m > max_m_)
    throw Error(ErrorKind::invalid_argument, "LtDequant::run",
                fmt::format("the accumulator holds {} rows, not M={}", max_m_, m));
}

}  // namespace i8g

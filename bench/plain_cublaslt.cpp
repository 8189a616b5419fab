#include "bench/plain_cublaslt.hpp"

#include <cublasLt.h>

#include <stdexcept>
#include <vector>

namespace i8g::peers {
namespace {

cublasLtHandle_t handle() {
  static cublasLtHandle_t h = [] {
    cublasLtHandle_t x = nullptr;
    if (cublasLtCreate(&x) != CUBLAS_STATUS_SUCCESS) throw std::runtime_error("cublasLtCreate failed");
    return x;
  }();
  return h;
}

void check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) throw std::runtime_error(std::string(what) + ": cublasStatus " + std::to_string(int(s)));
}

}  // namespace

struct PlainLt::Impl {
  Kind kind;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  std::vector<cublasLtMatmulHeuristicResult_t> algos;
  ~Impl() {
    if (desc) cublasLtMatmulDescDestroy(desc);
    for (auto* l : {a, b, c})
      if (l) cublasLtMatrixLayoutDestroy(l);
  }
};

PlainLt::PlainLt(Kind kind, int64_t m, int64_t n, int64_t k, const float* w_scale, const float* x_scale)
    : impl_(std::make_unique<Impl>()) {
  Impl& s = *impl_;
  s.kind = kind;
  const bool i8 = kind == Kind::i8_i32;
  const cudaDataType_t ab = i8 ? CUDA_R_8I : CUDA_R_8F_E4M3, ct = i8 ? CUDA_R_32I : CUDA_R_16BF;
  check(cublasLtMatmulDescCreate(&s.desc, i8 ? CUBLAS_COMPUTE_32I : CUBLAS_COMPUTE_32F, i8 ? CUDA_R_32I : CUDA_R_32F),
        "cublasLtMatmulDescCreate");
  const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
  check(cublasLtMatmulDescSetAttribute(s.desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta)), "TRANSA");
  check(cublasLtMatmulDescSetAttribute(s.desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb)), "TRANSB");
  if (!i8) {
    const int8_t fast = 1;  // what torch's use_fast_accum and vLLM's fp8 path ask for
    check(cublasLtMatmulDescSetAttribute(s.desc, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast, sizeof(fast)), "FAST_ACCUM");
    check(cublasLtMatmulDescSetAttribute(s.desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &w_scale, sizeof(w_scale)),
          "A_SCALE_POINTER");
    check(cublasLtMatmulDescSetAttribute(s.desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &x_scale, sizeof(x_scale)),
          "B_SCALE_POINTER");
  }
  check(cublasLtMatrixLayoutCreate(&s.a, ab, uint64_t(k), uint64_t(n), k), "layout A");
  check(cublasLtMatrixLayoutCreate(&s.b, ab, uint64_t(k), uint64_t(m), k), "layout B");
  check(cublasLtMatrixLayoutCreate(&s.c, ct, uint64_t(n), uint64_t(m), n), "layout C");
  cublasLtMatmulPreference_t pref = nullptr;
  check(cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate");
  const size_t ws = kWorkspaceBytes;
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws));
  s.algos.resize(16);
  int got = 0;
  const cublasStatus_t st =
      cublasLtMatmulAlgoGetHeuristic(handle(), s.desc, s.a, s.b, s.c, s.c, pref, 16, s.algos.data(), &got);
  cublasLtMatmulPreferenceDestroy(pref);
  s.algos.resize(st == CUBLAS_STATUS_SUCCESS ? size_t(got) : 0);
  if (s.algos.empty())
    throw std::runtime_error("cuBLASLt offers no " + std::string(i8 ? "int8" : "fp8") + " algorithm (status " +
                             std::to_string(int(st)) + ")");
}

PlainLt::~PlainLt() = default;
int PlainLt::algo_count() const { return int(impl_->algos.size()); }

void PlainLt::run(int algo, const void* x, const void* w, void* out, void* workspace, cudaStream_t st) const {
  const Impl& s = *impl_;
  const int32_t one_i = 1, zero_i = 0;
  const float one_f = 1.0f, zero_f = 0.0f;
  const bool i8 = s.kind == Kind::i8_i32;
  const void* alpha = i8 ? static_cast<const void*>(&one_i) : &one_f;
  const void* beta = i8 ? static_cast<const void*>(&zero_i) : &zero_f;
  check(cublasLtMatmul(handle(), s.desc, alpha, w, s.a, x, s.b, beta, out, s.c, out, s.c, &s.algos.at(size_t(algo)).algo,
                       workspace, kWorkspaceBytes, st),
        "cublasLtMatmul");
}

std::string PlainLt::version() {
  const size_t v = cublasLtGetVersion();
  return std::to_string(v / 10000) + "." + std::to_string((v / 100) % 100) + "." + std::to_string(v % 100);
}

}  // namespace i8g::peers

#include "runtime/gpu/cublaslt.hpp"

#include <cublasLt.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "core/error.hpp"
#include "core/options.hpp"
#include "core/shared_library.hpp"

namespace i8g {
namespace {

#define I8G_LT_FNS(X)                                                                      \
  X(cublasLtCreate) X(cublasLtDestroy) X(cublasLtGetVersion) X(cublasLtMatmulDescCreate)   \
  X(cublasLtMatmulDescDestroy) X(cublasLtMatmulDescSetAttribute) X(cublasLtMatrixLayoutCreate) \
  X(cublasLtMatrixLayoutDestroy) X(cublasLtMatmulPreferenceCreate)                         \
  X(cublasLtMatmulPreferenceDestroy) X(cublasLtMatmulPreferenceSetAttribute)               \
  X(cublasLtMatmulAlgoGetHeuristic) X(cublasLtMatmul) X(cublasLtMatrixLayoutInit_internal) X(cublasLtMatmulAlgoCheck)

struct Lt {
#define X(name) decltype(&::name) name = nullptr;
  I8G_LT_FNS(X)
#undef X
  cublasLtHandle_t handle = nullptr;
  std::string why;
};

const Lt* lt(std::string* why) {
  static const Lt loaded = [] {
    Lt l;
    // cuBLASLt 12 and 13 share these signatures, cublasLtMatmulAlgo_t and the version encoding.
    static const std::vector<LibraryVersion> versions = {{"libcublasLt.so.13", "nvidia/cu13/lib", 13},
                                                         {"libcublasLt.so.12", "nvidia/cublas/lib", 12}};
    const OpenedLibrary lib = open_library(versions, library_search(options().cublaslt), "cuBLASLt", "I8GEMM_CUBLASLT");
    if (!lib.handle) {
      l.why = lib.why;
      return l;
    }
#define X(name) l.name = reinterpret_cast<decltype(l.name)>(library_symbol(lib.handle, #name, lib.path, l.why));
    I8G_LT_FNS(X)
#undef X
    if (l.why.empty() && l.cublasLtCreate(&l.handle) != CUBLAS_STATUS_SUCCESS)
      l.why = "cublasLtCreate failed (no usable GPU?)";
    return l;
  }();
  if (!loaded.why.empty()) {
    if (why) *why = loaded.why;
    return nullptr;
  }
  return &loaded;
}

void check(cublasStatus_t s, const char* call) {
  if (s != CUBLAS_STATUS_SUCCESS) throw Error(ErrorKind::cuda, call, fmt::format("cublasStatus {}", int(s)));
}

}  // namespace

struct LtGemm::Impl {
  const Lt* l = nullptr;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  std::vector<cublasLtMatmulHeuristicResult_t> algos;
  Kind kind;
  int64_t n = 0, k = 0;
  // The m-row layouts of x (B) and the output (C), initialized in caller-provided storage.
  struct RowLayouts {
    cublasLtMatrixLayoutOpaque_t b, c;
  };
  void init_rows(RowLayouts& r, int64_t m) const {
    const bool i8 = kind == Kind::i8_i32;
    check(l->cublasLtMatrixLayoutInit_internal(&r.b, sizeof r.b, i8 ? CUDA_R_8I : CUDA_R_16BF, uint64_t(k),
                                               uint64_t(m), k),
          "cublasLtMatrixLayoutInit (x)");
    check(l->cublasLtMatrixLayoutInit_internal(&r.c, sizeof r.c, i8 ? CUDA_R_32I : CUDA_R_16BF, uint64_t(n),
                                               uint64_t(m), n),
          "cublasLtMatrixLayoutInit (out)");
  }
  ~Impl() {
    if (!l) return;
    if (desc) l->cublasLtMatmulDescDestroy(desc);
    for (auto* lay : {a, b, c})
      if (lay) l->cublasLtMatrixLayoutDestroy(lay);
  }
};

bool LtGemm::available(std::string* why) { return lt(why) != nullptr; }

LtGemm::LtGemm(Kind kind, int64_t m, int64_t n, int64_t k, WeightLayout layout, int max_algos)
    : impl_(std::make_unique<Impl>()) {
  std::string why;
  const Lt* l = lt(&why);
  if (!l) throw Error(ErrorKind::cuda, "cublasLt", why);
  Impl& s = *impl_;
  s.l = l;
  s.kind = kind;
  s.n = n;
  s.k = k;
  const bool i8 = kind == Kind::i8_i32;
  const cudaDataType_t ab = i8 ? CUDA_R_8I : CUDA_R_16BF;
  const cudaDataType_t ct = i8 ? CUDA_R_32I : CUDA_R_16BF;
  check(l->cublasLtMatmulDescCreate(&s.desc, i8 ? CUBLAS_COMPUTE_32I : CUBLAS_COMPUTE_32F,
                                    i8 ? CUDA_R_32I : CUDA_R_32F),
        "cublasLtMatmulDescCreate");
  // Column-major view: A = w as [K,N] (nk, op T) or [N,K] (kn, op N); B = x as [K,M], op N.
  const cublasOperation_t ta = layout == WeightLayout::nk ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t tb = CUBLAS_OP_N;
  check(l->cublasLtMatmulDescSetAttribute(s.desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta)), "TRANSA");
  check(l->cublasLtMatmulDescSetAttribute(s.desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb)), "TRANSB");
  if (layout == WeightLayout::nk)
    check(l->cublasLtMatrixLayoutCreate(&s.a, ab, uint64_t(k), uint64_t(n), k), "layout A");
  else
    check(l->cublasLtMatrixLayoutCreate(&s.a, ab, uint64_t(n), uint64_t(k), n), "layout A");
  check(l->cublasLtMatrixLayoutCreate(&s.b, ab, uint64_t(k), uint64_t(m), k), "layout B");
  check(l->cublasLtMatrixLayoutCreate(&s.c, ct, uint64_t(n), uint64_t(m), n), "layout C");
  cublasLtMatmulPreference_t pref = nullptr;
  check(l->cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate");
  const size_t ws = kWorkspaceBytes;
  l->cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws));
  s.algos.resize(size_t(max_algos));
  int returned = 0;
  const cublasStatus_t st = l->cublasLtMatmulAlgoGetHeuristic(l->handle, s.desc, s.a, s.b, s.c, s.c, pref,
                                                              max_algos, s.algos.data(), &returned);
  l->cublasLtMatmulPreferenceDestroy(pref);
  s.algos.resize(st == CUBLAS_STATUS_SUCCESS ? size_t(returned) : 0);
  if (s.algos.empty())
    throw Error(ErrorKind::cuda, "cublasLtMatmulAlgoGetHeuristic",
                fmt::format("no algorithm for {} M={} N={} K={} layout {} (status {})",
                            i8 ? "int8->int32" : "bf16", m, n, k, to_string(layout), int(st)));
}

LtGemm::~LtGemm() = default;

int LtGemm::algo_count() const { return int(impl_->algos.size()); }
size_t LtGemm::workspace_bytes(int algo) const { return impl_->algos.at(size_t(algo)).workspaceSize; }

void LtGemm::run(int algo, const void* x, const void* w, void* c, void* workspace, CUstream st) const {
  const Impl& s = *impl_;
  const auto& h = s.algos.at(size_t(algo));
  const int32_t one_i = 1, zero_i = 0;
  const float one_f = 1.0f, zero_f = 0.0f;
  const bool i8 = s.kind == Kind::i8_i32;
  check(s.l->cublasLtMatmul(s.l->handle, s.desc, i8 ? static_cast<const void*>(&one_i) : &one_f, w, s.a, x,
                            s.b, i8 ? static_cast<const void*>(&zero_i) : &zero_f, c, s.c, c, s.c, &h.algo,
                            workspace, h.workspaceSize, reinterpret_cast<cudaStream_t>(st)),
        "cublasLtMatmul");
}

LtAlgorithm LtGemm::algorithm(int algo) const {
  const auto& h = impl_->algos.at(size_t(algo));
  LtAlgorithm a;
  static_assert(sizeof(a.data) == sizeof(h.algo.data), "cublasLtMatmulAlgo_t is 8 words");
  std::memcpy(a.data.data(), h.algo.data, sizeof(a.data));
  a.workspace = h.workspaceSize;
  return a;
}

bool LtGemm::supports(const LtAlgorithm& a, int64_t m) const {
  const Impl& s = *impl_;
  Impl::RowLayouts r;
  s.init_rows(r, m);
  cublasLtMatmulAlgo_t algo;
  std::memcpy(algo.data, a.data.data(), sizeof(algo.data));
  cublasLtMatmulHeuristicResult_t result{};
  return s.l->cublasLtMatmulAlgoCheck(s.l->handle, s.desc, s.a, &r.b, &r.c, &r.c, &algo, &result) ==
             CUBLAS_STATUS_SUCCESS &&
         result.workspaceSize <= kWorkspaceBytes;
}

void LtGemm::run(const LtAlgorithm& a, int64_t m, const void* x, const void* w, void* c, void* workspace,
                 CUstream st) const {
  const Impl& s = *impl_;
  Impl::RowLayouts r;
  s.init_rows(r, m);
  cublasLtMatmulAlgo_t algo;
  std::memcpy(algo.data, a.data.data(), sizeof(algo.data));
  const int32_t one_i = 1, zero_i = 0;
  const float one_f = 1.0f, zero_f = 0.0f;
  const bool i8 = s.kind == Kind::i8_i32;
  check(s.l->cublasLtMatmul(s.l->handle, s.desc, i8 ? static_cast<const void*>(&one_i) : &one_f, w, s.a, x, &r.b,
                            i8 ? static_cast<const void*>(&zero_i) : &zero_f, c, &r.c, c, &r.c, &algo, workspace,
                            run_workspace_bytes(a), reinterpret_cast<cudaStream_t>(st)),
        "cublasLtMatmul");
}

size_t LtGemm::run_workspace_bytes(const LtAlgorithm& a) { return std::min(a.workspace, kWorkspaceBytes); }

std::string LtGemm::version() const {
  const size_t v = impl_->l->cublasLtGetVersion();
  return fmt::format("cublasLt {}.{}.{}", v / 10000, (v / 100) % 100, v % 100);
}

}  // namespace i8g

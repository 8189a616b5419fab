// Text forms, validation and hardware facts of the seam types.
#include "generator/types.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <regex>

#include "core/error.hpp"

namespace i8g {

const char* to_string(WeightLayout v) { return v == WeightLayout::nk ? "nk" : "kn"; }
const char* to_string(ActScale v) { return v == ActScale::per_tensor ? "tens" : "tok"; }
const char* to_string(WeightScale v) { return v == WeightScale::per_tensor ? "tens" : "ch"; }
const char* to_string(OutType v) {
  switch (v) {
    case OutType::bf16: return "bf16";
    case OutType::f16: return "f16";
    case OutType::f32: return "f32";
    case OutType::i32: return "i32";
  }
  return "?";
}
const char* to_string(Family v) {
  switch (v) {
    case Family::simt_dp4a: return "simt_dp4a";
    case Family::mma_sync: return "mma_sync";
    case Family::mfma: return "mfma";
    case Family::wgmma: return "wgmma";
  }
  return "?";
}
std::optional<Family> parse_family(const std::string& s) {
  for (Family f : {Family::simt_dp4a, Family::mma_sync, Family::mfma, Family::wgmma})
    if (s == to_string(f)) return f;
  return std::nullopt;
}
std::optional<OutType> parse_out_type(const std::string& s) {
  for (OutType o : {OutType::bf16, OutType::f16, OutType::f32, OutType::i32})
    if (s == to_string(o)) return o;
  return std::nullopt;
}

// ---------------------------------------------------------------------------------------------
// GemmProblem

std::string GemmProblem::invalid_reason() const {
  if (n <= 0 || k <= 0) return fmt::format("N and K must be positive (got N={}, K={})", n, k);
  if (n > kMaxN) return fmt::format("N={} is above the supported maximum {}", n, kMaxN);
  const int64_t kmax = asymmetric ? kMaxKAsymmetric : kMaxKSymmetric;
  if (k > kmax)
    return fmt::format(
        "K={} can overflow the int32 accumulator ({}*127*K must stay below 2^31, so K <= {}{})",
        k, asymmetric ? 255 : 127, kmax, asymmetric ? " for asymmetric activations" : "");
  if (out == OutType::i32 && bias)
    return "a bias needs a floating-point output (bf16, f16 or f32), not raw i32";
  return {};
}

void GemmProblem::validate() const {
  std::string why = invalid_reason();
  if (!why.empty()) throw Error("GemmProblem", why);
}

std::string GemmProblem::key() const {
  return fmt::format("n{}_k{}_{}_{}_{}_{}{}{}", n, k, to_string(layout), to_string(act_scale),
                     to_string(weight_scale), to_string(out), bias ? "_bias" : "",
                     asymmetric ? "_asym" : "");
}

static const char* kProblemPattern =
    R"(n(\d{1,9})_k(\d{1,9})_(nk|kn)_(tens|tok)_(tens|ch)_(bf16|f16|f32|i32)(_bias)?(_asym)?)";

static GemmProblem problem_from_match(const std::smatch& m, size_t first) {
  GemmProblem p;
  p.n = std::stoll(m[first].str());
  p.k = std::stoll(m[first + 1].str());
  p.layout = m[first + 2] == "nk" ? WeightLayout::nk : WeightLayout::kn;
  p.act_scale = m[first + 3] == "tok" ? ActScale::per_token : ActScale::per_tensor;
  p.weight_scale = m[first + 4] == "ch" ? WeightScale::per_channel : WeightScale::per_tensor;
  p.out = *parse_out_type(m[first + 5].str());
  p.bias = m[first + 6].matched;
  p.asymmetric = m[first + 7].matched;
  return p;
}

GemmProblem GemmProblem::parse_key(const std::string& text) {
  static const std::regex re(std::string("^") + kProblemPattern + "$");
  std::smatch m;
  if (!std::regex_match(text, m, re))
    throw Error("GemmProblem::parse_key", fmt::format("'{}' is not a problem key", text));
  return problem_from_match(m, 1);
}

bool GemmProblem::operator==(const GemmProblem& o) const { return key() == o.key(); }

// ---------------------------------------------------------------------------------------------
// KernelConfig

int KernelConfig::threads() const {
  if (family == Family::simt_dp4a) return tm > 0 && tn > 0 ? (bm / tm) * (bn / tn) : 0;
  if (family == Family::mfma) return 64 * wm * wn;
  return 32 * wm * wn;
}

int KernelConfig::static_smem_bytes() const {
  // simt_dp4a keeps A and B as packed 4-byte words, k-word-major, each row padded by one word.
  if (family == Family::simt_dp4a) return (bk / 4) * ((bm + 1) + (bn + 1)) * 4 * stages;
  // mfma keeps rows of x and columns of w k-contiguous, each padded by one 4-byte word.
  if (family == Family::mfma) return stages * (bm + bn) * (bk + 4);
  return 0;
}

std::string KernelConfig::to_string() const {
  return fmt::format("bm{}_bn{}_bk{}_tm{}_tn{}_wm{}_wn{}_s{}_sk{}_v{}", bm, bn, bk, tm, tn, wm,
                     wn, stages, split_k, vec);
}

static const char* kConfigPattern =
    R"(bm(\d{1,4})_bn(\d{1,4})_bk(\d{1,4})_tm(\d{1,3})_tn(\d{1,3})_wm(\d{1,2})_wn(\d{1,2})_s(\d{1,2})_sk(\d{1,3})_v(\d{1,2}))";

static KernelConfig config_from_match(Family family, const std::smatch& m, size_t first) {
  KernelConfig c;
  c.family = family;
  int* fields[] = {&c.bm, &c.bn, &c.bk, &c.tm, &c.tn, &c.wm, &c.wn, &c.stages, &c.split_k, &c.vec};
  for (size_t i = 0; i < 10; ++i) *fields[i] = std::stoi(m[first + i].str());
  return c;
}

KernelConfig KernelConfig::parse(Family family, const std::string& text) {
  static const std::regex re(std::string("^") + kConfigPattern + "$");
  std::smatch m;
  if (!std::regex_match(text, m, re))
    throw Error("KernelConfig::parse", fmt::format("'{}' is not a kernel config", text));
  return config_from_match(family, m, 1);
}

bool KernelConfig::operator==(const KernelConfig& o) const {
  return family == o.family && to_string() == o.to_string();
}

// ---------------------------------------------------------------------------------------------
// KernelSpec: the kernel name is the identity and a filter key.

std::string KernelSpec::name() const {
  std::string a = arch;
  a.erase(std::remove(a.begin(), a.end(), '_'), a.end());  // sm_90a -> sm90a
  return fmt::format("i8g_{}_{}_{}_{}", a, to_string(config.family), problem.key(),
                     config.to_string());
}

KernelSpec KernelSpec::parse_name(const std::string& name) {
  static const std::regex re(std::string(R"(^i8g_(sm\d{2,3}a?|gfx[0-9a-f]{3,4})_(simt_dp4a|mma_sync|mfma|wgmma)_)") +
                             kProblemPattern + "_" + kConfigPattern + "$");
  std::smatch m;
  if (name.size() > 512 || !std::regex_match(name, m, re))
    throw Error("KernelSpec::parse_name", fmt::format("'{}' is not an i8gemm kernel name",
                                                      name.substr(0, 200)));
  KernelSpec s;
  s.arch = m[1].str();
  if (s.arch.rfind("sm", 0) == 0) s.arch.insert(2, "_");
  s.problem = problem_from_match(m, 3);
  s.config = config_from_match(*parse_family(m[2].str()), m, 11);
  return s;
}

bool KernelSpec::operator==(const KernelSpec& o) const { return name() == o.name(); }

std::ostream& operator<<(std::ostream& os, const GemmProblem& p) { return os << p.key(); }
std::ostream& operator<<(std::ostream& os, const KernelConfig& c) {
  return os << to_string(c.family) << ":" << c.to_string();
}
std::ostream& operator<<(std::ostream& os, const KernelSpec& s) { return os << s.name(); }

}  // namespace i8g

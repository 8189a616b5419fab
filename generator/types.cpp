// Text forms and validation of the seam types. Problem options convert through their tables
// (problem_enums.hpp), configs through their family's record (families.hpp).
#include "generator/types.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <regex>

#include "core/error.hpp"
#include "generator/families.hpp"
#include "generator/problem_enums.hpp"

namespace i8g {

const char* to_string(WeightLayout v) { return row_of(v).key; }
const char* to_string(ActScale v) { return row_of(v).key; }
const char* to_string(WeightScale v) { return row_of(v).key; }
const char* to_string(OutType v) { return row_of(v).key; }
size_t out_element_size(OutType v) { return size_t(row_of(v).bytes); }
std::optional<OutType> parse_out_type(const std::string& s) { return from_key<OutType>(s); }

const char* to_string(Family v) { return family_info(v).name; }
std::optional<Family> parse_family(const std::string& s) {
  for (const FamilyInfo* f : families())
    if (s == f->name) return f->family;
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

namespace {

// 8 groups: n, k, layout, act scale, weight scale, out, bias, asym.
const std::string& problem_pattern() {
  static const std::string p = fmt::format(
      R"(n(\d{{1,9}})_k(\d{{1,9}})_({})_({})_({})_({})(_bias)?(_asym)?)", key_alternation<WeightLayout>(),
      key_alternation<ActScale>(), key_alternation<WeightScale>(), key_alternation<OutType>());
  return p;
}

GemmProblem problem_from_match(const std::smatch& m, size_t first) {
  GemmProblem p;
  p.n = std::stoll(m[first].str());
  p.k = std::stoll(m[first + 1].str());
  p.layout = *from_key<WeightLayout>(m[first + 2].str());
  p.act_scale = *from_key<ActScale>(m[first + 3].str());
  p.weight_scale = *from_key<WeightScale>(m[first + 4].str());
  p.out = *from_key<OutType>(m[first + 5].str());
  p.bias = m[first + 6].matched;
  p.asymmetric = m[first + 7].matched;
  return p;
}

}  // namespace

GemmProblem GemmProblem::parse_key(const std::string& text) {
  static const std::regex re("^" + problem_pattern() + "$");
  std::smatch m;
  if (!std::regex_match(text, m, re))
    throw Error(ErrorKind::invalid_argument, "GemmProblem::parse_key", fmt::format("'{}' is not a problem key", text));
  return problem_from_match(m, 1);
}

bool GemmProblem::operator==(const GemmProblem& o) const { return key() == o.key(); }

// ---------------------------------------------------------------------------------------------
// KernelConfig

int KernelConfig::threads() const { return family_info(family).threads(*this); }
int KernelConfig::static_smem_bytes() const { return family_info(family).static_smem(*this); }

std::string KernelConfig::to_string() const {
  std::string s = fmt::format("bm{}_bn{}_bk{}", bm, bn, bk);
  for (ConfigField f : family_info(family).name_fields)
    s += fmt::format("_{}{}", field_info(f).tag, this->*field_info(f).member);
  static const KernelConfig defaults;
  for (ConfigField f : family_info(family).optional_name_fields)
    if (this->*field_info(f).member != defaults.*field_info(f).member)
      s += fmt::format("_{}{}", field_info(f).tag, this->*field_info(f).member);
  return s;
}

namespace {

const std::regex& config_regex(Family family) {
  static const std::vector<std::regex> by_family = [] {
    std::vector<std::regex> out;
    for (const FamilyInfo* f : families()) {
      if (size_t(f->family) >= out.size()) out.resize(size_t(f->family) + 1);
      std::string p = R"(^bm(\d{1,4})_bn(\d{1,4})_bk(\d{1,4}))";
      for (ConfigField c : f->name_fields)
        p += fmt::format(R"(_{}(\d{{1,{}}}))", field_info(c).tag, field_info(c).max_digits);
      for (ConfigField c : f->optional_name_fields)
        p += fmt::format(R"((?:_{}(\d{{1,{}}}))?)", field_info(c).tag, field_info(c).max_digits);
      out[size_t(f->family)] = std::regex(p + "$");
    }
    return out;
  }();
  return by_family.at(size_t(family));
}

// Before each family named only its own fields, every name carried all ten. The generator hash
// changed with that, so such names belong to stale cache entries: refused, saying why.
bool is_ten_field_config(const std::string& text) {
  static const std::regex re(R"(^bm\d+_bn\d+_bk\d+_tm\d+_tn\d+_wm\d+_wn\d+_s\d+_sk\d+_v\d+$)");
  return std::regex_match(text, re);
}

const char* kTenFieldNote =
    "a config of the older ten-field form, which names from before this i8gemm carry; "
    "their cache entries are stale: tune again";

}  // namespace

KernelConfig KernelConfig::parse(Family family, const std::string& text) {
  std::smatch m;
  if (text.size() > 256 || !std::regex_match(text, m, config_regex(family))) {
    throw Error(ErrorKind::invalid_argument, "KernelConfig::parse",
                is_ten_field_config(text)
                    ? fmt::format("'{}' is {}", text.substr(0, 200), kTenFieldNote)
                    : fmt::format("'{}' is not a {} kernel config", text.substr(0, 200), i8g::to_string(family)));
  }
  KernelConfig c;
  c.family = family;
  c.bm = std::stoi(m[1].str());
  c.bn = std::stoi(m[2].str());
  c.bk = std::stoi(m[3].str());
  size_t group = 4;
  for (ConfigField f : family_info(family).name_fields) c.*field_info(f).member = std::stoi(m[group++].str());
  for (ConfigField f : family_info(family).optional_name_fields) {
    const std::ssub_match& g = m[group++];
    if (!g.matched) continue;  // at its default
    c.*field_info(f).member = std::stoi(g.str());
    if (c.*field_info(f).member == KernelConfig{}.*field_info(f).member)
      throw Error(ErrorKind::invalid_argument, "KernelConfig::parse",
                  fmt::format("'{}' spells out {}={}, the default, which names leave out", text.substr(0, 200),
                              field_info(f).name, c.*field_info(f).member));
  }
  return c;
}

bool KernelConfig::operator==(const KernelConfig& o) const {
  if (family != o.family || bm != o.bm || bn != o.bn || bk != o.bk) return false;
  for (const ConfigFieldInfo& f : config_fields())
    if (this->*f.member != o.*f.member) return false;
  return true;
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
  static const std::regex re = [] {
    std::string fams;
    for (const FamilyInfo* f : families()) fams += (fams.empty() ? "" : "|") + std::string(f->name);
    return std::regex(R"(^i8g_(sm\d{2,3}a?|gfx[0-9a-f]{3,4})_()" + fams + ")_" + problem_pattern() +
                      R"(_(bm\d.*)$)");
  }();
  std::smatch m;
  if (name.size() > 512 || !std::regex_match(name, m, re))
    throw Error(ErrorKind::invalid_argument, "KernelSpec::parse_name",
                fmt::format("'{}' is not an i8gemm kernel name", name.substr(0, 200)));
  KernelSpec s;
  s.arch = m[1].str();
  if (s.arch.rfind("sm", 0) == 0) s.arch.insert(2, "_");
  s.problem = problem_from_match(m, 3);
  const Family family = *parse_family(m[2].str());
  const std::string config = m[11].str();
  if (is_ten_field_config(config))
    throw Error(ErrorKind::invalid_argument, "KernelSpec::parse_name",
                fmt::format("'{}' ends in {}", name, kTenFieldNote));
  try {
    s.config = KernelConfig::parse(family, config);
  } catch (const Error& e) {
    throw Error(ErrorKind::invalid_argument, "KernelSpec::parse_name",
                fmt::format("'{}' is not an i8gemm kernel name: {}", name.substr(0, 200), e.message()));
  }
  return s;
}

// The name leaves out the fields a family does not use; a config that sets one is not the same.
bool KernelSpec::operator==(const KernelSpec& o) const { return name() == o.name() && config == o.config; }

std::ostream& operator<<(std::ostream& os, const GemmProblem& p) { return os << p.key(); }
std::ostream& operator<<(std::ostream& os, const KernelConfig& c) {
  return os << to_string(c.family) << ":" << c.to_string();
}
std::ostream& operator<<(std::ostream& os, const KernelSpec& s) { return os << s.name(); }

}  // namespace i8g

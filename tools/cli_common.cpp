#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <tuple>

#include "cache/cache.hpp"
#include "core/embedded.hpp"
#include "core/error.hpp"
#include "generator/problem_enums.hpp"
#include "runtime/compile/compiler.hpp"
#include "tools/cli.hpp"

namespace i8g::cli {

void ProblemFlags::add_to(CLI::App& app) {
  app.add_option("--layout", layout, "weight layout: nk ([N,K] row-major) or kn ([K,N] row-major)")
      ->check(CLI::IsMember(cli_choices<WeightLayout>()))->capture_default_str();
  app.add_option("--act-scale", act_scale, fmt::format("activation scale: {}", fmt::join(cli_choices<ActScale>(), " or ")))
      ->check(CLI::IsMember(cli_choices<ActScale>()))->capture_default_str();
  app.add_option("--weight-scale", weight_scale, fmt::format("weight scale: {}", fmt::join(cli_choices<WeightScale>(), " or ")))
      ->check(CLI::IsMember(cli_choices<WeightScale>()))->capture_default_str();
  app.add_option("--out", out, fmt::format("output: {}", fmt::join(cli_choices<OutType>(), ", ")))
      ->check(CLI::IsMember(cli_choices<OutType>()))->capture_default_str();
  app.add_flag("--bias", bias, "add an fp32 bias[n]");
  app.add_flag("--asym", asymmetric, "asymmetric activations (int32 zero points)");
}

GemmProblem ProblemFlags::make(const NamedShape& s) const {
  GemmProblem p;
  p.n = s.n;
  p.k = s.k;
  // The flags' checks admit only the tables' CLI texts.
  p.layout = *from_cli<WeightLayout>(layout);
  p.act_scale = *from_cli<ActScale>(act_scale);
  p.weight_scale = *from_cli<WeightScale>(weight_scale);
  p.out = *from_cli<OutType>(out);
  p.bias = bias;
  p.asymmetric = asymmetric;
  p.validate();
  return p;
}

void ShapeFlags::add_to(CLI::App& app) {
  app.add_option("--shape", shapes, "a weight shape NxK (repeatable), e.g. 2560x4096");
  app.add_option("--shapes", shapes_file, "a file of shapes, one '[name] NxK' per line");
}

std::vector<NamedShape> ShapeFlags::resolve() const {
  std::vector<NamedShape> out;
  for (const std::string& s : shapes) out.push_back(parse_shape(s));
  if (!shapes_file.empty()) {
    std::vector<NamedShape> from_file;
    try {
      from_file = parse_shapes_file(read_file(shapes_file));
    } catch (const Error& e) {
      throw Error("", fmt::format("{}: {}", shapes_file, e.what()));
    }
    for (const NamedShape& s : from_file) out.push_back(s);
  }
  if (out.empty()) throw Error("", "no shapes: give --shape NxK or --shapes FILE");
  return out;
}

std::string read_file(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw Error("", fmt::format("cannot read {}: {}", path,
                                std::filesystem::exists(path, ec) ? "not a regular file" : "no such file"));
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error("", fmt::format("cannot read {}", path));
  std::stringstream ss;
  ss << f.rdbuf();
  if (f.bad()) throw Error("", fmt::format("cannot read {}", path));
  return ss.str();
}

std::string resolve_cache_path(const std::string& flag) {
  return flag.empty() ? cache::Cache::default_path() : flag;
}

CLI::Option* add_cache_option(CLI::App& cmd, std::string& into, const std::string& help) {
  return cmd.add_option("--cache", into, help)->check([](const std::string& v) {
    return v.empty() ? std::string("an empty path: leave --cache out for the default cache") : std::string();
  });
}

std::string terminal_safe(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  auto escape = [&](unsigned char c) { out += fmt::format("\\x{:02X}", c); };
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) {
      escape(c);
    } else if (c == 0xC2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
               static_cast<unsigned char>(text[i + 1]) <= 0x9F) {
      escape(c);
      escape(static_cast<unsigned char>(text[++i]));
    } else {
      out += char(c);
    }
  }
  return out;
}

std::string us_or_dash(std::optional<double> us) {
  return us && !std::isnan(*us) ? fmt::format("{:.2f}", *us) : std::string("-");
}

std::vector<cache::Winner> winners_in_order(cache::Cache& c) {
  std::vector<cache::Winner> ws = c.list_winners();
  std::sort(ws.begin(), ws.end(), [](const cache::Winner& a, const cache::Winner& b) {
    return std::tie(a.key.problem_key, a.key.gpu_name, a.key.m_bucket) <
           std::tie(b.key.problem_key, b.key.gpu_name, b.key.m_bucket);
  });
  return ws;
}

const std::string& CurrentBuild::compiler_version(const std::string& arch) {
  const bool amd = arch.rfind("gfx", 0) == 0;
  std::string& v = amd ? amd_ : nvidia_;
  bool& known = amd ? amd_known_ : nvidia_known_;
  if (!known) {
    known = true;
    try {
      v = make_compiler(Target::from_arch(amd ? "gfx90a" : "sm_80"))->version();
    } catch (const std::exception&) {
      v.clear();
    }
  }
  return v;
}

const std::string& CurrentBuild::options_hash(const std::string& arch) {
  auto it = options_hashes_.find(arch);
  if (it != options_hashes_.end()) return it->second;
  std::string h;
  try {
    h = cache::options_hash(compile_options(Target::from_arch(arch)));
  } catch (const Error&) {  // an arch this build does not know: nothing of it is current
  }
  return options_hashes_[arch] = h;
}

std::string CurrentBuild::stale_reason(const cache::StoredKernel& k) {
  if (!cache::is_override(k.key.generator_hash) && k.key.generator_hash != generator_hash())
    return "made by another template or generator version";
  if (k.key.compiler_version != compiler_version(k.key.arch))
    return "made by another compiler (" + k.key.compiler_version + ")";
  if (k.key.options_hash.empty()) return "made before compile options were part of the key (schema 1)";
  if (k.key.options_hash != options_hash(k.key.arch)) return "made with other compile options";
  return "";
}

std::string CurrentBuild::status(const cache::StoredKernel& k) {
  if (cache::is_override(k.key.generator_hash)) return "override";
  return stale_reason(k).empty() ? "ok" : "stale";
}

Progress::Progress(std::string label) : label_(std::move(label)), tty_(isatty(2)) {}

void Progress::update(size_t done, size_t total) {
  if (total == 0 || done == last_) return;
  if (last_ == size_t(-1)) {
    start_ = std::chrono::steady_clock::now();
    if (!tty_) std::fprintf(stderr, "%s: %zu to do\n", label_.c_str(), total);
  }
  last_ = done;
  total_ = total;
  if (!tty_) return;
  const int width = 30;
  const int fill = int(width * done / total);
  std::fprintf(stderr, "\r%s [%s%s] %zu/%zu", label_.c_str(), std::string(size_t(fill), '#').c_str(),
               std::string(size_t(width - fill), '.').c_str(), done, total);
  std::fflush(stderr);
}

void Progress::finish() {
  if (last_ == size_t(-1)) return;
  if (tty_) {
    std::fprintf(stderr, "\r\033[K");
    return;
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  std::fprintf(stderr, "%s: %zu/%zu done in %.1f s\n", label_.c_str(), last_, total_, s);
}

nlohmann::json json_document(const std::string& name) {
  return nlohmann::json{{"schema", "i8gemm/" + name}, {"version", kJsonVersion}};
}

}  // namespace i8g::cli

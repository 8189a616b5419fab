// Source text for one kernel: an include of its family's template and one instantiation,
// rendered from the template's named arguments; and the utility module.
#include <fmt/format.h>

#include <algorithm>

#include "generator/families.hpp"
#include "generator/generator.hpp"
#include "generator/problem_enums.hpp"

namespace i8g {
namespace {

// "64, 2560LL, ..." for the NVRTC / hipRTC name expression; with `annotate`, each value is
// followed by its parameter's name ("64 /*BM*/, ...") for the reader of the emitted source.
std::string render_arguments(const std::vector<TemplateArg>& args, bool annotate) {
  std::string out;
  for (const TemplateArg& a : args) {
    if (!out.empty()) out += ", ";
    out += fmt::format("{}{}", a.value, a.long_long ? "LL" : "");
    if (annotate) out += fmt::format(" /*{}*/", a.name);
  }
  return out;
}

}  // namespace

Source emit(const KernelSpec& spec) {
  spec.problem.validate();
  const FamilyInfo& f = family_info(spec.config.family);
  const std::vector<TemplateArg> args = f.template_args(spec);
  Source src;
  src.name = spec.name();
  src.entry = fmt::format("{}<{}>", f.kernel, render_arguments(args, false));
  // HIP has no __grid_constant__: there the argument block is passed by value.
  const std::string params =
      *f.kernel_params ? f.kernel_params : (f.amd ? "const I8gArgs" : "const __grid_constant__ I8gArgs");
  src.code = fmt::format("// {}\n#include \"{}\"\n\ntemplate __global__ void {}<{}>({});\n", src.name, f.header,
                         f.kernel, render_arguments(args, true), params);
  return src;
}

Source emit_utility(const std::string& arch) {
  std::string a = arch;
  a.erase(std::remove(a.begin(), a.end(), '_'), a.end());
  Source src;
  src.name = fmt::format("i8g_{}_utility", a);
  src.entry = "i8g_colsum_nk";
  src.code = fmt::format("// {}\n#define I8G_UTILITY_MODULE\n#include \"utility.cuh\"\n", src.name);
  return src;
}

std::string dequant_entry(const GemmProblem& p) {
  return fmt::format("i8g_dequant_{}_{}_{}{}{}", to_string(p.act_scale), to_string(p.weight_scale), to_string(p.out),
                     p.bias ? "_bias" : "", p.asymmetric ? "_asym" : "");
}

std::string dequant_any_entry(const GemmProblem& p) {
  return fmt::format("i8g_dequant_any_{}{}{}", to_string(p.out), p.bias ? "_bias" : "", p.asymmetric ? "_asym" : "");
}

}  // namespace i8g

// KernelSpec::parse_name, GemmProblem::parse_key and KernelConfig::parse on arbitrary text.
// What parses must print back to a name that parses to the same spec; a parsed spec's rules,
// source and launch geometry must answer without a crash (invalid configs included).
#include <cstdlib>

#include "fuzz/fuzz_support.hpp"
#include "generator/families.hpp"
#include "generator/generator.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace i8g;
  const std::string s = fuzz::text(data, size);
  fuzz::rejects_only_with_error([&] {
    const KernelSpec spec = KernelSpec::parse_name(s);
    if (!(KernelSpec::parse_name(spec.name()) == spec)) std::abort();
    const Target t = Target::from_arch(spec.arch);
    if (!invalid_reason(spec.problem, spec.config, t).empty()) return;
    (void)emit(spec);
    (void)launch_shape(spec, 4096);
    (void)workspace_bytes(spec, 4096);
  });
  fuzz::rejects_only_with_error([&] {
    const GemmProblem p = GemmProblem::parse_key(s);
    if (GemmProblem::parse_key(p.key()) != p) std::abort();
    (void)p.invalid_reason();
  });
  for (const FamilyInfo* f : families())
    fuzz::rejects_only_with_error([&] {
      const KernelConfig c = KernelConfig::parse(f->family, s);
      if (KernelConfig::parse(f->family, c.to_string()) != c) std::abort();
    });
  return 0;
}

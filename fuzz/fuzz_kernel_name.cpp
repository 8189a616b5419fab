// KernelSpec::parse_name, GemmProblem::parse_key and KernelConfig::parse on arbitrary text.
// What parses must print back to a name that parses to the same spec.
#include <cstdlib>

#include "fuzz/fuzz_support.hpp"
#include "generator/types.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace i8g;
  const std::string s = fuzz::text(data, size);
  fuzz::rejects_only_with_error([&] {
    const KernelSpec spec = KernelSpec::parse_name(s);
    if (!(KernelSpec::parse_name(spec.name()) == spec)) std::abort();
  });
  fuzz::rejects_only_with_error([&] {
    const GemmProblem p = GemmProblem::parse_key(s);
    if (GemmProblem::parse_key(p.key()) != p) std::abort();
    (void)p.invalid_reason();
  });
  fuzz::rejects_only_with_error([&] {
    for (Family f : {Family::simt_dp4a, Family::mma_sync, Family::mfma, Family::wgmma}) (void)KernelConfig::parse(f, s);
  });
  return 0;
}

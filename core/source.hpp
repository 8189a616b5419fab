// What a compiler takes: a name, the code and the entry's name expression. Knows nothing of GEMM.
#pragma once
#include <string>

namespace i8g {

// Emitted source: small glue that includes the embedded templates and instantiates one kernel.
struct Source {
  std::string name;   // KernelSpec::name()
  std::string code;   // the .cu text
  std::string entry;  // name expression for NVRTC, e.g. "i8g::simt_dp4a_kernel<...>"
};

}  // namespace i8g

// SASS from nvdisasm, run as a child process on the CUBIN written to a temp file. A missing or
// failing tool is a result (ok = false with a note), never an exception: SASS is optional.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace i8g {

// Where nvdisasm is: $I8GEMM_NVDISASM when set (used as given; a bad path is not replaced by
// another tool, so an override is never silently ignored), else PATH, else
// /usr/local/cuda/bin/nvdisasm, else the path found at build time. "" when none, with the
// reason in *note.
std::string find_nvdisasm(std::string* note);

struct Disassembly {
  bool ok = false;
  std::string sass;  // nvdisasm -c output (code sections only)
  std::string note;  // why not ok: tool missing, exit status and stderr
  std::string tool;  // path of the nvdisasm that ran
};

// Disassembles `image`; symbol_index >= 0 restricts the output to that kernel (nvdisasm -fun).
Disassembly disassemble(const std::vector<uint8_t>& image, int symbol_index = -1);

// Instruction counts by base mnemonic ("IDP", "LDG", "HGMMA"...: predicate and '.'-suffixes
// stripped), plus "total" and "tensor_core" (every *MMA opcode).
std::map<std::string, int> instruction_mix(const std::string& sass);

}  // namespace i8g

// The IR half of the AMD audit: what LLVM (15, in the hipRTC helper process) reads in a
// kernel's stored LLVM IR, held against the config and the code-object report. Private
// memory (allocas, addrspace 5) that survives optimization becomes scratch; the MFMA
// intrinsics must be what the config implies (one K step's worth, or one per K step when the
// whole K loop was unrolled, or a count between) and as many as the ISA's v_mfma; the LDS globals
// (addrspace 3) must add up to the report's LDS; a call to a function with a body was not
// inlined. Unreadable IR is a finding, never a crash of the caller.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace i8g {

struct AmdIrKernel {
  struct Alloca {
    std::string function, type;
    int64_t bytes = -1;
    int addrspace = -1;
  };
  struct Call {
    std::string function, callee, kind;  // kind: "defined", "external" or "indirect"
  };
  std::string name;
  int mfma = 0;
  int64_t lds_bytes = 0;
  std::vector<Alloca> allocas;
  std::vector<Call> calls;
};

// The reader's JSON document (llvm_ir::facts_json). Throws Error when it is malformed.
std::vector<AmdIrKernel> parse_amd_ir_facts(const std::string& json);

// What the audit holds the IR against; a negative number is not checked.
struct AmdIrExpectations {
  std::string symbol;      // the kernel the entry stores (its lowered name)
  int config_mfma = -1;    // FamilyInfo::matrix_instructions of the entry's config (one K step)
  int64_t k_steps = -1;    // K steps of the problem (ceil(K / bk)); -1: K is a run-time value
  int isa_mfma = -1;       // v_mfma in the stored ISA (the report's amd.mfma)
  int64_t lds_bytes = -1;  // the report's LDS figure (code-object metadata)
};

struct AmdIrFinding {
  std::string severity;  // "reject", "error", "warning" or "info", as the CLI's audit
  std::string kernel;    // the kernel it is about (a mangled symbol)
  std::string what;
};

// Findings from already-read facts (pure: the tests pin the rules on hand-made facts).
std::vector<AmdIrFinding> judge_amd_ir(const std::vector<AmdIrKernel>& kernels, const AmdIrExpectations& e);

// Reads `ir` through the helper (hip_compiler.hpp: amd_ir_facts) and judges it. An empty IR,
// unparseable IR or a failed helper is a finding. Never throws.
std::vector<AmdIrFinding> audit_amd_ir(const std::string& ir, const AmdIrExpectations& e);

}  // namespace i8g

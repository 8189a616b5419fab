// The LLVM IR reader of the AMD backend, built on LLVM 15's C++ API: the LLVM that comgr 5.2
// itself links (libLLVM-15.so.1). It runs only inside i8gemm_hiprtc_worker, which has already
// mapped that library through comgr, so no process ever holds two LLVMs. The worker dlopens it
// as libi8gemm_llvm_ir.so (next to itself) through the C entry point below; the unit tests and
// the fuzz harness link the same code directly. Nothing here includes an LLVM header, so its
// callers need no LLVM to compile.
#pragma once
#include <cstddef>
#include <string>

namespace i8g::llvm_ir {

// LLVM bitcode (as comgr writes it) -> LLVM assembly text. Throws std::runtime_error.
std::string bitcode_to_text(const std::string& bitcode);

// Parses and verifies LLVM assembly text and returns, as a JSON document, what every kernel
// (amdgpu_kernel function) in it holds:
//   {"kernels": [{"name", "mfma", "lds_bytes", "allocas": [{"function", "type", "bytes",
//                 "addrspace"}], "calls": [{"function", "callee", "kind"}]}]}
// mfma counts calls of llvm.amdgcn.mfma.* intrinsics; lds_bytes sums the addrspace(3) globals
// the kernel uses; allocas lists every alloca left in the kernel or a function it calls (on
// AMDGPU they live in private memory, addrspace 5: scratch); calls lists every call that is
// not an intrinsic, kind "defined" (a body that was not inlined), "external" (a declaration,
// resolved by the device-library link) or "indirect". Input that is not LLVM assembly text
// (bitcode, NUL bytes, a syntax error, a module that fails the verifier) throws
// std::runtime_error with LLVM's diagnostic; nothing is read out of bounds.
std::string facts_json(const std::string& text);

}  // namespace i8g::llvm_ir

// The plugin's one C entry point (dlsym'ed by the worker: no C++ types cross the boundary).
// op 'T': bitcode -> text; op 'F': text -> facts JSON. Returns 0 and the answer in *out, or
// non-zero and the message in *out; *out is malloc'ed and released with i8g_llvm_ir_free.
extern "C" int i8g_llvm_ir_run(char op, const char* in, size_t in_size, char** out, size_t* out_size);
extern "C" void i8g_llvm_ir_free(char* p);

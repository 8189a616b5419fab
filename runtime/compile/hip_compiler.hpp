// The AMD backend: hipRTC behind the Compiler interface, and comgr's disassembler. Each call
// runs in a fresh helper process, i8gemm_hiprtc_worker (runtime/compile/child_process.hpp,
// runtime/compile/hiprtc_work.hpp): comgr aborts the process on targets it cannot handle, and that must
// become an Error, never the caller's death. No AMD GPU is lent here: these kernels are
// compiled and audited, never executed.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "runtime/compile/compiler.hpp"

namespace i8g {

// Targets this hipRTC (ROCm 5.2, comgr 2.4) compiles: gfx908, gfx90a. gfx940/941/942 and
// gfx11xx make its comgr abort the process.
bool hip_arch_supported(const std::string& arch);
// Empty when supported, else the one-line refusal ("gfx942 is not supported by ...").
std::string hip_arch_refusal(const std::string& arch);

// What hipRTC gets for `arch`; hip_compile_isolated records exactly these in Binary::options.
std::vector<std::string> hip_options(const std::string& arch);

// Throws Error for an unsupported arch (up front, no helper started), when the helper is not
// found, or when hipRTC/comgr cannot be opened.
std::unique_ptr<Compiler> make_hip_compiler(const Target& target);

// Compiles `src` for `arch` with no up-front refusal: only the helper process stands between
// comgr and the caller. For tests of that isolation; everything else uses make_hip_compiler.
Binary hip_compile_isolated(const Source& src, const std::string& arch);

// comgr's disassembly (LLVM of the same build as the compiler) of an AMDGPU ELF, in the helper
// process. Throws Error when comgr fails or dies.
std::string amd_disassemble(const std::vector<uint8_t>& elf, const std::string& arch);

// The LLVM IR reader's facts (runtime/compile/llvm_ir/llvm_ir.hpp: facts_json) of LLVM
// assembly text, read with LLVM 15 in the helper process. Throws Error when the text is not
// valid IR, or when the helper fails or dies (a crash of LLVM's parser stays in the helper).
std::string amd_ir_facts(const std::string& ir);

}  // namespace i8g

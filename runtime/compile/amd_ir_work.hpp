// The AMD backend's LLVM IR, on the worker's side (i8gemm_hiprtc_worker only). hipRTC 5.2 hands
// out the code object and nothing else, so the worker compiles the same source a second time
// with comgr itself (the same embedded templates, hipRTC's runtime header and options) to
// optimized bitcode, and turns that into text with the LLVM comgr is built on (LLVM 15,
// through the plugin libi8gemm_llvm_ir.so next to the worker: runtime/compile/llvm_ir/).
// The text is the kernel's IR after -O3, before the device-library link and codegen.
#pragma once
#include <string>

#include "runtime/compile/compiler.hpp"

namespace i8g::hiprtc_work {

// LLVM assembly text of `src` for `arch`. Throws Error (comgr's log, or why the plugin is absent).
std::string llvm_ir_text(const Source& src, const std::string& arch);

// The IR reader's facts (llvm_ir.hpp: facts_json) of LLVM assembly `text`. Throws Error.
std::string llvm_ir_facts(const std::string& text);

}  // namespace i8g::hiprtc_work

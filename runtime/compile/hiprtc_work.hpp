// The AMD backend's work that needs hipRTC or comgr (compile, version, disassemble), and the
// byte protocol that carries it to and from the helper executable i8gemm_hiprtc_worker
// (runtime/compile/hiprtc_worker/). The library only builds requests and reads answers; serve() runs in
// the worker, the only process that ever maps hipRTC or comgr.
//
// Request: one op byte ('V' version, 'C' compile, 'D' disassemble, 'I' IR facts) then length-prefixed fields
// (8-byte little-endian length, bytes). Answer on the worker's stdout: kAnswerMagic, then 'O'
// and the payload, or 'E', the failing call, a NUL and the message.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/compile/compiler.hpp"

namespace i8g::hiprtc_work {

// Changes whenever the request or answer format does: a worker of another build is refused.
inline constexpr char kAnswerMagic[] = "i8gemm-hiprtc-worker/2\n";

void put(std::string& out, const std::string& field);
// The next field at `pos` (advanced); throws Error("hiprtc worker", "truncated ...").
std::string take(const std::string& in, size_t& pos);

std::string version_request();
std::string compile_request(const Source& src, const std::string& arch);
std::string disassemble_request(const std::vector<uint8_t>& elf, const std::string& arch);
std::string ir_facts_request(const std::string& ir);

// Worker side: runs one request and returns its payload (compile: [lowered name][code object
// as hipRTC gave it][log][LLVM IR text][why the IR is missing, or empty] as fields; version
// and disassemble: the text; IR facts: llvm_ir::facts_json's document). Throws Error.
std::string serve(const std::string& request);

}  // namespace i8g::hiprtc_work

// Source -> Binary: one interface for NVRTC and hipRTC (runtime/compile/hip_compiler.hpp). The compiler knows nothing
// about GEMM; it turns a Source (code + name expression) into a loadable image plus the text a
// human or the report needs (IR, the whole compiler log, the options used).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/source.hpp"
#include "core/target.hpp"

namespace i8g {

struct Binary {
  std::string name;            // Source::name
  std::string arch;            // Target::arch, e.g. "sm_90a"
  std::string entry;           // the name expression compiled
  std::string lowered_name;    // mangled symbol in the CUBIN / code object
  std::vector<uint8_t> image;  // CUBIN bytes, or the AMDGPU code object (ELF)
  std::string ir;              // PTX text (nvrtcGetPTX), or LLVM IR text (AMD: runtime/compile/amd_ir_work.hpp)
  std::string log;             // whole compiler log, embedded NUL bytes mapped to '\n'
  std::vector<std::string> options;
  std::string compiler;        // e.g. "nvrtc 13.0", "hiprtc 5.2.21153 comgr 2.4"
  double compile_ms = 0;
};

class Compiler {
 public:
  virtual ~Compiler() = default;
  // Throws Error (where = "nvrtcCompileProgram" etc.) carrying the whole log on failure.
  virtual Binary compile(const Source& src, const Target& target) const = 0;
  virtual std::string version() const = 0;  // "nvrtc 13.0"
  // The options compile() passes for `target`, known before compiling: they are part of a
  // binary's cache key (a release that changes a flag must not be served old binaries).
  virtual std::vector<std::string> options(const Target& target) const = 0;
};

// NVRTC for NVIDIA targets, hipRTC for AMD ones (gfx908, gfx90a; others refused up front).
std::unique_ptr<Compiler> make_compiler(const Target& target);

// The options NVRTC gets for `target` (exposed so tests and the cache key can see them).
std::vector<std::string> nvrtc_options(const Target& target);
// The options this build's compiler for `target` uses (NVRTC or hipRTC), without making the
// compiler (no hipRTC helper is started): what `inspect` and `cache gc` compare keys against.
std::vector<std::string> compile_options(const Target& target);

struct CompileOutcome {
  std::optional<Binary> binary;
  std::string error;  // empty when binary is set
};

// Compiles in `threads` worker threads (0 = hardware concurrency); results in input order; a
// failure is an outcome, not an exception. `progress` is called (serialized) after each source.
// `finished(i, outcome)` (optional) sees each outcome as soon as source i is done, before the
// progress call, so a caller can keep finished work (store it) while the rest still compiles;
// finished and progress never run concurrently, and an exception from either is swallowed (a
// worker thread must not die of an observer).
std::vector<CompileOutcome> compile_all(const Compiler& compiler, const std::vector<Source>& sources,
                                        const Target& target, int threads,
                                        const std::function<void(size_t done, size_t total)>& progress = {},
                                        const std::function<void(size_t index, CompileOutcome& outcome)>& finished = {});

}  // namespace i8g

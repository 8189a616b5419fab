// hipRTC backend of Compiler. Every hipRTC/comgr call runs in the helper executable
// i8gemm_hiprtc_worker (runtime/compile/hiprtc_work.cpp; started with posix_spawn, never a bare fork),
// which sends back [lowered name][code object][log] as length-prefixed fields; this process
// never maps hipRTC or comgr. hiprtcGetLoweredName returns null for our explicit
// instantiations, so the kernel symbol is then taken from the code object's metadata (one
// kernel per emitted source).
#include "runtime/compile/hip_compiler.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cstring>

#include "core/options.hpp"
#include "runtime/compile/amd_code_object.hpp"
#include "runtime/compile/child_process.hpp"
#include "runtime/compile/hiprtc_work.hpp"

namespace i8g {
namespace {

#ifdef I8G_HAVE_HIP
// One request to a fresh worker process.
std::string ask_worker(const std::string& what, const std::string& request) {
  const std::string exe = find_helper("i8gemm_hiprtc_worker", {options().hiprtc_worker, "I8GEMM_HIPRTC_WORKER"});
  return run_helper(what, exe, {"--serve"}, request, hiprtc_work::kAnswerMagic);
}
#endif

#ifndef I8G_HAVE_HIP
[[noreturn]] void no_hip() {
  throw Error("hiprtc", "this build has no AMD backend (hip/hiprtc.h and amd_comgr.h were not found at configure time)");
}
#endif

class HipCompiler final : public Compiler {
 public:
  explicit HipCompiler(std::string version) : version_(std::move(version)) {}
  Binary compile(const Source& src, const Target& target) const override {
    if (!target.amd) throw Error("HipCompiler::compile", "hipRTC cannot compile for " + target.arch);
    if (const std::string why = hip_arch_refusal(target.arch); !why.empty()) throw Error("HipCompiler::compile", why);
    Binary b = hip_compile_isolated(src, target.arch);
    b.compiler = version_;
    return b;
  }
  std::string version() const override { return version_; }
  std::vector<std::string> options(const Target& target) const override { return hip_options(target.arch); }

 private:
  std::string version_;
};

}  // namespace

bool hip_arch_supported(const std::string& arch) { return arch == "gfx908" || arch == "gfx90a"; }

std::string hip_arch_refusal(const std::string& arch) {
  if (hip_arch_supported(arch)) return {};
  return fmt::format("{} is not supported by this hipRTC (ROCm 5.2); supported: gfx908, gfx90a", arch);
}

std::vector<std::string> hip_options(const std::string& arch) {
  // -ffp-contract=off: HIP clang fuses a*b+c by default; the epilogue must be bit-exact.
  return {"--offload-arch=" + arch, "-O3", "-std=c++17", "-ffp-contract=off"};
}

Binary hip_compile_isolated(const Source& src, const std::string& arch) {
#ifndef I8G_HAVE_HIP
  (void)src;
  (void)arch;
  no_hip();
#else
  if (src.entry.empty()) throw Error("hip_compile", src.name + ": empty entry");
  const auto start = std::chrono::steady_clock::now();
  const std::string raw =
      ask_worker("hiprtc (" + src.name + " for " + arch + ")", hiprtc_work::compile_request(src, arch));
  Binary b;
  b.name = src.name;
  b.arch = arch;
  b.entry = src.entry;
  b.options = hip_options(arch);
  size_t pos = 0;
  b.lowered_name = hiprtc_work::take(raw, pos);
  const std::string code = hiprtc_work::take(raw, pos);
  b.log = hiprtc_work::take(raw, pos);
  b.ir = hiprtc_work::take(raw, pos);
  if (const std::string why = hiprtc_work::take(raw, pos); !why.empty()) b.log += "\n[i8gemm] no LLVM IR: " + why + "\n";
  b.image = extract_code_object(std::vector<uint8_t>(code.begin(), code.end()), arch);
  if (b.lowered_name.empty()) {
    const AmdCodeObject co = read_amd_code_object(b.image);
    if (co.kernels.size() != 1)
      throw Error("hip_compile", fmt::format("{}: expected one kernel in the code object, found {}", src.name, co.kernels.size()));
    b.lowered_name = co.kernels[0].name;
  }
  b.compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return b;
#endif
}

std::string amd_disassemble(const std::vector<uint8_t>& elf, const std::string& arch) {
#ifndef I8G_HAVE_HIP
  (void)elf;
  (void)arch;
  no_hip();
#else
  if (const std::string why = hip_arch_refusal(arch); !why.empty()) throw Error("amd_disassemble", why);
  return ask_worker("comgr disassembly", hiprtc_work::disassemble_request(elf, arch));
#endif
}

std::string amd_ir_facts(const std::string& ir) {
#ifndef I8G_HAVE_HIP
  (void)ir;
  no_hip();
#else
  return ask_worker("LLVM IR reader", hiprtc_work::ir_facts_request(ir));
#endif
}

std::unique_ptr<Compiler> make_hip_compiler(const Target& target) {
  if (const std::string why = hip_arch_refusal(target.arch); !why.empty()) throw Error("make_compiler", why);
#ifndef I8G_HAVE_HIP
  no_hip();
#else
  // One short worker run per process: this process never maps hipRTC or comgr.
  static const std::string version = ask_worker("hiprtc version", hiprtc_work::version_request());
  return std::make_unique<HipCompiler>(version);
#endif
}

}  // namespace i8g

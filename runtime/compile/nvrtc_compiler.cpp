// NVRTC backend of Compiler. Each compile owns its nvrtcProgram (RAII), so several threads can
// compile at once (NVRTC is thread-safe across distinct programs).
#include <algorithm>
#include <chrono>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/embedded.hpp"
#include "runtime/compile/compiler.hpp"
#include "runtime/compile/hip_compiler.hpp"
#include "runtime/compile/nvrtc_lib.hpp"

namespace i8g {
namespace {

void check(nvrtcResult r, const char* where, const std::string& what) {
  if (r != NVRTC_SUCCESS) throw Error(where, fmt::format("{}: {}", what, nvrtc().nvrtcGetErrorString(r)));
}

// Refuses, before compiling, an arch this NVRTC does not know (sm_100 and sm_120 need 12.8 or
// later), naming the library and what it can compile.
void require_arch(const Target& target, const std::string& version) {
  int n = 0;
  check(nvrtc().nvrtcGetNumSupportedArchs(&n), "nvrtcGetNumSupportedArchs", target.arch);
  std::vector<int> archs(size_t(std::max(n, 0)));
  if (n > 0) check(nvrtc().nvrtcGetSupportedArchs(archs.data()), "nvrtcGetSupportedArchs", target.arch);
  if (std::find(archs.begin(), archs.end(), target.sm) != archs.end()) return;
  throw Error(ErrorKind::unsupported, "nvrtc",
              fmt::format("{} ({}) cannot compile for {}: it knows sm_{}. Use a newer toolkit's NVRTC "
                          "(I8GEMM_NVRTC names the library to load)",
                          version, nvrtc().path, target.arch, fmt::join(archs, ", sm_")));
}

// Owns one nvrtcProgram; destroyed on every path, including exceptions.
class Program {
 public:
  explicit Program(const Source& src) {
    const auto& files = embedded_templates();
    std::vector<const char*> texts, names;
    for (const auto& f : files) {
      names.push_back(f.path);
      texts.push_back(f.text);
    }
    check(nvrtc().nvrtcCreateProgram(&prog_, src.code.c_str(), (src.name + ".cu").c_str(),
                             static_cast<int>(files.size()), texts.data(), names.data()),
          "nvrtcCreateProgram", src.name);
  }
  ~Program() { nvrtc().nvrtcDestroyProgram(&prog_); }
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;
  nvrtcProgram get() const { return prog_; }

 private:
  nvrtcProgram prog_ = nullptr;
};

// The log holds NUL bytes between ptxas blocks; keep all logSize bytes, NULs as newlines,
// and drop only the final terminator.
std::string program_log(nvrtcProgram prog) {
  size_t size = 0;
  if (nvrtc().nvrtcGetProgramLogSize(prog, &size) != NVRTC_SUCCESS || size == 0) return {};
  std::string log(size, '\0');
  if (nvrtc().nvrtcGetProgramLog(prog, &log[0]) != NVRTC_SUCCESS) return {};
  if (!log.empty() && log.back() == '\0') log.pop_back();
  for (char& c : log)
    if (c == '\0') c = '\n';
  return log;
}

class NvrtcCompiler final : public Compiler {
 public:
  Binary compile(const Source& src, const Target& target) const override;
  std::string version() const override {
    int major = 0, minor = 0;
    check(nvrtc().nvrtcVersion(&major, &minor), "nvrtcVersion", "version");
    return fmt::format("nvrtc {}.{}", major, minor);
  }
  std::vector<std::string> options(const Target& target) const override { return nvrtc_options(target); }
};

Binary NvrtcCompiler::compile(const Source& src, const Target& target) const {
  if (target.amd) throw Error("NvrtcCompiler::compile", "NVRTC cannot compile for " + target.arch);
  if (src.entry.empty()) throw Error("NvrtcCompiler::compile", src.name + ": empty entry");
  auto start = std::chrono::steady_clock::now();
  Binary b;
  b.name = src.name;
  b.arch = target.arch;
  b.entry = src.entry;
  b.options = options(target);
  b.compiler = version();
  require_arch(target, b.compiler);

  Program prog(src);
  check(nvrtc().nvrtcAddNameExpression(prog.get(), src.entry.c_str()), "nvrtcAddNameExpression", src.entry);
  std::vector<const char*> opts;
  for (const auto& o : b.options) opts.push_back(o.c_str());
  nvrtcResult r = nvrtc().nvrtcCompileProgram(prog.get(), static_cast<int>(opts.size()), opts.data());
  b.log = program_log(prog.get());
  if (r != NVRTC_SUCCESS)
    throw Error("nvrtcCompileProgram", fmt::format("{} for {}: {}\n{}", src.name, target.arch,
                                                   nvrtc().nvrtcGetErrorString(r), b.log));

  const char* lowered = nullptr;
  check(nvrtc().nvrtcGetLoweredName(prog.get(), src.entry.c_str(), &lowered), "nvrtcGetLoweredName",
        src.entry);
  b.lowered_name = lowered ? lowered : "";

  size_t size = 0;
  check(nvrtc().nvrtcGetCUBINSize(prog.get(), &size), "nvrtcGetCUBINSize", src.name);
  b.image.resize(size);
  if (size) check(nvrtc().nvrtcGetCUBIN(prog.get(), reinterpret_cast<char*>(b.image.data())), "nvrtcGetCUBIN", src.name);

  check(nvrtc().nvrtcGetPTXSize(prog.get(), &size), "nvrtcGetPTXSize", src.name);
  b.ir.assign(size, '\0');
  if (size) check(nvrtc().nvrtcGetPTX(prog.get(), &b.ir[0]), "nvrtcGetPTX", src.name);
  while (!b.ir.empty() && b.ir.back() == '\0') b.ir.pop_back();

  b.compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return b;
}

}  // namespace

std::vector<std::string> nvrtc_options(const Target& target) {
  // Never --use_fast_math: the epilogue must be bit-exact. One -Xptxas per ptxas flag.
  return {"--gpu-architecture=" + target.arch,
          "--std=c++17",
          "-default-device",
          "-Xptxas",
          "-v",
          "-Xptxas",
          "-warn-spills"};
}

std::vector<std::string> compile_options(const Target& target) {
  return target.amd ? hip_options(target.arch) : nvrtc_options(target);
}

std::unique_ptr<Compiler> make_compiler(const Target& target) {
  if (target.amd) return make_hip_compiler(target);
  if (target.arch.rfind("sm_", 0) != 0)
    throw Error("make_compiler", "not an NVIDIA arch: '" + target.arch + "'");
  return std::make_unique<NvrtcCompiler>();
}

}  // namespace i8g

// hipRTC backend of Compiler. The child process opens hipRTC and comgr, compiles, and sends
// back [lowered name][code object][log] as length-prefixed fields; the parent never maps
// them. hipRTC 5.2 quirks, checked here: hiprtcVersion() answers 9.0 (not the HIP version,
// so the version string comes from hipRuntimeGetVersion, which needs no GPU), and
// hiprtcGetLoweredName returns null for our explicit instantiations, so the kernel symbol is
// taken from the code object's metadata (one kernel per emitted source).
#include "runtime/hip_compiler.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cstring>

#include "generator/embedded.hpp"
#include "runtime/amd_code_object.hpp"
#include "runtime/child_process.hpp"
#include "runtime/rocm_libs.hpp"

namespace i8g {
namespace {

void put(std::string& out, const void* p, size_t n) {
  const uint64_t len = n;
  out.append(reinterpret_cast<const char*>(&len), 8);
  out.append(static_cast<const char*>(p), n);
}
void put(std::string& out, const std::string& s) { put(out, s.data(), s.size()); }

std::string take(const std::string& in, size_t& pos) {
  uint64_t len = 0;
  if (in.size() - pos < 8) throw Error("hiprtc child", "truncated result");
  std::memcpy(&len, in.data() + pos, 8);
  pos += 8;
  if (len > in.size() - pos) throw Error("hiprtc child", "truncated result");
  std::string s = in.substr(pos, len);
  pos += len;
  return s;
}

#ifdef I8G_HAVE_HIP
// Owns one hiprtcProgram (destroyed on every path).
class Program {
 public:
  Program(const RocmLibs& h, const Source& src) : h_(h) {
    std::vector<const char*> texts, names;
    for (const auto& f : embedded_templates()) {
      names.push_back(f.path);
      texts.push_back(f.text);
    }
    check(h.hiprtcCreateProgram(&prog_, src.code.c_str(), (src.name + ".hip").c_str(), int(texts.size()),
                                texts.data(), names.data()),
          "hiprtcCreateProgram");
  }
  ~Program() { if (prog_) h_.hiprtcDestroyProgram(&prog_); }
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;
  hiprtcProgram get() const { return prog_; }
  void check(hiprtcResult r, const char* where) const {
    if (r != HIPRTC_SUCCESS) throw Error(where, h_.hiprtcGetErrorString(r));
  }

 private:
  const RocmLibs& h_;
  hiprtcProgram prog_ = nullptr;
};

std::string compile_in_child(const Source& src, const std::string& arch) {
  const RocmLibs& h = rocm_libs();
  Program prog(h, src);
  prog.check(h.hiprtcAddNameExpression(prog.get(), src.entry.c_str()), "hiprtcAddNameExpression");
  const std::vector<std::string> options = hip_options(arch);
  std::vector<const char*> opts;
  for (const auto& o : options) opts.push_back(o.c_str());
  const hiprtcResult r = h.hiprtcCompileProgram(prog.get(), int(opts.size()), opts.data());
  size_t size = 0;
  std::string log;
  if (h.hiprtcGetProgramLogSize(prog.get(), &size) == HIPRTC_SUCCESS && size > 0) {
    log.assign(size, '\0');
    if (h.hiprtcGetProgramLog(prog.get(), &log[0]) != HIPRTC_SUCCESS) log.clear();
    while (!log.empty() && log.back() == '\0') log.pop_back();
    for (char& c : log) if (c == '\0') c = '\n';
  }
  if (r != HIPRTC_SUCCESS)
    throw Error("hiprtcCompileProgram", fmt::format("{} for {}: {}\n{}", src.name, arch, h.hiprtcGetErrorString(r), log));
  const char* lowered = nullptr;
  if (h.hiprtcGetLoweredName(prog.get(), src.entry.c_str(), &lowered) != HIPRTC_SUCCESS) lowered = nullptr;
  prog.check(h.hiprtcGetCodeSize(prog.get(), &size), "hiprtcGetCodeSize");
  std::string code(size, '\0');
  if (size) prog.check(h.hiprtcGetCode(prog.get(), &code[0]), "hiprtcGetCode");
  std::string out;
  put(out, std::string(lowered ? lowered : ""));
  put(out, code);
  put(out, log);
  return out;
}

std::string version_in_child() {
  const RocmLibs& h = rocm_libs();
  int hip = 0;
  if (!h.hipRuntimeGetVersion || h.hipRuntimeGetVersion(&hip) != 0) hip = 0;
  size_t major = 0, minor = 0;
  h.amd_comgr_get_version(&major, &minor);
  // HIP_VERSION = major * 10^7 + minor * 10^5 + patch.
  return fmt::format("hiprtc {}.{}.{} comgr {}.{}", hip / 10000000, hip / 100000 % 100, hip % 100000, major, minor);
}

std::string disassemble_in_child(const std::vector<uint8_t>& elf, const std::string& arch) {
  const RocmLibs& h = rocm_libs();
  auto check = [&](amd_comgr_status_t s, const char* where) {
    if (s == AMD_COMGR_STATUS_SUCCESS) return;
    const char* text = nullptr;
    h.amd_comgr_status_string(s, &text);
    throw Error(where, text ? text : "comgr error");
  };
  amd_comgr_data_t data{}, text_data{};
  amd_comgr_data_set_t in{}, out{};
  amd_comgr_action_info_t info{};
  // The child exits right after: comgr handles are released with the process.
  check(h.amd_comgr_create_data(AMD_COMGR_DATA_KIND_EXECUTABLE, &data), "amd_comgr_create_data");
  check(h.amd_comgr_set_data(data, elf.size(), reinterpret_cast<const char*>(elf.data())), "amd_comgr_set_data");
  check(h.amd_comgr_set_data_name(data, "kernel.co"), "amd_comgr_set_data_name");
  check(h.amd_comgr_create_data_set(&in), "amd_comgr_create_data_set");
  check(h.amd_comgr_create_data_set(&out), "amd_comgr_create_data_set");
  check(h.amd_comgr_data_set_add(in, data), "amd_comgr_data_set_add");
  check(h.amd_comgr_create_action_info(&info), "amd_comgr_create_action_info");
  check(h.amd_comgr_action_info_set_isa_name(info, ("amdgcn-amd-amdhsa--" + arch).c_str()), "amd_comgr_action_info_set_isa_name");
  check(h.amd_comgr_do_action(AMD_COMGR_ACTION_DISASSEMBLE_EXECUTABLE_TO_SOURCE, info, in, out), "amd_comgr_do_action(disassemble)");
  check(h.amd_comgr_action_data_get_data(out, AMD_COMGR_DATA_KIND_SOURCE, 0, &text_data), "amd_comgr_action_data_get_data");
  size_t size = 0;
  check(h.amd_comgr_get_data(text_data, &size, nullptr), "amd_comgr_get_data");
  std::string text(size, '\0');
  if (size) check(h.amd_comgr_get_data(text_data, &size, &text[0]), "amd_comgr_get_data");
  return text;
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
  const std::string raw = run_in_child("hiprtc (" + src.name + " for " + arch + ")",
                                       [&] { return compile_in_child(src, arch); });
  Binary b;
  b.name = src.name;
  b.arch = arch;
  b.entry = src.entry;
  b.options = hip_options(arch);
  size_t pos = 0;
  b.lowered_name = take(raw, pos);
  const std::string code = take(raw, pos);
  b.log = take(raw, pos);
  b.image = extract_code_object(std::vector<uint8_t>(code.begin(), code.end()), arch);
  if (b.lowered_name.empty()) {
    const AmdCodeObject co = read_amd_code_object(b.image);
    if (co.kernels.size() != 1)
      throw Error("hip_compile", fmt::format("{}: expected one kernel in the code object, found {}", src.name, co.kernels.size()));
    b.lowered_name = co.kernels[0].name;
  }
  // No readable IR: hipRTC 5.2 hands out the code object only (no bitcode or assembly API).
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
  return run_in_child("comgr disassembly", [&] { return disassemble_in_child(elf, arch); });
#endif
}

std::unique_ptr<Compiler> make_hip_compiler(const Target& target) {
  if (const std::string why = hip_arch_refusal(target.arch); !why.empty()) throw Error("make_compiler", why);
#ifndef I8G_HAVE_HIP
  no_hip();
#else
  // One short child per compiler object: the parent never maps hipRTC or comgr.
  static const std::string version = run_in_child("hiprtc version", [] { return version_in_child(); });
  return std::make_unique<HipCompiler>(version);
#endif
}

}  // namespace i8g

// hipRTC 5.2 quirks, checked here: hiprtcVersion() answers 9.0 (not the HIP version, so the
// version string comes from hipRuntimeGetVersion, which needs no GPU), and hiprtcGetLoweredName
// returns null for our explicit instantiations (the caller then takes the kernel symbol from
// the code object's metadata; one kernel per emitted source).
#include "runtime/compile/hiprtc_work.hpp"

#include <fmt/format.h>

#include <cstring>

#include "core/embedded.hpp"
#include "runtime/compile/amd_ir_work.hpp"
#include "runtime/compile/hip_compiler.hpp"
#include "runtime/compile/rocm_libs.hpp"

namespace i8g::hiprtc_work {

void put(std::string& out, const std::string& field) {
  const uint64_t len = field.size();
  char bytes[8];
  for (int i = 0; i < 8; ++i) bytes[i] = char((len >> (8 * i)) & 0xff);
  out.append(bytes, 8);
  out.append(field);
}

std::string take(const std::string& in, size_t& pos) {
  if (pos > in.size() || in.size() - pos < 8) throw Error("hiprtc worker", "truncated message (a length is missing)");
  uint64_t len = 0;
  for (int i = 0; i < 8; ++i) len |= uint64_t(uint8_t(in[pos + size_t(i)])) << (8 * i);
  pos += 8;
  if (len > in.size() - pos) throw Error("hiprtc worker", "truncated message (a field is shorter than its length)");
  std::string s = in.substr(pos, size_t(len));
  pos += size_t(len);
  return s;
}

std::string version_request() { return "V"; }

std::string compile_request(const Source& src, const std::string& arch) {
  std::string r = "C";
  put(r, src.name);
  put(r, src.code);
  put(r, src.entry);
  put(r, arch);
  return r;
}

std::string ir_facts_request(const std::string& ir) {
  std::string r = "I";
  put(r, ir);
  return r;
}

std::string disassemble_request(const std::vector<uint8_t>& elf, const std::string& arch) {
  std::string r = "D";
  put(r, std::string(elf.begin(), elf.end()));
  put(r, arch);
  return r;
}

#ifdef I8G_HAVE_HIP
namespace {

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

std::string compile(const Source& src, const std::string& arch) {
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
  // The IR is a second opinion, not the product: its failure is reported, never fatal.
  std::string ir, ir_error;
  try {
    ir = llvm_ir_text(src, arch);
  } catch (const Error& e) {
    ir_error = e.where() + ": " + e.message();
  }
  put(out, ir);
  put(out, ir_error);
  return out;
}

std::string version() {
  const RocmLibs& h = rocm_libs();
  int hip = 0;
  if (!h.hipRuntimeGetVersion || h.hipRuntimeGetVersion(&hip) != 0) hip = 0;
  size_t major = 0, minor = 0;
  h.amd_comgr_get_version(&major, &minor);
  // HIP_VERSION = major * 10^7 + minor * 10^5 + patch.
  return fmt::format("hiprtc {}.{}.{} comgr {}.{}", hip / 10000000, hip / 100000 % 100, hip % 100000, major, minor);
}

std::string disassemble(const std::string& elf, const std::string& arch) {
  const RocmLibs& h = rocm_libs();
  auto check = [&](amd_comgr_status_t s, const char* where) {
    if (s == AMD_COMGR_STATUS_SUCCESS) return;
    const char* text = nullptr;
    h.amd_comgr_status_string(s, &text);
    throw Error(where, text ? text : "comgr error");
  };
  amd_comgr_data_t data{};
  amd_comgr_data_set_t in{}, out{};
  amd_comgr_action_info_t info{};
  // The worker exits right after: comgr handles are released with the process.
  check(h.amd_comgr_create_data(AMD_COMGR_DATA_KIND_EXECUTABLE, &data), "amd_comgr_create_data");
  check(h.amd_comgr_set_data(data, elf.size(), elf.data()), "amd_comgr_set_data");
  check(h.amd_comgr_set_data_name(data, "kernel.co"), "amd_comgr_set_data_name");
  check(h.amd_comgr_create_data_set(&in), "amd_comgr_create_data_set");
  check(h.amd_comgr_create_data_set(&out), "amd_comgr_create_data_set");
  check(h.amd_comgr_data_set_add(in, data), "amd_comgr_data_set_add");
  check(h.amd_comgr_create_action_info(&info), "amd_comgr_create_action_info");
  check(h.amd_comgr_action_info_set_isa_name(info, ("amdgcn-amd-amdhsa--" + arch).c_str()), "amd_comgr_action_info_set_isa_name");
  check(h.amd_comgr_do_action(AMD_COMGR_ACTION_DISASSEMBLE_EXECUTABLE_TO_SOURCE, info, in, out), "amd_comgr_do_action(disassemble)");
  return comgr_bytes(out, AMD_COMGR_DATA_KIND_SOURCE, 0, "comgr disassembly");
}

}  // namespace
#endif

std::string serve(const std::string& request) {
  if (request.empty()) throw Error("hiprtc worker", "empty request");
#ifndef I8G_HAVE_HIP
  throw Error("hiprtc", "this build has no AMD backend (hip/hiprtc.h and amd_comgr.h were not found at configure time)");
#else
  size_t pos = 1;
  switch (request[0]) {
    case 'V':
      return version();
    case 'C': {
      Source src;
      src.name = take(request, pos);
      src.code = take(request, pos);
      src.entry = take(request, pos);
      const std::string arch = take(request, pos);
      return compile(src, arch);
    }
    case 'I':
      return llvm_ir_facts(take(request, pos));
    case 'D': {
      const std::string elf = take(request, pos);
      const std::string arch = take(request, pos);
      return disassemble(elf, arch);
    }
  }
  throw Error("hiprtc worker", fmt::format("unknown request op 0x{:02x}", unsigned(uint8_t(request[0]))));
#endif
}

}  // namespace i8g::hiprtc_work

#include "runtime/compile/amd_ir_work.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <climits>
#include <cstring>
#include <cstdlib>

#include "core/embedded.hpp"
#include "runtime/compile/hip_compiler.hpp"
#include "runtime/compile/rocm_libs.hpp"

namespace i8g::hiprtc_work {

namespace {

constexpr const char* kPlugin = "libi8gemm_llvm_ir.so";

// The plugin next to this executable (the worker); loaded once, after comgr has mapped
// libLLVM-15.so.1, which the plugin then shares.
struct Plugin {
  int (*run)(char, const char*, size_t, char**, size_t*) = nullptr;
  void (*release)(char*) = nullptr;
  std::string why;
};

const Plugin& plugin() {
  static const Plugin p = [] {
    Plugin p;
#ifndef I8G_HAVE_LLVM_IR
    p.why = "this build has no LLVM IR reader (llvm-15-dev was not found at configure time)";
#else
    char exe[PATH_MAX];
    const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    std::string path = kPlugin;
    if (n > 0) {
      std::string self(exe, size_t(n));
      path = self.substr(0, self.rfind('/') + 1) + kPlugin;
    }
    void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      p.why = "the LLVM IR reader could not be loaded: " + std::string(dlerror());
      return p;
    }
    p.run = reinterpret_cast<decltype(p.run)>(dlsym(h, "i8g_llvm_ir_run"));
    p.release = reinterpret_cast<decltype(p.release)>(dlsym(h, "i8g_llvm_ir_free"));
    if (!p.run || !p.release) p.why = path + " lacks i8g_llvm_ir_run / i8g_llvm_ir_free";
#endif
    return p;
  }();
  return p;
}

std::string call_plugin(char op, const std::string& in, const char* where) {
  const Plugin& p = plugin();
  if (!p.why.empty()) throw Error(where, p.why);
  char* out = nullptr;
  size_t size = 0;
  const int rc = p.run(op, in.data(), in.size(), &out, &size);
  if (!out) throw Error(where, "the LLVM IR reader ran out of memory");
  std::string answer(out, size);
  p.release(out);
  if (rc != 0) throw Error(where, answer);
  return answer;
}

#ifdef I8G_HAVE_HIP
// comgr's objects for one compile; the worker exits right after, which releases them.
std::string comgr_bitcode(const Source& src, const std::string& arch) {
  const RocmLibs& h = rocm_libs();
  amd_comgr_data_set_t in{}, out{};
  amd_comgr_action_info_t info{};
  auto log_of = [&]() {
    size_t count = 0;
    std::string text;
    if (h.amd_comgr_action_data_count(out, AMD_COMGR_DATA_KIND_LOG, &count) != AMD_COMGR_STATUS_SUCCESS) return text;
    for (size_t i = 0; i < count; ++i) {
      try {
        text += comgr_bytes(out, AMD_COMGR_DATA_KIND_LOG, i, "comgr log");
      } catch (const Error&) {  // a log that cannot be read adds nothing to the error it explains
      }
    }
    return text;
  };
  auto check = [&](amd_comgr_status_t s, const char* where) {
    if (s == AMD_COMGR_STATUS_SUCCESS) return;
    const char* text = nullptr;
    h.amd_comgr_status_string(s, &text);
    throw Error(where, std::string(text ? text : "comgr error") + (out.handle ? "\n" + log_of() : ""));
  };
  auto add = [&](amd_comgr_data_kind_t kind, const std::string& name, const char* bytes, size_t size) {
    amd_comgr_data_t d{};
    check(h.amd_comgr_create_data(kind, &d), "amd_comgr_create_data");
    check(h.amd_comgr_set_data(d, size, bytes), "amd_comgr_set_data");
    check(h.amd_comgr_set_data_name(d, name.c_str()), "amd_comgr_set_data_name");
    check(h.amd_comgr_data_set_add(in, d), "amd_comgr_data_set_add");
  };
  if (!h.hiprtc_header) throw Error("llvm_ir_text", "libhiprtc-builtins.so.5 (hipRTC's runtime header) was not found");
  check(h.amd_comgr_create_data_set(&in), "amd_comgr_create_data_set");
  check(h.amd_comgr_create_data_set(&out), "amd_comgr_create_data_set");
  add(AMD_COMGR_DATA_KIND_SOURCE, src.name + ".hip", src.code.data(), src.code.size());
  add(AMD_COMGR_DATA_KIND_INCLUDE, "hiprtc_runtime.h", h.hiprtc_header, h.hiprtc_header_size);
  for (const auto& f : embedded_templates()) add(AMD_COMGR_DATA_KIND_INCLUDE, f.path, f.text, std::strlen(f.text));
  // hipRTC's own additions (-include of its header, no GPU include path), then our options
  // less --offload-arch, which comgr takes as the ISA name.
  std::vector<std::string> options = {"-include", "hiprtc_runtime.h", "-nogpuinc"};
  for (const std::string& o : hip_options(arch))
    if (o.rfind("--offload-arch=", 0) != 0) options.push_back(o);
  std::vector<const char*> argv;
  for (const std::string& o : options) argv.push_back(o.c_str());
  check(h.amd_comgr_create_action_info(&info), "amd_comgr_create_action_info");
  check(h.amd_comgr_action_info_set_isa_name(info, ("amdgcn-amd-amdhsa--" + arch).c_str()), "amd_comgr_action_info_set_isa_name");
  check(h.amd_comgr_action_info_set_language(info, AMD_COMGR_LANGUAGE_HIP), "amd_comgr_action_info_set_language");
  check(h.amd_comgr_action_info_set_option_list(info, argv.data(), argv.size()), "amd_comgr_action_info_set_option_list");
  check(h.amd_comgr_action_info_set_logging(info, true), "amd_comgr_action_info_set_logging");
  check(h.amd_comgr_do_action(AMD_COMGR_ACTION_COMPILE_SOURCE_WITH_DEVICE_LIBS_TO_BC, info, in, out),
        "amd_comgr_do_action(compile to bitcode)");
  return comgr_bytes(out, AMD_COMGR_DATA_KIND_BC, 0, "comgr bitcode");
}
#endif

}  // namespace

std::string llvm_ir_text(const Source& src, const std::string& arch) {
#ifndef I8G_HAVE_HIP
  (void)src;
  (void)arch;
  throw Error("llvm_ir_text", "this build has no AMD backend");
#else
  // comgr first: its libLLVM-15.so.1 is then the one the plugin binds to.
  const std::string bitcode = comgr_bitcode(src, arch);
  return call_plugin('T', bitcode, "llvm_ir_text");
#endif
}

std::string llvm_ir_facts(const std::string& text) { return call_plugin('F', text, "llvm_ir_facts"); }

}  // namespace i8g::hiprtc_work

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
  amd_comgr_data_set_t in{}, out{};  // out: the last action's output (empty before the first)
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
  add(AMD_COMGR_DATA_KIND_SOURCE, src.name + ".hip", src.code.data(), src.code.size());
  add(AMD_COMGR_DATA_KIND_INCLUDE, "hiprtc_runtime.h", h.hiprtc_header, h.hiprtc_header_size);
  for (const auto& f : embedded_templates()) add(AMD_COMGR_DATA_KIND_INCLUDE, f.path, f.text, std::strlen(f.text));
  // The actions and options hipRTC 5.2 runs (seen with AMD_COMGR_EMIT_VERBOSE_LOGS=1): the
  // source to bitcode in prelink mode, with its -include of its header and no GPU include path,
  // then our options less --offload-arch, which comgr takes as the ISA name; the device
  // libraries added and linked; then code generation, which runs the -O3 pipeline over the
  // linked module once more (where a constant K loop may be unrolled whole). That last action,
  // told to stop at bitcode (-emit-llvm), gives the module the code generator sees: the IR
  // whose MFMA intrinsics are the ISA's v_mfma (a replay with the one-step
  // COMPILE_SOURCE_WITH_DEVICE_LIBS_TO_BC action kept a 6-step K loop rolled that hipRTC unrolls).
  std::vector<std::string> options = {"-include", "hiprtc_runtime.h", "-nogpuinc", "-mllvm", "-amdgpu-prelink"};
  for (const std::string& o : hip_options(arch))
    if (o.rfind("--offload-arch=", 0) != 0) options.push_back(o);
  auto make_info = [&](const std::vector<std::string>& opts) {
    amd_comgr_action_info_t i{};
    check(h.amd_comgr_create_action_info(&i), "amd_comgr_create_action_info");
    check(h.amd_comgr_action_info_set_isa_name(i, ("amdgcn-amd-amdhsa--" + arch).c_str()), "amd_comgr_action_info_set_isa_name");
    check(h.amd_comgr_action_info_set_language(i, AMD_COMGR_LANGUAGE_HIP), "amd_comgr_action_info_set_language");
    std::vector<const char*> argv;
    for (const std::string& o : opts) argv.push_back(o.c_str());
    if (!argv.empty())
      check(h.amd_comgr_action_info_set_option_list(i, argv.data(), argv.size()), "amd_comgr_action_info_set_option_list");
    check(h.amd_comgr_action_info_set_logging(i, true), "amd_comgr_action_info_set_logging");
    return i;
  };
  // Each action's output set becomes `out` (whose log an error then carries) and the next input.
  auto act = [&](amd_comgr_action_kind_t kind, amd_comgr_action_info_t i, const char* what) {
    amd_comgr_data_set_t next{};
    check(h.amd_comgr_create_data_set(&next), "amd_comgr_create_data_set");
    const amd_comgr_data_set_t from = out.handle ? out : in;
    out = next;
    check(h.amd_comgr_do_action(kind, i, from, out), what);
  };
  act(AMD_COMGR_ACTION_COMPILE_SOURCE_TO_BC, make_info(options), "amd_comgr_do_action(compile to bitcode)");
  const amd_comgr_action_info_t plain = make_info({});
  act(AMD_COMGR_ACTION_ADD_DEVICE_LIBRARIES, plain, "amd_comgr_do_action(add device libraries)");
  act(AMD_COMGR_ACTION_LINK_BC_TO_BC, plain, "amd_comgr_do_action(link bitcode)");
  act(AMD_COMGR_ACTION_CODEGEN_BC_TO_RELOCATABLE,
      make_info({"-O3", "-mllvm", "-amdgpu-internalize-symbols", "-emit-llvm"}),
      "amd_comgr_do_action(optimize for code generation)");
  std::string bc = comgr_bytes(out, AMD_COMGR_DATA_KIND_RELOCATABLE, 0, "comgr bitcode");
  if (bc.compare(0, 4, "BC\xC0\xDE") != 0)
    throw Error("llvm_ir_text", "comgr's code generation step returned no bitcode (-emit-llvm not honoured)");
  return bc;
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

#include "runtime/compile/rocm_libs.hpp"

#ifdef I8G_HAVE_HIP
#include <dlfcn.h>

#include <cstdint>
#include <cstring>

#include <string>

#include "core/error.hpp"

namespace i8g {
namespace {

// The runtime package's soname first, then the path CMake found at configure time.
void* open_first(const char* soname, const char* configured, std::string& why) {
  for (const char* name : {soname, configured}) {
    if (!name || !*name) continue;
    if (void* h = dlopen(name, RTLD_NOW | RTLD_LOCAL)) return h;
    why += std::string(dlerror()) + "; ";
  }
  return nullptr;
}

struct Loaded {
  RocmLibs libs;
  std::string why;  // empty when loaded
};

Loaded load() {
  Loaded l;
  std::string why;
  void* hip = open_first("libamdhip64.so.5", I8G_AMDHIP64_PATH, why);
  void* comgr = open_first("libamd_comgr.so.2", I8G_COMGR_PATH, why);
  if (!hip || !comgr) {
    l.why = "hipRTC/comgr not available (install libamdhip64-dev libhiprtc-builtins5 libamd-comgr-dev): " + why;
    return l;
  }
  auto sym = [&](const char* name) -> void* {
    void* p = dlsym(hip, name);
    if (!p) p = dlsym(comgr, name);
    if (!p && l.why.empty()) l.why = std::string("ROCm libraries lack ") + name;
    return p;
  };
#define I8G_ROCM_FN(name) l.libs.name = reinterpret_cast<decltype(l.libs.name)>(sym(#name));
#include "runtime/compile/rocm_fns.inc"
#undef I8G_ROCM_FN
  l.libs.hipRuntimeGetVersion = reinterpret_cast<int (*)(int*)>(sym("hipRuntimeGetVersion"));
  if (void* builtins = dlopen("libhiprtc-builtins.so.5", RTLD_NOW | RTLD_LOCAL)) {
    const void* text = dlsym(builtins, "__hipRTC_header");
    const void* size = dlsym(builtins, "__hipRTC_header_size");
    if (text && size) {
      l.libs.hiprtc_header = static_cast<const char*>(text);
      // A 4-byte unsigned int, 4-byte aligned (ROCm 5.2's builtins library: readelf shows it
      // 4 bytes before the header's end), not a size_t.
      uint32_t n = 0;
      std::memcpy(&n, size, sizeof n);
      l.libs.hiprtc_header_size = n;
    }
  }
  return l;
}

}  // namespace

const RocmLibs& rocm_libs() {
  static const Loaded l = load();
  if (!l.why.empty()) throw Error("rocm_libs", l.why);
  return l.libs;
}

std::string comgr_bytes(amd_comgr_data_set_t set, amd_comgr_data_kind_t kind, size_t index, const char* where) {
  const RocmLibs& h = rocm_libs();
  auto check = [&](amd_comgr_status_t s) {
    if (s == AMD_COMGR_STATUS_SUCCESS) return;
    const char* text = nullptr;
    h.amd_comgr_status_string(s, &text);
    throw Error(where, text ? text : "comgr error");
  };
  amd_comgr_data_t d{};
  check(h.amd_comgr_action_data_get_data(set, kind, index, &d));
  size_t size = 0;
  check(h.amd_comgr_get_data(d, &size, nullptr));
  std::string bytes(size, '\0');
  if (size) check(h.amd_comgr_get_data(d, &size, &bytes[0]));
  return bytes;
}

}  // namespace i8g
#endif

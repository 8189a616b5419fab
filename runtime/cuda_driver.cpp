#include "runtime/cuda_driver.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <mutex>

#include "generator/error.hpp"

namespace i8g {
namespace {

struct Loaded {
  Driver driver;
  bool ok = false;
  std::string why;
};

Loaded load() {
  Loaded l;
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    l.why = "no CUDA driver (libcuda.so.1 could not be opened)";
    return l;
  }
  using GetProc = CUresult (*)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);
  auto get_proc = reinterpret_cast<GetProc>(dlsym(lib, "cuGetProcAddress_v2"));
  if (!get_proc) {
    l.why = "the CUDA driver is too old (no cuGetProcAddress_v2; CUDA 12 or later is needed)";
    return l;
  }
  bool missing = false;
#define I8G_DRIVER_FN(name)                                                                 \
  {                                                                                         \
    void* p = nullptr;                                                                      \
    CUdriverProcAddressQueryResult q;                                                       \
    if (get_proc(#name, &p, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &q) != CUDA_SUCCESS || \
        !p) {                                                                               \
      if (!missing) l.why = std::string("the CUDA driver lacks ") + #name;                  \
      missing = true;                                                                       \
    }                                                                                       \
    l.driver.name = reinterpret_cast<decltype(l.driver.name)>(p);                           \
  }
#include "runtime/cuda_driver_fns.inc"
#undef I8G_DRIVER_FN
  if (missing) return l;
  const CUresult r = l.driver.cuInit(0);
  if (r != CUDA_SUCCESS) {
    const char* name = nullptr;
    const char* text = nullptr;
    l.driver.cuGetErrorName(r, &name);
    l.driver.cuGetErrorString(r, &text);
    l.why = fmt::format("no CUDA device (cuInit: {}: {})", name ? name : "?", text ? text : "?");
    return l;
  }
  int count = 0;
  if (l.driver.cuDeviceGetCount(&count) != CUDA_SUCCESS || count == 0) {
    l.why = "no CUDA device (the driver sees none)";
    return l;
  }
  l.ok = true;
  return l;
}

}  // namespace

const Driver* Driver::get(std::string* why) {
  static const Loaded loaded = load();
  if (!loaded.ok) {
    if (why) *why = loaded.why;
    return nullptr;
  }
  return &loaded.driver;
}

const Driver& driver() {
  std::string why;
  const Driver* d = Driver::get(&why);
  if (!d) throw Error("cuda", why);
  return *d;
}

void check_cu(CUresult r, const char* call) {
  if (r == CUDA_SUCCESS) return;
  const char* name = nullptr;
  const char* text = nullptr;
  if (const Driver* d = Driver::get()) {
    d->cuGetErrorName(r, &name);
    d->cuGetErrorString(r, &text);
  }
  std::string c(call);
  if (auto p = c.find('('); p != std::string::npos) c.erase(p);
  throw Error(c, fmt::format("{}: {}", name ? name : fmt::format("CUresult {}", int(r)),
                             text ? text : "unknown error"));
}

}  // namespace i8g

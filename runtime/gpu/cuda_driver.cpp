#include "runtime/gpu/cuda_driver.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <mutex>

#include "core/error.hpp"
#include "core/shared_library.hpp"

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
  // dlsym the exact symbol the header maps each name to (cuMemAlloc -> cuMemAlloc_v2), so
  // every pointer has the ABI of the prototype it is called through. (cuGetProcAddress would
  // hand out the newest version for CUDA_VERSION, e.g. the 3-argument cuStreamGetCtx_v2.)
#define I8G_STR2(x) #x
#define I8G_STR(x) I8G_STR2(x)
#define I8G_DRIVER_FN(name) \
  l.driver.name = reinterpret_cast<decltype(l.driver.name)>(library_symbol(lib, I8G_STR(name), "the CUDA driver", l.why));
#include "runtime/gpu/cuda_driver_fns.inc"
#undef I8G_DRIVER_FN
  if (!l.why.empty()) return l;
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
  if (!d) throw Error(ErrorKind::no_device, "cuda", why);
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
  if (r == CUDA_ERROR_OUT_OF_MEMORY) {
    // Out of memory is the one failure a caller can act on: say so plainly, with the device's
    // free memory now (from the current context, when there is one).
    size_t free_b = 0, total_b = 0;
    const Driver* d = Driver::get();
    const bool known = d && d->cuMemGetInfo(&free_b, &total_b) == CUDA_SUCCESS;
    throw Error(
        ErrorKind::out_of_memory, c, fmt::format("out of device memory (CUDA_ERROR_OUT_OF_MEMORY){}",
                       known ? fmt::format("; {} MiB of {} MiB free on the device now", free_b >> 20, total_b >> 20)
                             : std::string()));
  }
  throw Error(ErrorKind::cuda, c, fmt::format("{}: {}", name ? name : fmt::format("CUresult {}", int(r)),
                             text ? text : "unknown error"));
}

}  // namespace i8g

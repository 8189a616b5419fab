#include "runtime/compile/nvrtc_lib.hpp"

#include <memory>

#include "core/error.hpp"
#include "core/options.hpp"

namespace i8g {

const std::vector<LibraryVersion>& nvrtc_versions() {
  static const std::vector<LibraryVersion> v = {{"libnvrtc.so.13", "nvidia/cu13/lib", 13},
                                                {"libnvrtc.so.12", "nvidia/cuda_nvrtc/lib", 12}};
  return v;
}

std::unique_ptr<Nvrtc> load_nvrtc(const LibrarySearch& where, std::string& why) {
  const OpenedLibrary lib = open_library(nvrtc_versions(), where, "NVRTC", "I8GEMM_NVRTC");
  if (!lib.handle) {
    why = lib.why;
    return nullptr;
  }
  auto n = std::make_unique<Nvrtc>();
  n->path = lib.path;
  std::string missing;
#define I8G_NVRTC_FN(name) \
  n->name = reinterpret_cast<decltype(n->name)>(library_symbol(lib.handle, #name, lib.path, missing));
#include "runtime/compile/nvrtc_fns.inc"
#undef I8G_NVRTC_FN
  if (!missing.empty()) {
    why = missing;
    return nullptr;
  }
  return n;
}

const Nvrtc& nvrtc() {
  struct Loaded {
    std::string why;
    std::unique_ptr<Nvrtc> nvrtc;
  };
  static const Loaded loaded = [] {
    Loaded l;
    l.nvrtc = load_nvrtc(library_search(options().nvrtc), l.why);
    return l;
  }();
  if (!loaded.nvrtc) throw Error(ErrorKind::unsupported, "nvrtc", loaded.why);
  return *loaded.nvrtc;
}

}  // namespace i8g

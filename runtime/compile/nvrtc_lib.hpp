// NVRTC, opened with dlopen on first use (core/shared_library.hpp): libnvrtc.so.13, then
// libnvrtc.so.12, from $I8GEMM_NVRTC, the loader's path, pip's nvidia-* wheels or the toolkit.
// Nothing links it, so every binary starts without it and only compiling needs it; a binary's
// cache key holds the NVRTC version that compiled it.
#pragma once
#include <nvrtc.h>

#include <memory>
#include <string>
#include <vector>

#include "core/shared_library.hpp"

namespace i8g {

struct Nvrtc {
#define I8G_NVRTC_FN(name) decltype(&::name) name = nullptr;
#include "runtime/compile/nvrtc_fns.inc"
#undef I8G_NVRTC_FN
  std::string path;  // the copy that was opened
};

// The versions searched for, newest first, with their wheels' folders.
const std::vector<LibraryVersion>& nvrtc_versions();

// Opens NVRTC as `where` says (the library stays open for the process); on failure, fills
// `why` (what was tried) and returns nullptr. For tests; the library uses nvrtc().
std::unique_ptr<Nvrtc> load_nvrtc(const LibrarySearch& where, std::string& why);

// The process-wide NVRTC (searched once, as options() says), or Error(unsupported, "nvrtc",
// <every place tried>).
const Nvrtc& nvrtc();

}  // namespace i8g

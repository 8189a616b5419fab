// hipRTC and comgr, opened with dlopen only where they are used: inside the AMD backend's
// helper process, i8gemm_hiprtc_worker. Binaries never link them, so every binary starts on a
// machine without ROCm (the GPU machine has none), and the caller's process never maps comgr.
#pragma once
#ifdef I8G_HAVE_HIP
#include <amd_comgr.h>
#include <hip/hiprtc.h>

#include <string>

namespace i8g {

struct RocmLibs {
#define I8G_ROCM_FN(name) decltype(&::name) name = nullptr;
#include "runtime/compile/rocm_fns.inc"
#undef I8G_ROCM_FN
  int (*hipRuntimeGetVersion)(int*) = nullptr;  // declared by hip_runtime_api.h, not hiprtc.h
  // hipRTC's built-in runtime header (libhiprtc-builtins.so.5), which a plain comgr compile of
  // the same source needs too (-include hiprtc_runtime.h); null when that library is absent.
  const char* hiprtc_header = nullptr;
  size_t hiprtc_header_size = 0;
};

// Opens both libraries (once per process) or throws Error saying which is missing.
const RocmLibs& rocm_libs();

// The bytes of the index-th data object of `kind` in a comgr data set (an action's result), or
// throws Error naming `where` and comgr's status.
std::string comgr_bytes(amd_comgr_data_set_t set, amd_comgr_data_kind_t kind, size_t index, const char* where);

}  // namespace i8g
#endif

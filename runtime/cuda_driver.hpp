// The CUDA driver API, opened with dlopen("libcuda.so.1") so that every binary starts (and
// CPU tests run) on a machine with no GPU driver. Function pointers come from
// cuGetProcAddress for the toolkit's CUDA_VERSION.
#pragma once
#include <cuda.h>

#include <string>

namespace i8g {

struct Driver {
#define I8G_DRIVER_FN(name) decltype(&::name) name = nullptr;
#include "runtime/cuda_driver_fns.inc"
#undef I8G_DRIVER_FN

  // The process-wide driver, initialized once (cuInit); nullptr when there is none, with the
  // reason in *why ("libcuda.so.1 not found", "cuInit: no CUDA-capable device ...").
  static const Driver* get(std::string* why = nullptr);
};

// Throws Error("<call>", "<CUDA error name>: <description>") unless r == CUDA_SUCCESS.
void check_cu(CUresult r, const char* call);

// The driver or an Error("cuda", "no CUDA device: ...").
const Driver& driver();

#define I8G_CU(call) ::i8g::check_cu(::i8g::driver().call, #call)

}  // namespace i8g

// The CUDA driver API, opened with dlopen("libcuda.so.1") so that every binary starts (and
// CPU tests run) on a machine with no GPU driver. Function pointers come from
// cuGetProcAddress for the toolkit's CUDA_VERSION.
#pragma once
#include <cuda.h>

#include <string>

#include "core/error.hpp"

namespace i8g {

struct Driver {
#define I8G_DRIVER_FN(name) decltype(&::name) name = nullptr;
#include "runtime/gpu/cuda_driver_fns.inc"
#undef I8G_DRIVER_FN

  // The process-wide driver, initialized once (cuInit); nullptr when there is none, with the
  // reason in *why ("libcuda.so.1 not found", "cuInit: no CUDA-capable device ...").
  static const Driver* get(std::string* why = nullptr);
};

// Throws Error(cuda, "<call>", "<CUDA error name>: <description>") unless r == CUDA_SUCCESS;
// for CUDA_ERROR_OUT_OF_MEMORY the kind is out_of_memory (not sticky: the context stays usable
// once memory is freed) and the message says how much of the current context's device is free.
void check_cu(CUresult r, const char* call);

// The driver or an Error(no_device, "cuda", "no CUDA device: ...").
const Driver& driver();

#define I8G_CU(call) ::i8g::check_cu(::i8g::driver().call, #call)

}  // namespace i8g

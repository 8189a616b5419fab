// Small handwritten kernels and a compile cache shared by the runtime tests (no GPU needed:
// NVRTC compiles to CUBIN without a driver).
#pragma once
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "runtime/compile/compiler.hpp"

namespace i8g::test {

// A dp4a loop over a __shared__ tile with barriers: non-zero smem, barriers and IDP in SASS.
inline Source dp4a_source() {
  return {"test_dp4a", R"(
template <int N>
__global__ void __launch_bounds__(256) dp4a_kernel(const int* a, const int* b, int* out, int n) {
  __shared__ int tile[N];
  int acc = 0;
  for (int i = threadIdx.x; i < n; i += blockDim.x) {
    tile[threadIdx.x % N] = a[i];
    __syncthreads();
    acc = __dp4a(tile[(threadIdx.x + 1) % N], b[i], acc);
    __syncthreads();
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}
)",
          "dp4a_kernel<1024>"};
}

// 64 live values under a 32-register cap: ptxas must spill to the stack.
inline Source spill_source() {
  return {"test_spill", R"(
__global__ void __maxnreg__(32) spill_kernel(const int* a, int* o) {
  int v[64];
#pragma unroll
  for (int i = 0; i < 64; ++i) v[i] = a[threadIdx.x + i * 1024];
  int s = 0;
#pragma unroll
  for (int j = 0; j < 8; ++j) {
#pragma unroll
    for (int i = 0; i < 64; ++i) s += (v[i] * v[(i + j) % 64]) ^ j;
  }
  o[threadIdx.x] = s;
}
)",
          "spill_kernel"};
}

// No shared memory, no barriers.
inline Source plain_source() {
  return {"test_plain", "__global__ void plain_kernel(int* o) { o[threadIdx.x] = threadIdx.x; }\n",
          "plain_kernel"};
}

inline Source broken_source() {
  return {"test_broken",
          "__global__ void broken_kernel(int* o) { o[0] = undeclared_one; o[1] = undeclared_two }\n",
          "broken_kernel"};
}

// Each (source, arch) is compiled once per test binary.
inline const Binary& compiled(const Source& src, const std::string& arch) {
  static std::mutex mu;
  static std::map<std::pair<std::string, std::string>, Binary> done;
  std::lock_guard<std::mutex> lock(mu);
  auto key = std::make_pair(src.name, arch);
  auto it = done.find(key);
  if (it == done.end()) {
    Target t = Target::from_arch(arch);
    it = done.emplace(key, make_compiler(t)->compile(src, t)).first;
  }
  return it->second;
}

}  // namespace i8g::test

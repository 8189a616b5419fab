// What a wgmma_tma launch spends on the host for its tensor maps (issue 12: "maps encoded in
// prepare, never in the run path"): cuTensorMapEncodeTiled for the x and w maps, as every launch
// did until session 30, against OperandMapCache's lookup of maps seen before (what a launch
// does now after its operands' first call). Host only: no kernel runs, no memory is touched
// (the maps are encoded over made-up 1 KiB-aligned addresses; the driver does not read them).
// Prints ns per launch's maps, median of 21 batches of 2000.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include "core/target.hpp"
#include "generator/generator.hpp"
#include "runtime/gpu/cuda_driver.hpp"
#include "runtime/gpu/device.hpp"
#include "runtime/gpu/tensor_map.hpp"

using namespace i8g;

template <class F>
double ns_per_call(F&& f) {
  constexpr int kBatches = 21, kCalls = 2000;
  std::vector<double> ns;
  for (int b = 0; b < kBatches; ++b) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < kCalls; ++i) f(i);
    ns.push_back(std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() / kCalls);
  }
  std::nth_element(ns.begin(), ns.begin() + kBatches / 2, ns.end());
  return ns[kBatches / 2];
}

int main() {
  std::string why;
  if (!Driver::get(&why)) {
    fmt::print(stderr, "no CUDA driver: {}\n", why);
    return 1;
  }
  // cuTensorMapEncodeTiled needs a current context (session 31's first run on the H100 stopped
  // here with CUDA_ERROR_INVALID_CONTEXT): device 0's primary context, as the runtime uses.
  const DeviceInfo dev = query_device(0);
  CUcontext ctx = nullptr;
  I8G_CU(cuDevicePrimaryCtxRetain(&ctx, dev.device));
  I8G_CU(cuCtxSetCurrent(ctx));
  fmt::print("{:<16} {:>6} {:>14} {:>14} {:>12}\n", "shape", "M", "encode ns", "cached ns", "encode/cached");
  for (const auto& [n, k] : {std::pair<int64_t, int64_t>{4096, 4096}, {2560, 4096}, {28672, 4096}})
    for (int64_t m : {64, 1024, 4096}) {
      const GemmProblem p{n, k};
      const Target t = Target::from_arch("sm_90a");
      const KernelSpec spec{p, heuristic_default(p, t, m), t.arch};
      I8gArgs a{};
      a.m = m;
      a.n = n;
      a.k = k;
      // Eight weights (layers of one shape) and two activation buffers, taken in turn.
      auto at = [](uintptr_t i) { return reinterpret_cast<const int8_t*>(uintptr_t(1) << 40 | i << 30); };
      volatile unsigned sink = 0;
      const double encode = ns_per_call([&](int i) {
        a.x = at(uintptr_t(i % 2));
        a.w = at(uintptr_t(2 + i % 8));
        const OperandMaps maps = operand_tensor_maps(spec, a);
        sink = sink + reinterpret_cast<const unsigned char*>(&maps.w)[0];
      });
      OperandMapCache cache(spec);
      const double cached = ns_per_call([&](int i) {
        a.x = at(uintptr_t(i % 2));
        a.w = at(uintptr_t(2 + i % 8));
        const OperandMaps maps = cache.maps(a);
        sink = sink + reinterpret_cast<const unsigned char*>(&maps.w)[0];
      });
      fmt::print("{:<16} {:>6} {:>14.0f} {:>14.0f} {:>12.1f}\n", fmt::format("{}x{}", n, k), m, encode, cached,
                 encode / cached);
    }
  driver().cuDevicePrimaryCtxRelease(dev.device);
  return 0;
}

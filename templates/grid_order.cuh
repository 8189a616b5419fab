// Programmatic dependent launch (sm_90 and later). The runtime launches a generated kernel with
// programmatic stream serialization (runtime/gpu/kernel_instance.cpp): its grid may be launched
// before the kernel ahead of it in the stream has completed, so that the launch overlaps that
// kernel's tail. Every generated kernel calls grid_order() before its first global memory access
// (a read of x, w, the scales or the split-K counters, any store): `griddepcontrol.wait` returns
// once the grids this one depends on have completed and their writes are visible (at once when
// the launch had no such dependency). Before sm_90 the call is empty.
//
// No kernel signals `griddepcontrol.launch_dependents`, so the next grid launches as this one's
// blocks exit. Signalling at the start of each block (the next grid's blocks then wait on the
// SMs as they free up), or in decode_mma after its main loop and in wgmma_tma's producer after
// its last load, measured 0.92-0.99x the time without PDL on 16 of 20 points and 1.01-1.23x on
// the other four (4096x14336 at M = 1, 64, 256 among them); the wait alone 0.90-0.99x on 19 of 20
// (H200, session 16: docs/pdl.md).
#pragma once

namespace i8g {

__device__ __forceinline__ void grid_order() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
}

}  // namespace i8g

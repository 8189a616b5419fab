// Programmatic dependent launch (sm_90 and later). The runtime launches a generated kernel with
// programmatic stream serialization (runtime/gpu/kernel_instance.cpp): its grid may be launched
// before the kernel ahead of it in the stream has completed, so that the launch overlaps that
// kernel's tail. Every generated kernel calls grid_order() before its first global memory access
// (a read of x, w, the scales or the split-K counters, any store): `griddepcontrol.wait` returns
// once the grids this one depends on have completed and their writes are visible (at once when
// the launch had no such dependency). Before sm_90 the call is empty.
//
// By default no kernel signals `griddepcontrol.launch_dependents`, so the next grid launches as
// this one's blocks exit. decode_mma and wgmma_tma take a TRIG parameter (the generator's
// pdl_trigger): 1 signals right after the wait, 2 late (decode_mma after its main loop, wgmma_tma's
// producer after its last load), so the next grid's blocks are placed while this one's last
// blocks run. Session 16 measured either trigger 0.92-0.99x the time without PDL on 16 of 20
// untuned points and 1.01-1.23x on the other four (4096x14336 at M = 1, 64, 256 among them);
// session 41 0.95-0.99x on six tuned winners. So the tuner races the triggers as twins of its
// finalists (docs/pdl.md). The signal only schedules: the next grid's wait still returns only
// once this grid has completed and its writes are visible.
#pragma once

namespace i8g {

__device__ __forceinline__ void grid_order() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
}

// Lets the grids that depend on this one launch once every block has signalled or exited.
__device__ __forceinline__ void launch_dependents() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
#endif
}

}  // namespace i8g

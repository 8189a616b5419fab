// Split-K's meeting point, shared by mma_sync (a whole block per tile slice, __syncthreads),
// wgmma_tma (one consumer warpgroup per tile slice or half tile, named barriers) and decode_mma
// (the warps that hold the block's reduced tile, a named barrier). Layout: splitk.h.
//
// Every slice of a tile stores its int32 accumulators into its own partial, then counts itself
// in with one atomic; the slice that arrives last adds the other slices' partials to its own
// registers in slice order, resets the counter for the next launch and runs the epilogue.
// Integer adds are exact and commute, so the sum is the unsplit one, bit for bit, whatever the
// arrival order. No slice ever waits for another, so no residency or ordering of the blocks can
// deadlock it.
//
// Memory ordering: every thread stores its partial; a barrier over the group; then one thread's
// atom.add.acq_rel.gpu on the counter. Its release half is cumulative over the group's stores,
// which the barrier ordered before it (CUTLASS's split-K semaphore: a barrier, then a release
// from one thread); its acquire half, on the last slice, reads the end of the release sequence
// every other slice's add belongs to, so their partials are visible after it. The barrier that
// broadcasts "last" orders that acquire before every thread's loads, which read L2
// (ld.global.cg), never a possibly stale L1 line. (Until session 17 this was two
// __threadfence() calls, fence.sc.gpu, around a relaxed atomicAdd.)
#pragma once
#include "splitk.h"

namespace i8g {

// A barrier over the THREADS threads (whole warps) that use named barrier `id`, returning
// whether any of them passed true: a split-K group smaller than its block (wgmma_tma's consumer
// warpgroup, whose producer has returned; decode_mma's reducing warps) cannot use
// __syncthreads_or.
template <int THREADS>
__device__ __forceinline__ bool named_group_or(int id, bool p) {
  unsigned any;
  asm volatile(
      "{\n"
      ".reg .pred p, q;\n"
      "setp.ne.u32 p, %1, 0;\n"
      "bar.red.or.pred q, %2, %3, p;\n"
      "selp.u32 %0, 1, 0, q;\n"
      "}\n"
      : "=r"(any)
      : "r"(unsigned(p)), "r"(id), "n"(THREADS)
      : "memory");
  return any != 0;
}

// The counter's add with acquire-release semantics at GPU scope (see the ordering above).
__device__ __forceinline__ int splitk_count_in(int* counter) {
  int old;
  asm volatile("atom.add.acq_rel.gpu.global.s32 %0, [%1], 1;\n" : "=r"(old) : "l"(counter) : "memory");
  return old;
}

// `group_or(p)`: a barrier over exactly the THREADS threads of the group (tid 0..THREADS-1)
// that returns whether any of them passed true. `acc`: the thread's 4 * V accumulators;
// `counter`: the group's arrival counter; `parts`: the group's int4s in slice 0's partial,
// slice z's `slice_int4s * z` further. Returns true on the last slice, its acc then the sum.
// LOADS: how many int4 loads of the other slices' partials may be in flight at once (registers
// the caller can spare): the last slice reads max(1, LOADS / V) partials per round trip through
// L2, in slice order. The default, V, reads one partial at a time (the register footprint the
// families that keep a register budget were measured with).
template <int V, int THREADS, int SPLIT_K, int LOADS = V, class GroupOr>
__device__ __forceinline__ bool splitk_reduce(int* acc, int* counter, int4* parts, long long slice_int4s, int slice,
                                              int tid, GroupOr group_or) {
  int4* mine = parts + slice * slice_int4s + tid;
#pragma unroll
  for (int v = 0; v < V; ++v)
    __stcg(mine + v * THREADS, make_int4(acc[4 * v], acc[4 * v + 1], acc[4 * v + 2], acc[4 * v + 3]));
  group_or(false);  // every thread's partial is stored
  bool last = false;
  if (tid == 0) {
    last = splitk_count_in(counter) == SPLIT_K - 1;  // release; on the last slice, acquire
    if (last) *counter = 0;  // no other slice touches it again this launch
  }
  if (!group_or(last)) return false;
  constexpr int OTHERS = SPLIT_K - 1;
  constexpr int PER = LOADS / V < 1 ? 1 : (LOADS / V > OTHERS ? OTHERS : LOADS / V);  // partials per round trip
  if constexpr (PER == 1) {  // one partial at a time: the loop the register-budgeted families were measured with
#pragma unroll 1
    for (int z = 0; z < SPLIT_K; ++z) {
      if (z == slice) continue;
      const int4* other = parts + z * slice_int4s + tid;
#pragma unroll
      for (int v = 0; v < V; ++v) {
        const int4 q = __ldcg(other + v * THREADS);
        acc[4 * v] += q.x;
        acc[4 * v + 1] += q.y;
        acc[4 * v + 2] += q.z;
        acc[4 * v + 3] += q.w;
      }
    }
    return true;
  }
#pragma unroll 1
  for (int o0 = 0; o0 < OTHERS; o0 += PER) {
    int4 q[PER][V];
#pragma unroll
    for (int j = 0; j < PER; ++j) {
      const int o = o0 + j;  // the o-th other slice: slice numbers skip this one's
      if (o < OTHERS) {
        const int4* other = parts + (o + (o >= slice ? 1 : 0)) * slice_int4s + tid;
#pragma unroll
        for (int v = 0; v < V; ++v) q[j][v] = __ldcg(other + v * THREADS);
      }
    }
#pragma unroll
    for (int j = 0; j < PER; ++j)
      if (o0 + j < OTHERS)
#pragma unroll
        for (int v = 0; v < V; ++v) {
          acc[4 * v] += q[j][v].x;
          acc[4 * v + 1] += q[j][v].y;
          acc[4 * v + 2] += q[j][v].z;
          acc[4 * v + 3] += q[j][v].w;
        }
  }
  return true;
}

}  // namespace i8g

// PTX wrappers for the Hopper (sm_90) asynchronous copy machinery, shared by the families that
// use it (wgmma_tma; tma_store.cuh): TMA tensor maps, bulk tensor loads (plain and multicast)
// and stores, mbarriers, thread-block clusters (ranks, mapa, cluster barriers, st.async into a
// partner), setmaxnreg and wgmma.wait_group. Each is one instruction or one fixed sequence; what
// the kernels do with them is in their own files.
#pragma once

namespace i8g {
namespace tma {

// A CUtensorMap as cuTensorMapEncodeTiled writes it: 128 opaque bytes, 64-byte aligned (NVRTC
// has no cuda.h; CUTLASS's TmaDescriptor is the same shape).
struct alignas(64) Desc {
  unsigned long long opaque[16];
};

__device__ __forceinline__ void mbar_init(unsigned bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
// Makes the initialized barriers visible to the async proxy (TMA) and the other threads; a
// __syncthreads follows it before any use.
__device__ __forceinline__ void mbar_fence_init() { asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory"); }
// One arrival plus `bytes` expected from TMA copies that complete_tx on this barrier.
__device__ __forceinline__ void mbar_arrive_expect_tx(unsigned bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_arrive(unsigned bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
// Returns once the phase of parity `parity` has completed (a fresh barrier counts its parity-1
// phase as completed, so the producer's first pass over the empty slots does not wait). The
// suspend-time hint (up to 10 ms before the thread polls again, as CUTLASS's waits) was meant to
// keep long waiters from spinning; on the H200 it changed neither time nor instruction count
// (docs/wgmma_tma.md, session 8 run 3).
constexpr unsigned kSuspendHintNs = 10000000;
// SEM: "" (acquire at CTA scope, the default) or ".acquire.cluster".
#define I8G_MBAR_WAIT(SEM)                                                   \
  "{\n"                                                                      \
  ".reg .pred done;\n"                                                       \
  "WAIT:\n"                                                                  \
  "mbarrier.try_wait.parity" SEM ".shared::cta.b64 done, [%0], %1, %2;\n"    \
  "@!done bra WAIT;\n"                                                       \
  "}\n"
__device__ __forceinline__ void mbar_wait(unsigned bar, unsigned parity) {
  asm volatile(I8G_MBAR_WAIT("") ::"r"(bar), "r"(parity), "n"(kSuspendHintNs) : "memory");
}
// The same wait with acquire semantics at cluster scope, for a phase completed by another
// block's st.async, whose complete_tx releases at cluster scope: the pattern of the PTX ISA and
// of CUDA's st.async example. It adds an L1 invalidation (CCTL.IVALL) per wait; K pairs wait
// this way once per tile.
__device__ __forceinline__ void mbar_wait_cluster(unsigned bar, unsigned parity) {
  asm volatile(I8G_MBAR_WAIT(".acquire.cluster") ::"r"(bar), "r"(parity), "n"(kSuspendHintNs) : "memory");
}
#undef I8G_MBAR_WAIT

// --- thread-block clusters (CM > 1) ---------------------------------------------------------
// This block's rank in its cluster, the cluster's index in the grid and the number of clusters
// (along x: the launch's clusters are {CM, 1, 1}).
__device__ __forceinline__ unsigned cluster_rank() {
  unsigned r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return r;
}
__device__ __forceinline__ unsigned cluster_index() {
  unsigned r;
  asm volatile("mov.u32 %0, %%clusterid.x;\n" : "=r"(r));
  return r;
}
__device__ __forceinline__ unsigned cluster_count() {
  unsigned r;
  asm volatile("mov.u32 %0, %%nclusterid.x;\n" : "=r"(r));
  return r;
}
// The shared::cluster address of the same offset as this block's shared::cta address `addr` in
// block `rank` of the cluster.
__device__ __forceinline__ unsigned map_to_rank(unsigned addr, unsigned rank) {
  unsigned r;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(r) : "r"(addr), "r"(rank));
  return r;
}
// One arrival on a barrier of another block of the cluster (`bar` from map_to_rank). Default
// semantics (release at CTA scope), as CUTLASS's consumer release: what it orders is the
// wgmma reads of a stage (async proxy, completed by wgmma.wait_group) before the other block's
// TMA overwrites the stage, which the barrier itself sequences; a .release.cluster arrive
// compiles to MEMBAR.ALL.GPU, and the matching .acquire.cluster wait to CCTL.IVALL (the whole
// L1 invalidated), on every K tile.
__device__ __forceinline__ void mbar_arrive_remote(unsigned bar) {
  asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
// Every non-exited thread of the cluster arrives, then waits for the others. After the barriers'
// initialization (fence.mbarrier_init.release.cluster by the initializing thread orders it; the
// arrive can be relaxed, the pattern the PTX ISA gives), executed by whole warps (`aligned`) ...
__device__ __forceinline__ void cluster_sync_after_init() {
  asm volatile(
      "barrier.cluster.arrive.relaxed.aligned;\n"
      "barrier.cluster.wait.acquire.aligned;\n" ::
          : "memory");
}
// ... and at the end, by any thread on its own (a warp may hold a single thread there), every
// earlier access of the thread (its remote arrivals) released to the cluster.
__device__ __forceinline__ void cluster_sync() {
  asm volatile(
      "barrier.cluster.arrive.release;\n"
      "barrier.cluster.wait.acquire;\n" ::
          : "memory");
}

// Four words into another block's shared memory (`addr` from map_to_rank, 16-byte aligned),
// their bytes counted on that block's barrier `bar` (also from map_to_rank).
__device__ __forceinline__ void store_remote(unsigned addr, int a, int b, int c, int d, unsigned bar) {
  asm volatile(
      "st.async.weak.shared::cluster.mbarrier::complete_tx::bytes.v4.b32 [%0], {%1, %2, %3, %4}, [%5];\n" ::"r"(addr),
      "r"(a), "r"(b), "r"(c), "r"(d), "r"(bar)
      : "memory");
}

__device__ __forceinline__ void prefetch_map(const Desc* map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<unsigned long long>(map)) : "memory");
}
// One box of a 2-D map into shared memory at `dst`, its bytes counted on `bar`; coordinates in
// elements, innermost (k) first.
__device__ __forceinline__ void load_box(unsigned dst, const Desc* map, unsigned bar, int inner, int outer) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];\n" ::"r"(
          dst),
      "l"(reinterpret_cast<unsigned long long>(map)), "r"(bar), "r"(inner), "r"(outer)
      : "memory");
}

// An L2 eviction policy for the cache-hinted copies: 1 evict_first, 2 evict_last (fraction 1).
__device__ __forceinline__ unsigned long long l2_policy(int kind) {
  unsigned long long p;
  if (kind == 1)
    asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\n" : "=l"(p));
  else
    asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;\n" : "=l"(p));
  return p;
}
// load_box with an L2 eviction policy (l2_policy) for the lines it reads.
__device__ __forceinline__ void load_box_hint(unsigned dst, const Desc* map, unsigned bar, int inner, int outer,
                                              unsigned long long policy) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1, {%3, "
      "%4}], [%2], %5;\n" ::"r"(dst),
      "l"(reinterpret_cast<unsigned long long>(map)), "r"(bar), "r"(inner), "r"(outer), "l"(policy)
      : "memory");
}

// load_box_multicast (below) with an L2 eviction policy (l2_policy).
__device__ __forceinline__ void load_box_multicast_hint(unsigned dst, const Desc* map, unsigned bar, int inner,
                                                        int outer, unsigned short mask, unsigned long long policy) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster.L2::cache_hint "
      "[%0], [%1, {%3, %4}], [%2], %5, %6;\n" ::"r"(dst),
      "l"(reinterpret_cast<unsigned long long>(map)), "r"(bar), "r"(inner), "r"(outer), "h"(mask), "l"(policy)
      : "memory");
}

// `bytes` contiguous bytes (a multiple of 16, both addresses 16-byte aligned) from global `src`
// into shared memory at `dst`, counted on `bar`: a plain bulk copy, no tensor map, no swizzle.
__device__ __forceinline__ void bulk_load(unsigned dst, const void* src, unsigned bytes, unsigned bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(dst),
               "l"(reinterpret_cast<unsigned long long>(src)), "r"(bytes), "r"(bar)
               : "memory");
}

// The same box into the same offset `dst` of every block of the cluster in `mask` (bit r: rank
// r), its bytes counted on the barrier at offset `bar` of each of them.
__device__ __forceinline__ void load_box_multicast(unsigned dst, const Desc* map, unsigned bar, int inner, int outer,
                                                   unsigned short mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {%3, "
      "%4}], [%2], %5;\n" ::"r"(dst),
      "l"(reinterpret_cast<unsigned long long>(map)), "r"(bar), "r"(inner), "r"(outer), "h"(mask)
      : "memory");
}

template <int REGS>
__device__ __forceinline__ void lower_registers() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(REGS));
}
template <int REGS>
__device__ __forceinline__ void raise_registers() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(REGS));
}

template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}

// A box of a 2-D map from shared memory at `src` to global memory at coordinates {inner,
// outer} (elements, innermost first); TMA skips the box's elements past the tensor's edges.
__device__ __forceinline__ void store_box(const Desc* map, unsigned src, int inner, int outer) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];\n" ::"l"(
                   reinterpret_cast<unsigned long long>(map)),
               "r"(src), "r"(inner), "r"(outer)
               : "memory");
}
__device__ __forceinline__ void store_commit() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }
// Returns once this thread's committed stores have read their shared memory (the buffer may be
// written again; their global writes may still be under way).
__device__ __forceinline__ void store_wait_read() { asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory"); }

}  // namespace tma
}  // namespace i8g

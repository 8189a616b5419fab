// The split-K workspace layout shared by the families that split K (mma_sync, wgmma_tma): plain
// constexpr functions used by the device templates (splitk.cuh) and the generator's workspace
// sizes (generator/candidates.cpp).
//
// args.workspace holds, in int32 words, one block per output tile: 32 words (128 bytes) of
// arrival counters, then SPLIT_K partial accumulator tiles of BM * BN words, slice z at
// kCounterWords + z * BM * BN. Inside a partial the kernel stores its threads' registers in its
// own order (int4 v of thread tid at int4 index v * THREADS + tid: coalesced), which only the
// same kernel reads back. A family that reduces a tile in G independent groups of threads
// (wgmma_tma's cooperative consumers: one per half tile) gives group g counter word g and the
// g-th BM * BN / G words of each partial.
//
// A tile's block sits at the same place for every M (tile indices of a smaller M are a prefix,
// or at least below the tile count, of a larger one's), so one zeroed workspace sized for the
// largest M serves a kernel for every M up to it; the last slice to arrive at a counter resets
// it, so the workspace is zero again after every launch (eager or graph replay). Two different
// kernels must not share a workspace (one's partials would be the other's counters).
#ifndef I8G_SPLITK_H
#define I8G_SPLITK_H

#if defined(__CUDACC__)
#define I8G_SK_HD __host__ __device__ __forceinline__
#else
#define I8G_SK_HD inline
#endif

namespace i8g {
namespace splitk {

constexpr long long kCounterWords = 32;
constexpr int kMaxSplit = 16;

I8G_SK_HD constexpr long long tile_words(int split_k, int bm, int bn) {
  return kCounterWords + (long long)split_k * bm * bn;
}
I8G_SK_HD constexpr long long workspace_words(long long tiles, int split_k, int bm, int bn) {
  return split_k > 1 ? tiles * tile_words(split_k, bm, bn) : 0;
}

}  // namespace splitk
}  // namespace i8g

#endif

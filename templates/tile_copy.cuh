// The cp.async pieces shared by the tensor-core families (mma_sync.cuh, wgmma.cuh): 16-byte
// global -> shared copies with zero fill, commit/wait, and the loader that streams row-major
// [rows, K] tiles into the swizzled shared layout of mma_frag.h (tile_offset).
#pragma once
#include "mma_frag.h"

namespace i8g {

__device__ __forceinline__ unsigned smem_addr(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
// 16 bytes of shared memory at a shared-space address.
__device__ __forceinline__ int4 lds_128(unsigned addr) {
  int4 v;
  asm volatile("ld.shared.v4.s32 {%0, %1, %2, %3}, [%4];\n" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "r"(addr));
  return v;
}

// 16 bytes global -> shared, or 16 zero bytes when !in (src-size 0 reads nothing). L2_256B adds
// the .L2::256B prefetch size (L2 fetches the 256 bytes around them from memory at once).
template <bool L2_256B = false>
__device__ __forceinline__ void cp_async_16(unsigned dst, const void* src, bool in) {
  if constexpr (L2_256B)
    asm volatile("cp.async.cg.shared.global.L2::256B [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(in ? 16 : 0)
                 : "memory");
  else
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(in ? 16 : 0)
                 : "memory");
}
__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}
template <int PENDING>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(PENDING) : "memory");
}

// Streams ROWS x BK tiles of a row-major [rows, K] int8 matrix into swizzled shared tiles.
// Thread tid copies chunk tid % CPR of rows tid / CPR + s * RSTEP (s < STEPS): the same k chunk
// every step, so one pointer, one bitmask of in-range rows and one k test per tile cover all
// of its copies (fewer live registers than a pointer and predicate per copy).
template <int ROWS, int BK, int THREADS>
struct TileLoader {
  static constexpr int CPR = BK / mma::kChunk;  // chunks per row
  static constexpr int RSTEP = THREADS / CPR;   // rows between a thread's copies
  static constexpr int STEPS = (ROWS + RSTEP - 1) / RSTEP;
  static_assert(THREADS % CPR == 0, "a block must cover whole rows of chunks");
  static_assert(STEPS <= 32, "row mask is one 32-bit word");

  const signed char* base;  // the matrix; also the (never read) address of zero-fill copies
  const signed char* p;     // row r0's chunk at k = 0
  long long K;
  unsigned rows_in;         // bit s: row r0 + s * RSTEP exists
  int r0, ch;

  __device__ __forceinline__ TileLoader(const signed char* src, long long row0, long long rows,
                                        long long K_, int tid)
      : base(src), K(K_), rows_in(0), r0(mma::copy_row<BK>(tid)), ch(mma::copy_chunk<BK>(tid)) {
    p = src + (row0 + r0) * K + ch * mma::kChunk;
#pragma unroll
    for (int s = 0; s < STEPS; ++s)
      if (r0 + s * RSTEP < ROWS && row0 + r0 + s * RSTEP < rows) rows_in |= 1u << s;
  }

  __device__ __forceinline__ void load(unsigned dst, long long k0) const {
    const bool k_in = k0 + ch * mma::kChunk < K;
#pragma unroll
    for (int s = 0; s < STEPS; ++s) {
      // Rows past the tile get no copy at all: a zero-fill there would land in the next tile.
      if (ROWS % RSTEP != 0 && r0 + s * RSTEP >= ROWS) break;
      const bool in = k_in && ((rows_in >> s) & 1u);
      cp_async_16(dst + mma::tile_offset<BK>(r0 + s * RSTEP, ch),
                  in ? p + (long long)s * RSTEP * K + k0 : base, in);
    }
  }
};

}  // namespace i8g

// wgmma: Hopper warpgroup MMA (sm_90a only), int8 x int8 -> int32. EXPERIMENTAL: compiled and
// CPU-checked, never run on a GPU yet; the generator offers it only when Target::
// experimental_wgmma is set (`i8gemm tune --experimental-wgmma`), and the tuner verifies every
// candidate bit-exact before timing it. docs/wgmma.md has the layouts and the reasoning.
//
// A block of WG warpgroups (128 threads each) computes a BM x BN tile, BM = 64 * MI * WG:
// warpgroup g owns rows [64*MI*g, 64*MI*(g+1)) and all BN columns, one
// wgmma.mma_async.m64nBNk32.s32.s8.s8 per 64 rows and k32 step, both operands read from
// shared memory through matrix descriptors (K-major, 128-byte swizzle; wgmma_frag.h).
//
// Data path: x [M,K] and w [N,K] tiles of 128 bytes of k (one swizzle-atom row per tile row)
// stream through a STAGES-deep ring in dynamic shared memory with 16-byte cp.async (TileLoader,
// tile_copy.cuh). Its placement, tile_offset<128>, XORs the 16-byte chunk with row & 7, which is
// the 128B swizzle of the descriptor when every tile starts on a 1024-byte boundary (host-tested
// in wgmma_frag_test). Per K tile: cp.async wait, a proxy fence (cp.async writes through the
// generic proxy, wgmma reads through the async proxy), __syncthreads, prefetch into the slot
// every warpgroup finished with last iteration, then wgmma.fence, 4 * MI wgmma, commit and
// wait_group 0, so a slot is never overwritten while a wgmma may still read it.
//
// Tails as in mma_sync: rows past M or N and chunks past K are zero-filled (src-size 0), K % 16
// == 0; stores are guarded per element through epilogue.cuh, so results are bit-identical to
// the other families. No split-K; [N,K] weights only (wgmma .s8 has no transpose).
#pragma once
#include "epilogue.cuh"
#include "grid_order.cuh"
#include "tile_copy.cuh"
#include "wgmma_frag.h"

namespace i8g {

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void wgmma_wait_all() {
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
}
// Orders this thread's generic-proxy shared-memory writes (its completed cp.async copies)
// before later async-proxy reads (wgmma); the barrier after it extends that to the block.
__device__ __forceinline__ void fence_proxy_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}
// Keeps the compiler from moving accumulator reads or writes across the asynchronous MMAs.
template <int R>
__device__ __forceinline__ void fence_operands(int (&d)[R]) {
#pragma unroll
  for (int i = 0; i < R; ++i) asm volatile("" : "+r"(d[i])::"memory");
}

// D += A * B for one m64nNk32 step; scale-d = 1 (the accumulators start at zero). N is one of
// the tile widths the families use (64, 128, 256; wgmma_tma also the narrow 48, 80 and the wide
// 96, 160, 192), N / 2 accumulators per thread, listed eight at a time.
#define I8G_WG_D8(i)                                                                                         \
  "+r"(d[i]), "+r"(d[i + 1]), "+r"(d[i + 2]), "+r"(d[i + 3]), "+r"(d[i + 4]), "+r"(d[i + 5]), "+r"(d[i + 6]), \
      "+r"(d[i + 7])
// The asm operand numbers of accumulators 8j .. 8j + 7.
#define I8G_WG_R0 "%0, %1, %2, %3, %4, %5, %6, %7"
#define I8G_WG_R1 "%8, %9, %10, %11, %12, %13, %14, %15"
#define I8G_WG_R2 "%16, %17, %18, %19, %20, %21, %22, %23"
#define I8G_WG_R3 "%24, %25, %26, %27, %28, %29, %30, %31"
#define I8G_WG_R4 "%32, %33, %34, %35, %36, %37, %38, %39"
#define I8G_WG_R5 "%40, %41, %42, %43, %44, %45, %46, %47"
#define I8G_WG_R6 "%48, %49, %50, %51, %52, %53, %54, %55"
#define I8G_WG_R7 "%56, %57, %58, %59, %60, %61, %62, %63"
#define I8G_WG_R8 "%64, %65, %66, %67, %68, %69, %70, %71"
#define I8G_WG_R9 "%72, %73, %74, %75, %76, %77, %78, %79"
#define I8G_WG_R10 "%80, %81, %82, %83, %84, %85, %86, %87"
#define I8G_WG_R11 "%88, %89, %90, %91, %92, %93, %94, %95"
#define I8G_WG_R12 "%96, %97, %98, %99, %100, %101, %102, %103"
#define I8G_WG_R13 "%104, %105, %106, %107, %108, %109, %110, %111"
#define I8G_WG_R14 "%112, %113, %114, %115, %116, %117, %118, %119"
#define I8G_WG_R15 "%120, %121, %122, %123, %124, %125, %126, %127"
// One specialization: REGS lists %0 .. %(N/2 - 1), A and B are the descriptors' operand numbers.
#define I8G_WGMMA_S8(N, A, B, REGS, ...)                                                                   \
  template <>                                                                                             \
  __device__ __forceinline__ void wgmma_s8<N>(int(&d)[N / 2], wg::u64 a, wg::u64 b) {                      \
    asm volatile("wgmma.mma_async.sync.aligned.m64n" #N "k32.s32.s8.s8 {" REGS "}, %" #A ", %" #B ", 1;\n" \
                 : __VA_ARGS__                                                                            \
                 : "l"(a), "l"(b));                                                                       \
  }
template <int N>
__device__ __forceinline__ void wgmma_s8(int (&d)[N / 2], wg::u64 a, wg::u64 b);

I8G_WGMMA_S8(48, 24, 25, I8G_WG_R0 ", " I8G_WG_R1 ", " I8G_WG_R2, I8G_WG_D8(0), I8G_WG_D8(8), I8G_WG_D8(16))
I8G_WGMMA_S8(64, 32, 33,
             I8G_WG_R0 ", " I8G_WG_R1 ", " I8G_WG_R2 ", " I8G_WG_R3,
             I8G_WG_D8(0), I8G_WG_D8(8), I8G_WG_D8(16), I8G_WG_D8(24))
I8G_WGMMA_S8(80, 40, 41,
             I8G_WG_R0 ", " I8G_WG_R1 ", " I8G_WG_R2 ", " I8G_WG_R3 ", " I8G_WG_R4,
             I8G_WG_D8(0), I8G_WG_D8(8), I8G_WG_D8(16), I8G_WG_D8(24), I8G_WG_D8(32))
I8G_WGMMA_S8(96, 48, 49,
             I8G_WG_R0 ", " I8G_WG_R1 ", " I8G_WG_R2 ", " I8G_WG_R3 ", " I8G_WG_R4 ", " I8G_WG_R5,
             I8G_WG_D8(0), I8G_WG_D8(8), I8G_WG_D8(16), I8G_WG_D8(24), I8G_WG_D8(32), I8G_WG_D8(40))
I8G_WGMMA_S8(128, 64, 65,
             I8G_WG_R0 ", " I8G_WG_R1 ", " I8G_WG_R2 ", " I8G_WG_R3 ", " I8G_WG_R4 ", " I8G_WG_R5
             ", " I8G_WG_R6 ", " I8G_WG_R7,
             I8G_WG_D8(0), I8G_WG_D8(8), I8G_WG_D8(16), I8G_WG_D8(24), I8G_WG_D8(32), I8G_WG_D8(40),
             I8G_WG_D8(48), I8G_WG_D8(56))
I8G_WGMMA_S8(160, 80, 81,
             I8G_WG_R0 ", " I8G_WG_R1 ", " I8G_WG_R2 ", " I8G_WG_R3 ", " I8G_WG_R4 ", " I8G_WG_R5
             ", " I8G_WG_R6 ", " I8G_WG_R7 ", " I8G_WG_R8 ", " I8G_WG_R9,
             I8G_WG_D8(0), I8G_WG_D8(8), I8G_WG_D8(16), I8G_WG_D8(24), I8G_WG_D8(32), I8G_WG_D8(40),
             I8G_WG_D8(48), I8G_WG_D8(56), I8G_WG_D8(64), I8G_WG_D8(72))
I8G_WGMMA_S8(192, 96, 97,
             I8G_WG_R0 ", " I8G_WG_R1 ", " I8G_WG_R2 ", " I8G_WG_R3 ", " I8G_WG_R4 ", " I8G_WG_R5
             ", " I8G_WG_R6 ", " I8G_WG_R7 ", " I8G_WG_R8 ", " I8G_WG_R9 ", " I8G_WG_R10 ", " I8G_WG_R11,
             I8G_WG_D8(0), I8G_WG_D8(8), I8G_WG_D8(16), I8G_WG_D8(24), I8G_WG_D8(32), I8G_WG_D8(40),
             I8G_WG_D8(48), I8G_WG_D8(56), I8G_WG_D8(64), I8G_WG_D8(72), I8G_WG_D8(80), I8G_WG_D8(88))
I8G_WGMMA_S8(256, 128, 129,
             I8G_WG_R0 ", " I8G_WG_R1 ", " I8G_WG_R2 ", " I8G_WG_R3 ", " I8G_WG_R4 ", " I8G_WG_R5
             ", " I8G_WG_R6 ", " I8G_WG_R7 ", " I8G_WG_R8 ", " I8G_WG_R9 ", " I8G_WG_R10 ", " I8G_WG_R11
             ", " I8G_WG_R12 ", " I8G_WG_R13 ", " I8G_WG_R14 ", " I8G_WG_R15,
             I8G_WG_D8(0), I8G_WG_D8(8), I8G_WG_D8(16), I8G_WG_D8(24), I8G_WG_D8(32), I8G_WG_D8(40),
             I8G_WG_D8(48), I8G_WG_D8(56), I8G_WG_D8(64), I8G_WG_D8(72), I8G_WG_D8(80), I8G_WG_D8(88),
             I8G_WG_D8(96), I8G_WG_D8(104), I8G_WG_D8(112), I8G_WG_D8(120))
#undef I8G_WGMMA_S8
#undef I8G_WG_D8
#undef I8G_WG_R0
#undef I8G_WG_R1
#undef I8G_WG_R2
#undef I8G_WG_R3
#undef I8G_WG_R4
#undef I8G_WG_R5
#undef I8G_WG_R6
#undef I8G_WG_R7
#undef I8G_WG_R8
#undef I8G_WG_R9
#undef I8G_WG_R10
#undef I8G_WG_R11
#undef I8G_WG_R12
#undef I8G_WG_R13
#undef I8G_WG_R14
#undef I8G_WG_R15

// One K tile (128 bytes of k, four k32 steps) of MI m64nBN instructions: A's instruction i at
// sa + 64*128*i, B at sb, both 128B-swizzled K-major tiles (B's 8-row groups B_SBO bytes apart:
// kAtomBytes, or kp * 1024 in a packed weight's stage); the accumulators pinned around the
// asynchronous MMAs; one commit group. The caller waits (wait_group) as its pipeline allows.
template <int MI, int BN, unsigned B_SBO = wg::kAtomBytes>
__device__ __forceinline__ void mma_k_tile(int (&acc)[MI][BN / 2], unsigned sa, unsigned sb) {
#pragma unroll
  for (int i = 0; i < MI; ++i) fence_operands(acc[i]);
  wgmma_fence();
  // Encoded once per K tile; each instruction's descriptor is a constant step away (desc_step).
  const wg::u32 a_lo = wg::desc_lo(sa), b_lo = wg::desc_lo(sb);
#pragma unroll
  for (int kk = 0; kk < wg::kRowBytes / wg::kK; ++kk) {
    const wg::u64 db = wg::desc_of(b_lo + wg::desc_step(wg::k_step_offset(kk)), wg::desc_hi(B_SBO));
#pragma unroll
    for (int i = 0; i < MI; ++i)
      wgmma_s8<BN>(acc[i], wg::desc_of(a_lo + wg::desc_step(i * wg::kM * wg::kRowBytes + wg::k_step_offset(kk))), db);
  }
  wgmma_commit();
}

// Two floats as one packed bf16x2 / f16x2 word (lo in the low half), each rounded to nearest even:
// the bits of two f32_to_bf16_rne / f32_to_f16_rne calls, in one instruction.
template <int OUT>
__device__ __forceinline__ unsigned pack_half2(float lo, float hi) {
  unsigned d;
  if constexpr (OUT == kOutBF16)
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(d) : "f"(hi), "f"(lo));
  else
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(d) : "f"(hi), "f"(lo));
  return d;
}

// The column operands (scale, bias, colsum) of CH column groups: the two columns each group
// holds for one thread.
template <int CH>
struct ColChunk {
  float sw[CH][2], b[CH][2];
  int colsum[CH][2];
};
// Thread t's operands of the CH column groups from j0, zero past N.
template <int CH, int WSC, int OUT, int BIAS, int ASYM>
__device__ __forceinline__ ColChunk<CH> load_col_chunk(const I8gArgs& args, long long n0, long long N, int j0, int t) {
  ColChunk<CH> c;
#pragma unroll
  for (int jj = 0; jj < CH; ++jj)
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      const long long n = n0 + wg::d_col(t, 4 * (j0 + jj) + e);
      c.sw[jj][e] = c.b[jj][e] = 0.0f;
      c.colsum[jj][e] = 0;
      if (n < N) load_col_operands<WSC, OUT, BIAS, ASYM>(args, n, c.sw[jj][e], c.b[jj][e], c.colsum[jj][e]);
    }
  return c;
}

// Column groups per chunk of loaded column operands: as many as the register budget allows, an
// even number that divides the tile's BN / 8 groups (20 for BN = 160: chunks of 4).
template <int BN, int BIAS, int ASYM>
constexpr int col_chunk() {
  constexpr int J = BN / 8, CH_MAX = (BIAS || ASYM) ? 4 : 8;
  int ch = J < CH_MAX ? J : CH_MAX;
  while (J % ch != 0 || ch % 2 != 0) --ch;
  return ch;
}

// The epilogue operands of a warpgroup's tile: its rows' scale and zero point and, where PRE,
// every column operand of the tile too (BN / 8 column groups), so that a caller can load them
// before its main loop and their latency hides under it. Without PRE the columns are loaded in
// chunks by the epilogue itself (one round trip per chunk: the stores between chunks may alias
// the operands for all the compiler knows).
template <int MI, int BN, bool PRE>
struct EpiOperands {
  float sx[MI][2];
  int zp[MI][2];
  ColChunk<PRE ? BN / 8 : 1> col;
};

// Whether a tile of MI m64nBN accumulators (MI * BN / 2 registers a thread) also holds every
// column operand through its main loop: where that stays within 128 registers.
template <int MI, int BN, int OUT, int BIAS, int ASYM>
constexpr bool epi_preload() {
  constexpr int per_col = (OUT == kOutI32 ? 0 : 1) + BIAS + ASYM;
  return MI * (BN / 2) + (BN / 4) * per_col <= 128;
}

template <int MI, int BN, bool PRE, int ACT, int WSC, int OUT, int BIAS, int ASYM>
__device__ __forceinline__ EpiOperands<MI, BN, PRE> load_epi_operands(const I8gArgs& args, long long row0,
                                                                      long long n0, long long M, long long N,
                                                                      int t) {
  EpiOperands<MI, BN, PRE> o;
#pragma unroll
  for (int i = 0; i < MI; ++i)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const long long m = row0 + i * wg::kM + wg::d_row(t, 2 * h);
      o.sx[i][h] = 0.0f;
      o.zp[i][h] = 0;
      if (m < M) load_row_operands<ACT, OUT, ASYM>(args, m, o.sx[i][h], o.zp[i][h]);
    }
  if constexpr (PRE) o.col = load_col_chunk<BN / 8, WSC, OUT, BIAS, ASYM>(args, n0, N, 0, t);
  return o;
}

// The column operands of the CH groups from j0: taken from the preload, or loaded now.
template <int CH, int MI, int BN, bool PRE, int WSC, int OUT, int BIAS, int ASYM>
__device__ __forceinline__ ColChunk<CH> col_chunk_of(const EpiOperands<MI, BN, PRE>& o, const I8gArgs& args,
                                                     long long n0, long long N, int j0, int t) {
  if constexpr (PRE) {
    ColChunk<CH> c;
#pragma unroll
    for (int jj = 0; jj < CH; ++jj)
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        c.sw[jj][e] = o.col.sw[j0 + jj][e];
        c.b[jj][e] = o.col.b[j0 + jj][e];
        c.colsum[jj][e] = o.col.colsum[j0 + jj][e];
      }
    return c;
  } else {
    return load_col_chunk<CH, WSC, OUT, BIAS, ASYM>(args, n0, N, j0, t);
  }
}

// The walk of the whole-tile epilogues (store_interior, tma_store.cuh's store_tile_tma): for
// each chunk of CH column groups' operands (taken from the preload or loaded now), each pair of
// column groups j, j + 1 (16 columns) of it, each m64 block i and row half h, calls
// f(i, h, j, a, y): a[g][e] the accumulator of column group j + g, column e of its two, and y[g][e]
// its epilogue value.
template <int MI, int BN, bool PRE, int WSC, int OUT, int BIAS, int ASYM, class F>
__device__ __forceinline__ void for_each_pair(const I8gArgs& args, int (&acc)[MI][BN / 2],
                                              const EpiOperands<MI, BN, PRE>& ops, long long n0, long long N, int t,
                                              F f) {
  constexpr int J = BN / 8;
  constexpr int CH = col_chunk<BN, BIAS, ASYM>();
  static_assert(J % CH == 0 && CH % 2 == 0, "whole chunks of column-group pairs");
#pragma unroll
  for (int j0 = 0; j0 < J; j0 += CH) {
    const ColChunk<CH> op = col_chunk_of<CH, MI, BN, PRE, WSC, OUT, BIAS, ASYM>(ops, args, n0, N, j0, t);
#pragma unroll
    for (int jj = 0; jj < CH; jj += 2)
#pragma unroll
      for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          int a[2][2];
          float y[2][2];
#pragma unroll
          for (int g = 0; g < 2; ++g)
#pragma unroll
            for (int e = 0; e < 2; ++e) {
              a[g][e] = acc[i][4 * (j0 + jj + g) + 2 * h + e];
              y[g][e] = epilogue_value<OUT, BIAS, ASYM>(a[g][e], ops.sx[i][h], ops.zp[i][h], op.sw[jj + g][e],
                                                        op.b[jj + g][e], op.colsum[jj + g][e]);
            }
          f(i, h, j0 + jj, a, y);
        }
  }
}

// store_interior's stores of one pair of column groups for one row half (for_each_pair's f).
template <int MI, int OUT>
struct InteriorStore {
  unsigned char* (&rowp)[MI][2];
  bool odd;
  __device__ __forceinline__ void operator()(int i, int h, int j, const int (&a)[2][2], const float (&y)[2][2]) const {
    if constexpr (out_bytes<OUT>() == 2) {
      // Columns 8j..8j+15 of the row: even lanes keep group j's pair and take their
      // neighbour's; odd lanes take their neighbour's group j + 1 pair and keep theirs.
      const unsigned p0 = pack_half2<OUT>(y[0][0], y[0][1]), p1 = pack_half2<OUT>(y[1][0], y[1][1]);
      const unsigned got = __shfl_xor_sync(0xffffffffu, odd ? p0 : p1, 1);
      *reinterpret_cast<uint2*>(rowp[i][h] + 16 * j) = odd ? make_uint2(got, p1) : make_uint2(p0, got);
    } else {
#pragma unroll
      for (int g = 0; g < 2; ++g) {
        unsigned char* p = rowp[i][h] + 32 * (j + g);
        if constexpr (OUT == kOutI32)
          *reinterpret_cast<int2*>(p) = make_int2(a[g][0], a[g][1]);
        else
          *reinterpret_cast<float2*>(p) = make_float2(y[g][0], y[g][1]);
      }
    }
  }
};

// An interior tile (every row < M, every column < N, rows 8-byte aligned): no guards, one base
// address per fragment row. 4-byte outputs leave in 8-byte pairs; 2-byte outputs swap a packed
// pair with the neighbouring lane (wgmma_frag.h, wide_col) and leave in 8-byte quads, so each
// row's four lanes write one whole 32-byte sector per store instead of half of two.
template <int MI, int BN, bool PRE, int WSC, int OUT, int BIAS, int ASYM>
__device__ __forceinline__ void store_interior(const I8gArgs& args, int (&acc)[MI][BN / 2],
                                               const EpiOperands<MI, BN, PRE>& ops, long long row0, long long n0,
                                               long long N, int t) {
  constexpr bool WIDE = out_bytes<OUT>() == 2;
  const bool odd = t & 1;
  unsigned char* rowp[MI][2];
#pragma unroll
  for (int i = 0; i < MI; ++i)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const long long m = row0 + i * wg::kM + wg::d_row(t, 2 * h);
      const long long n = n0 + (WIDE ? wg::wide_col(t) : wg::d_col(t, 0));
      rowp[i][h] = static_cast<unsigned char*>(args.out) + (m * N + n) * out_bytes<OUT>();
    }
  InteriorStore<MI, OUT> st{rowp, odd};
  for_each_pair<MI, BN, PRE, WSC, OUT, BIAS, ASYM>(args, acc, ops, n0, N, t, st);
}

// The epilogue of one warpgroup's accumulators: MI m64nBN instructions whose register r of
// instruction i holds row row0 + 64*i + d_row(t, r) and column n0 + d_col(t, r) (wgmma_frag.h),
// through epilogue.cuh per element. Interior tiles take store_interior; edge tiles are guarded
// for M and N tails, and registers 2h and 2h+1 of a column group (adjacent columns) leave as one
// store (bf16x2, float2, int2) where N is even and `out` aligned. The column operands come from
// `ops` (PRE) or are loaded CH groups at a time ahead of their stores, so that their loads are in
// flight together rather than one round trip per column.
template <int MI, int BN, bool PRE, int WSC, int OUT, int BIAS, int ASYM>
__device__ __forceinline__ void store_tile(const I8gArgs& args, int (&acc)[MI][BN / 2],
                                           const EpiOperands<MI, BN, PRE>& ops, long long row0, long long n0,
                                           long long M, long long N, int t) {
  constexpr int J = BN / 8;  // column groups (2 columns each) per thread
  constexpr int CH = col_chunk<BN, BIAS, ASYM>();
  static_assert(J % CH == 0, "whole chunks of column groups");
  const unsigned long long out_addr = reinterpret_cast<unsigned long long>(args.out);
  if (row0 + MI * wg::kM <= M && n0 + BN <= N && (N * out_bytes<OUT>()) % 8 == 0 && out_addr % 8 == 0) {
    store_interior<MI, BN, PRE, WSC, OUT, BIAS, ASYM>(args, acc, ops, row0, n0, N, t);
    return;
  }
  const bool pairs = N % 2 == 0 && out_addr % (2 * out_bytes<OUT>()) == 0;
#pragma unroll
  for (int j0 = 0; j0 < J; j0 += CH) {
    const ColChunk<CH> op = col_chunk_of<CH, MI, BN, PRE, WSC, OUT, BIAS, ASYM>(ops, args, n0, N, j0, t);
#pragma unroll
    for (int jj = 0; jj < CH; ++jj) {
      const int j = j0 + jj;
      const long long n = n0 + wg::d_col(t, 4 * j);  // even: n0 is a multiple of BN
#pragma unroll
      for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const long long m = row0 + i * wg::kM + wg::d_row(t, 2 * h);
          if (m >= M || n >= N) continue;
          int a0 = acc[i][4 * j + 2 * h], a1 = acc[i][4 * j + 2 * h + 1];
          const float y0 = epilogue_value<OUT, BIAS, ASYM>(a0, ops.sx[i][h], ops.zp[i][h], op.sw[jj][0], op.b[jj][0],
                                                           op.colsum[jj][0]);
          const float y1 = epilogue_value<OUT, BIAS, ASYM>(a1, ops.sx[i][h], ops.zp[i][h], op.sw[jj][1], op.b[jj][1],
                                                           op.colsum[jj][1]);
          if (pairs && n + 1 < N) {
            store_out2<OUT>(args.out, m * N + n, a0, a1, y0, y1);
          } else {
            store_out<OUT>(args.out, m * N + n, a0, y0);
            if (n + 1 < N) store_out<OUT>(args.out, m * N + n + 1, a1, y1);
          }
        }
    }
  }
}

// The same with the operands loaded here, after the main loop (the wgmma family).
template <int MI, int BN, int ACT, int WSC, int OUT, int BIAS, int ASYM>
__device__ __forceinline__ void store_fragments(const I8gArgs& args, int (&acc)[MI][BN / 2], long long row0,
                                                long long n0, long long M, long long N, int t) {
  const auto ops = load_epi_operands<MI, BN, false, ACT, WSC, OUT, BIAS, ASYM>(args, row0, n0, M, N, t);
  store_tile<MI, BN, false, WSC, OUT, BIAS, ASYM>(args, acc, ops, row0, n0, M, N, t);
}

template <int BM, int BN, int WG, int STAGES, long long N_, long long K_, int ACT, int WSC, int OUT,
          int BIAS, int ASYM>
__global__ void __launch_bounds__(wg::kWarpgroup * WG, 1)
    wgmma_kernel(const __grid_constant__ I8gArgs args) {
  constexpr int THREADS = wg::kWarpgroup * WG;
  constexpr int BK = wg::kRowBytes;
  constexpr int MI = BM / (wg::kM * WG);  // m64 instructions per warpgroup
  constexpr int R = BN / 2;               // accumulator registers per instruction
  constexpr int A_BYTES = BM * BK;
  constexpr int STAGE_BYTES = wg::stage_bytes(BM, BN);
  static_assert(WG == 1 || WG == 2, "one or two warpgroups");
  static_assert(MI >= 1 && MI * wg::kM * WG == BM, "BM must be 64 * MI * WG");
  static_assert(BN == 64 || BN == 128 || BN == 256, "BN in {64, 128, 256}");
  static_assert(MI * R <= 128, "at most 128 accumulator registers per thread");
  static_assert(STAGES >= 2 && STAGES <= 6, "2 to 6 pipeline stages");
  static_assert(K_ % mma::kChunk == 0, "K must be a multiple of 16 (16-byte cp.async rows)");
  static_assert(A_BYTES % wg::kAtomBytes == 0 && STAGE_BYTES % wg::kAtomBytes == 0,
                "every A and B tile must start on a 1024-byte boundary (128B swizzle pattern)");

  // The dynamic window is rounded up to the next 1024-byte boundary (the launch asks for 1 KiB
  // more than the ring), so the swizzle pattern starts where the descriptors say it does.
  extern __shared__ __align__(1024) unsigned char smem[];
  grid_order();  // nothing global is touched before it (grid_order.cuh)

  const long long M = args.m;
  const long long N = N_ ? N_ : args.n;
  const long long K = K_ ? K_ : args.k;
  const long long m0 = (long long)blockIdx.y * BM;
  const long long n0 = (long long)blockIdx.x * BN;
  const int tid = threadIdx.x;
  const int wgi = tid / wg::kWarpgroup;   // warpgroup
  const int t = tid % wg::kWarpgroup;     // thread in the warpgroup
  const unsigned base = (smem_addr(smem) + wg::kAtomBytes - 1) & ~unsigned(wg::kAtomBytes - 1);

  int acc[MI][R];
#pragma unroll
  for (int i = 0; i < MI; ++i)
#pragma unroll
    for (int r = 0; r < R; ++r) acc[i][r] = 0;

  const int ktiles = int((K + BK - 1) / BK);
  const TileLoader<BM, BK, THREADS> xload(args.x, m0, M, K, tid);
  const TileLoader<BN, BK, THREADS> wload(args.w, n0, N, K, tid);
  auto load_stage = [&](int stage, int kt) {
    const unsigned sa = base + stage * STAGE_BYTES;
    xload.load(sa, (long long)kt * BK);
    wload.load(sa + A_BYTES, (long long)kt * BK);
  };

  // Prologue: STAGES-1 tiles in flight, one commit group per tile (empty ones too).
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < ktiles) load_stage(s, s);
    cp_async_commit();
  }

  int stage = 0;
  for (int kt = 0; kt < ktiles; ++kt) {
    cp_async_wait<STAGES - 2>();
    fence_proxy_async_shared();
    // Tile kt is visible to every warpgroup's wgmma; every warpgroup has waited for its wgmmas
    // on tile kt-1 (wait_group 0 below), whose slot the prefetch now overwrites.
    __syncthreads();
    const int pf = kt + STAGES - 1;
    if (pf < ktiles) load_stage(pf % STAGES, pf);
    cp_async_commit();

    const unsigned sa = base + stage * STAGE_BYTES + wgi * (MI * wg::kM * BK);
    const unsigned sb = base + stage * STAGE_BYTES + A_BYTES;
    mma_k_tile<MI, BN>(acc, sa, sb);
    wgmma_wait_all();
#pragma unroll
    for (int i = 0; i < MI; ++i) fence_operands(acc[i]);
    stage = stage + 1 == STAGES ? 0 : stage + 1;
  }
  cp_async_wait<0>();  // only empty groups can remain; leave nothing in flight at exit

  // Epilogue: register r of instruction i holds row 64*(MI*wgi + i) + d_row(t, r) and column
  // d_col(t, r) of the block tile (wgmma_frag.h).
  store_fragments<MI, BN, ACT, WSC, OUT, BIAS, ASYM>(args, acc, m0 + (long long)MI * wgi * wg::kM, n0, M, N, t);
}

}  // namespace i8g

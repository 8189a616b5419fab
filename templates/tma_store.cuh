// The output tile through shared memory and a TMA store (wgmma_tma's ES = 1, 2-byte outputs):
// each consumer warpgroup converts its accumulators (epilogue.cuh's epilogue_value, so the
// values are bit-identical to the register path's), writes them into its own buffer with
// stmatrix (one instruction per 16 x 16 block of a warp, where the register path needs four
// shuffles and four 8-byte global stores), and one thread hands the buffer to TMA, which writes
// whole lines of the output and clips rows past M and columns past N itself. The store runs
// asynchronously: the consumer goes on to its next tile's main loop and waits for the store to
// have read the buffer only before it writes the buffer again.
//
// The buffer is RM rows x BN columns, as BN / 64 panels of RM rows x 128 bytes, each in the
// 128-byte swizzle (16-byte chunk q of row r at chunk q ^ (r % 8)), which the output map's
// CU_TENSOR_MAP_SWIZZLE_128B undoes: so a warp's stmatrix rows fall in distinct banks.
// The host encodes the output map ({N, M}, 2-byte elements, boxes of 64 columns x RM rows) only
// where the output's address is 16-byte aligned; elsewhere the kernel stores from registers
// (store_tile), as without ES.
#pragma once
#include "tma.cuh"
#include "wgmma.cuh"

namespace i8g {
namespace tma {

// The 128 threads of warpgroup-sized named barrier `id` meet.
__device__ __forceinline__ void warpgroup_sync(int id) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "n"(wg::kWarpgroup) : "memory");
}

// Four 8 x 8 matrices of 16-bit elements from this warp's registers into shared memory: lane l
// gives the address of row l % 8 of matrix l / 8; register q holds, for matrix q, the two
// elements of row lane / 4 at columns 2 * (lane % 4) and 2 * (lane % 4) + 1 (the accumulator
// fragment's layout).
__device__ __forceinline__ void stmatrix_x4(unsigned addr, unsigned r0, unsigned r1, unsigned r2, unsigned r3) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(addr), "r"(r0), "r"(r1),
               "r"(r2), "r"(r3)
               : "memory");
}

}  // namespace tma

// Columns of one panel of the staged tile: 128 bytes of 2-byte outputs.
constexpr int kStorePanelCols = 64;
// Bytes of one consumer's staging buffer for RM x BN 2-byte outputs.
constexpr int store_buffer_bytes(int rm, int bn) { return rm * bn * 2; }

// Consumer warpgroup (thread t, named barrier `bar`) writes its RM x BN tile, rows from row0 and
// columns from n0 of the output, through its buffer `buf` (1024-byte aligned) and the output map.
// Thread 0 issues the stores; the caller waits for their reads (tma::store_wait_read) before
// the block exits.
template <int MI, int BN, bool PRE, int WSC, int OUT, int BIAS, int ASYM>
__device__ __forceinline__ void store_tile_tma(const I8gArgs& args, int (&acc)[MI][BN / 2],
                                               const EpiOperands<MI, BN, PRE>& ops, const tma::Desc* omap,
                                               unsigned buf, int row0, int n0, long long N, int t, int bar) {
  constexpr int RM = MI * wg::kM;
  static_assert(out_bytes<OUT>() == 2, "the staged store is for 2-byte outputs");
  static_assert(BN % kStorePanelCols == 0, "whole 64-column panels");
  // The previous tile's store has read the buffer (thread 0 waits, the barrier tells the rest).
  if (t == 0) tma::store_wait_read();
  tma::warpgroup_sync(bar);
  const int lane = t % 32, warp = t / 32;
  const int q = lane / 8, rr = lane % 8;  // this lane addresses row rr of matrix q = 2g + h
  unsigned r[4];                          // matrix 2g + h: rows 8h.. of the warp's 16, group j + g
  for_each_pair<MI, BN, PRE, WSC, OUT, BIAS, ASYM>(
      args, acc, ops, n0, N, t, [&](int i, int h, int j, const int (&)[2][2], const float (&y)[2][2]) {
#pragma unroll
        for (int g = 0; g < 2; ++g) r[2 * g + h] = pack_half2<OUT>(y[g][0], y[g][1]);
        if (h == 0) return;
        // Lane's row: tile row 64i + 16 warp + 8 (q & 1) + rr; its column group j + (q >> 1), i.e.
        // chunk (group % 8) of panel group / 8.
        const int row = i * wg::kM + 16 * warp + 8 * (q & 1) + rr;
        const int group = j + (q >> 1);
        const unsigned addr = buf + unsigned((group / 8) * RM * wg::kRowBytes + row * wg::kRowBytes +
                                             (((group % 8) ^ rr) << 4));
        tma::stmatrix_x4(addr, r[0], r[1], r[2], r[3]);
      });
  // Every thread's writes are visible to the async proxy, then one thread stores the panels.
  fence_proxy_async_shared();
  tma::warpgroup_sync(bar);
  if (t == 0) {
#pragma unroll
    for (int p = 0; p < BN / kStorePanelCols; ++p)
      tma::store_box(omap, buf + unsigned(p * RM * wg::kRowBytes), n0 + p * kStorePanelCols, row0);
    tma::store_commit();
  }
}

}  // namespace i8g

// Lane -> element maps of mma.sync.m16n8k32.row.col.s32.s8.s8.s32 and ldmatrix.m8n8.x4.b16,
// the shared-memory swizzle, and the warp tiling of the mma_sync family. Plain constexpr
// functions: the device template indexes with them and the host tests (tests/generator/
// mma_frag_test.cpp) check them, so a wrong formula fails on a CPU, not on an H200.
//
// PTX ISA, "Matrix Fragments for mma.m16n8k32" (.s8), with g = lane / 4 (groupID) and
// t = lane % 4 (threadID_in_group); byte j of a .b32 register is element 4*reg + j:
//   A 16x32 (.row, m x k): reg 0: row g,   k 4t+j      reg 1: row g+8, k 4t+j
//                          reg 2: row g,   k 16+4t+j   reg 3: row g+8, k 16+4t+j
//   B 32x8  (.col, k x n): reg 0: col g,   k 4t+j      reg 1: col g,   k 16+4t+j
//   C 16x8  (s32):         c0, c1: row g,   cols 2t, 2t+1
//                          c2, c3: row g+8, cols 2t, 2t+1
// ldmatrix.m8n8.x4.b16: lane 8q+r gives the address of row r (16 bytes) of matrix q; lane T
// receives in register q the bytes 4(T%4)..4(T%4)+3 of row T/4 of matrix q. Viewing int8
// tiles as b16 pairs keeps bytes in order, so a [rows, k] int8 tile with k contiguous yields
// exactly the fragments above when matrix q is chosen as below.
#ifndef I8G_MMA_FRAG_H
#define I8G_MMA_FRAG_H

#if defined(__CUDACC__)
#define I8G_HD __host__ __device__ __forceinline__
#else
#define I8G_HD inline
#endif

namespace i8g {
namespace mma {

constexpr int kM = 16, kN = 8, kK = 32;  // one mma.sync.m16n8k32
constexpr int kChunk = 16;               // bytes per cp.async and per ldmatrix row

// --- mma fragments (the PTX facts above) ---------------------------------------------------
I8G_HD constexpr int a_row(int lane, int reg) { return lane / 4 + 8 * (reg & 1); }
I8G_HD constexpr int a_k(int lane, int reg, int byte) { return 4 * (lane % 4) + 16 * (reg >> 1) + byte; }
I8G_HD constexpr int b_col(int lane) { return lane / 4; }
I8G_HD constexpr int b_k(int lane, int reg, int byte) { return 4 * (lane % 4) + 16 * reg + byte; }
I8G_HD constexpr int c_row(int lane, int i) { return lane / 4 + 8 * (i >> 1); }
I8G_HD constexpr int c_col(int lane, int i) { return 2 * (lane % 4) + (i & 1); }

// --- ldmatrix.x4 address providers ---------------------------------------------------------
// A (16 rows x 32 bytes of k): matrix q = (row half q&1, k half q>>1) gives regs a0..a3.
I8G_HD constexpr int ldsm_a_row(int lane) { return (lane & 7) + 8 * ((lane >> 3) & 1); }
I8G_HD constexpr int ldsm_a_chunk(int lane) { return lane >> 4; }
// B (16 rows of n x 32 bytes of k): matrix q = (k half q&1, n half q>>1), so registers 0,1 are
// b0,b1 of the n-tile rows 0..7 and registers 2,3 are b0,b1 of the n-tile rows 8..15.
I8G_HD constexpr int ldsm_b_row(int lane) { return (lane & 7) + 8 * (lane >> 4); }
I8G_HD constexpr int ldsm_b_chunk(int lane) { return (lane >> 3) & 1; }

// --- shared memory ---------------------------------------------------------------------------
// A tile is `rows` x BK bytes, k contiguous. The 16-byte chunk slot inside each 128-byte line
// (bits 4..6 of the byte offset) is XORed with a key: the line index mod 8 when a line holds
// one or more whole rows (BK <= 128), the row mod 8 when a row spans several lines (BK > 128).
// Either way the eight rows one ldmatrix phase reads at one k chunk land in eight different
// slots, i.e. all 32 banks (tested for BK = 32..256). It permutes slots inside a line, so it is
// a bijection on the tile and cp.async's 16-byte writes stay whole.
I8G_HD constexpr unsigned swizzle(unsigned byte_offset, unsigned key) {
  return byte_offset ^ ((key & 7u) << 4);
}
template <int BK>
I8G_HD constexpr unsigned tile_offset(int row, int chunk) {
  return swizzle(unsigned(row) * BK + unsigned(chunk) * kChunk,
                 BK > 128 ? unsigned(row) : (unsigned(row) * BK + unsigned(chunk) * kChunk) >> 7);
}

// Global -> shared copy: chunk c of a tile goes to row c / (BK/16), chunk c % (BK/16), so
// consecutive threads read consecutive 16 bytes of a row (coalesced) and write whole lines.
template <int BK>
I8G_HD constexpr int copy_row(int c) { return c / (BK / kChunk); }
template <int BK>
I8G_HD constexpr int copy_chunk(int c) { return c % (BK / kChunk); }

// --- [K,N] weights (n contiguous) -----------------------------------------------------------
// The B tile is BK rows (one per k) of BN bytes (n contiguous), swizzled with tile_offset<BN>
// (row = shared k row, chunk = 16-byte n chunk): the rows one ldmatrix phase reads are eight
// consecutive rows at one chunk, the same pattern as the [rows, k] tiles above, so the same
// proof holds for BN = 16..256 (tested in mma_frag_test).
//
// ldmatrix.x4.trans.b16 hands lane (g, t) = (lane/4, lane%4), from each 8x8 b16 matrix, the
// b16 elements of rows 2t and 2t+1 at column g, i.e. bytes [row 2t: n 2g, 2g+1 | row 2t+1:
// n 2g, 2g+1]. The mma wants k 4t..4t+3 at one n in a register, so the rows are permuted at
// copy time: inside each 16-row group, global k row 4q+i goes to shared row
// {2q, 2q+1, 8+2q, 9+2q}[i] (a bit permutation: k bits b3 b2 b1 b0 -> shared row b1 b3 b2 b0).
// Matrices 0 and 1 (shared rows 0..7, 8..15 of a k32 step) then give lane (g, t) rows
// k 4t, 4t+1 and k 4t+2, 4t+3 at n 2g, 2g+1; prmt 0x6420 of the pair keeps the bytes of
// n = 2g (even columns), 0x7531 those of n = 2g+1 (odd columns): b0 of two n8 tiles made of
// the even and the odd columns of 16. Matrices 2 and 3 (k 16..31) give their b1 the same way.
// The copy walks the shared tile like the others (chunk c -> shared row copy_row<BN>(c),
// chunk copy_chunk<BN>(c)) and reads global row kn_src_row(row), so the cp.async writes keep
// their conflict-free pattern. For a power-of-two step R and r0 < R the bits of r0 and s*R are
// disjoint, so kn_src_row(r0 + s*R) = kn_src_row(r0) + kn_src_row(s*R): a constant per step.
I8G_HD constexpr int kn_smem_row(int k) {  // global k row (tile-relative) -> shared row
  return (k & ~15) | (((k >> 1) & 1) << 3) | (((k >> 2) & 3) << 1) | (k & 1);
}
I8G_HD constexpr int kn_src_row(int row) {  // shared row -> global k row (the inverse)
  return (row & ~15) | (((row >> 1) & 3) << 2) | (((row >> 3) & 1) << 1) | (row & 1);
}
// ldmatrix.x4.trans address provider: lane l gives shared row l of the k32 step (matrix l/8,
// row l%8); every lane reads the same 16-byte n chunk.
I8G_HD constexpr int ldsm_kn_row(int lane) { return lane; }
// prmt.b32 selectors (byte i of the result = byte sel_i of {b, a}) for the two n8 tiles.
constexpr unsigned kPrmtEven = 0x6420u, kPrmtOdd = 0x7531u;

// --- accumulator columns ---------------------------------------------------------------------
// Column, inside a warp tile, of accumulator c[2h+e] (h = row half) of n8 tile j: [N,K] tiles
// are 8 consecutive columns; [K,N] tiles come in pairs over 16 columns, tile 2p holding the
// even columns and tile 2p+1 the odd ones, so logical column l of tile j is column 2l + (j&1).
// (The kernel spells the [N,K] case out as before, which keeps its SASS unchanged.)
I8G_HD constexpr int acc_col_nk(int j, int lane, int e) { return kN * j + c_col(lane, e); }
I8G_HD constexpr int acc_col_kn(int j, int lane, int e) {
  return 2 * kN * (j >> 1) + 2 * c_col(lane, e) + (j & 1);
}
I8G_HD constexpr int acc_col(bool kn, int j, int lane, int e) {
  return kn ? acc_col_kn(j, lane, e) : acc_col_nk(j, lane, e);
}

// --- warp tiling -----------------------------------------------------------------------------
// Warp w of WM x WN owns the (BM/WM) x (BN/WN) block of the output tile at (warp_m, warp_n).
I8G_HD constexpr int warp_m(int warp, int wn) { return warp / wn; }
I8G_HD constexpr int warp_n(int warp, int wn) { return warp % wn; }

}  // namespace mma
}  // namespace i8g

#endif

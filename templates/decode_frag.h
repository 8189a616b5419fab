// Index maps of the decode_mma family (decode_mma.cuh): which bytes each lane loads, how they
// become mma.sync.m16n8k32 fragments, where the accumulators meet in shared memory, which
// threads hold the reduced tile and which K chunks each warp streams. Plain constexpr functions:
// the device template indexes with them and tests/generator/decode_mma_rules_test.cpp emulates
// the whole data path with them on the host, so a wrong formula fails on a CPU.
//
// The GEMM runs transposed (out^T = W . X^T): the weight's rows n are the mma's 16-row A operand
// and the activation rows m its 8-column B operand, so one m16n8k32 covers 16 weight rows and up
// to 8 tokens. Per 64 bytes of k, lane (g, t) = (lane / 4, lane % 4) loads 16 contiguous bytes
// at k = 16t of weight rows g and g + 8 of each 16-row tile and of activation row g of each
// 8-row tile: plain 16-byte global loads, no shared memory, no shuffles. The mma's k order inside
// a k32 step is irrelevant to the dot product as long as A and B agree, and they do: step s
// (0, 1) of the 64 bytes takes words 2s and 2s + 1 of every loaded 16 bytes (mma_frag.h's
// tables: A regs 0, 2 = row g, regs 1, 3 = row g + 8; B regs 0, 1), i.e. logical k l of step s
// is physical k phys_k(s, t, l) below for both operands.
#ifndef I8G_DECODE_FRAG_H
#define I8G_DECODE_FRAG_H

#if defined(__CUDACC__)
#define I8G_DEC_HD __host__ __device__ __forceinline__
#else
#define I8G_DEC_HD inline
#endif

namespace i8g {
namespace dec {

constexpr int kRows = 16;   // weight rows per m16 tile (the mma's M)
constexpr int kCols = 8;    // activation rows per n8 tile (the mma's N)
constexpr int kLoad = 16;   // bytes per global load
constexpr int kStep = 64;   // bytes of k one load per lane covers across the 4 lanes of a row
constexpr int kPad = 4;     // words of padding per shared row of the reduction (bank spread)

// --- loads ------------------------------------------------------------------------------------
// Weight row (inside the block's BN rows) of load h (0: row g, 1: row g + 8) of 16-row tile r.
I8G_DEC_HD constexpr int w_row(int r, int h, int lane) { return kRows * r + lane / 4 + 8 * h; }
// Activation row (inside the block's BM rows) of 8-row tile j.
I8G_DEC_HD constexpr int x_row(int j, int lane) { return kCols * j + lane / 4; }
// k (inside a chunk of BK bytes) of a lane's load u (one per 64 bytes).
I8G_DEC_HD constexpr int load_k(int u, int lane) { return kStep * u + kLoad * (lane % 4); }

// --- the shared-memory ring (RING = 1) ---------------------------------------------------------
// Instead of registers, a warp may stage its chunks in a ring of STAGES slots in shared memory
// (cp.async), so that each copy instruction covers whole row pieces: lane l copies 16 bytes at
// unit copy_unit of row copy_row, BK / 16 lanes per row, i.e. 2 rows x 256 bytes (BK 256) or
// 4 x 128 (BK 128) per instruction, where the register loads above cover 8 rows x 64 bytes (the
// H200 streamed the former 0.94-0.99x a flat read in its best block shape, the latter 1.08-1.21x:
// bench/stream_patterns.cu).
// A slot holds BN weight rows, then BM activation rows, BK bytes each; the fragments are then
// read from it with the same rows and k as the register loads (w_row, x_row, load_k), so
// everything after the loads is unchanged. 16-byte units are swizzled by row parity: the 8 lanes
// of a quarter warp read rows g, g + 1 (t = 0..3) and hit 8 distinct bank groups.
I8G_DEC_HD constexpr int ring_slot_bytes(int bm, int bn, int bk) { return (bm + bn) * bk; }
I8G_DEC_HD constexpr int ring_warp_bytes(int bm, int bn, int bk, int stages) {
  return stages * ring_slot_bytes(bm, bn, bk);
}
// Byte offset in a slot of the 16-byte unit `unit` (k = 16 * unit) of slot row `row`.
I8G_DEC_HD constexpr int ring_offset(int row, int unit, int bk) {
  return row * bk + kLoad * (unit ^ ((row & 1) << 2));
}
I8G_DEC_HD constexpr int copy_lanes_per_row(int bk) { return bk / kLoad; }
I8G_DEC_HD constexpr int copy_rows_per_op(int bk) { return 32 / copy_lanes_per_row(bk); }
// Copy instructions per chunk, and the slot row / unit lane `lane` copies in instruction `op`.
I8G_DEC_HD constexpr int copy_ops(int bm, int bn, int bk) { return (bm + bn) / copy_rows_per_op(bk); }
I8G_DEC_HD constexpr int copy_row(int op, int lane, int bk) {
  return op * copy_rows_per_op(bk) + lane / copy_lanes_per_row(bk);
}
I8G_DEC_HD constexpr int copy_unit(int lane, int bk) { return lane % copy_lanes_per_row(bk); }

// --- fragments --------------------------------------------------------------------------------
// A register `reg` (0..3) of step s: which load (h: row g or g + 8) and which 32-bit word of it.
I8G_DEC_HD constexpr int a_load(int reg) { return reg & 1; }
I8G_DEC_HD constexpr int a_word(int reg, int s) { return 2 * s + (reg >> 1); }
// B register `reg` (0, 1) of step s: word of the activation load.
I8G_DEC_HD constexpr int b_word(int reg, int s) { return 2 * s + reg; }
// Physical k (inside the 64 bytes) the mma sees as logical k l (0..31) of step s: the A and B
// tables of mma_frag.h put l < 16 in reg 0 (k 4t'..4t'+3) and l >= 16 in the next one.
I8G_DEC_HD constexpr int phys_k(int s, int l) {
  return kLoad * ((l % 16) / 4) + 8 * s + 4 * (l / 16) + l % 4;
}

// --- accumulators -----------------------------------------------------------------------------
// c[i] of the m16n8 tile (r, j): weight row 16r + g + 8(i >> 1), activation row 8j + 2t + (i & 1).
I8G_DEC_HD constexpr int c_n(int r, int lane, int i) { return kRows * r + lane / 4 + 8 * (i >> 1); }
I8G_DEC_HD constexpr int c_m(int j, int lane, int i) { return kCols * j + 2 * (lane % 4) + (i & 1); }

// --- the block's reduction in shared memory ---------------------------------------------------
// Each warp's BM x BN int32 tile, m-major with rows of BN + kPad words (16-byte aligned rows;
// the pad spreads a warp's scattered accumulator stores over the banks), one after another.
I8G_DEC_HD constexpr int red_pitch(int bn) { return bn + kPad; }
I8G_DEC_HD constexpr int red_words(int bm, int bn) { return bm * red_pitch(bn); }
I8G_DEC_HD constexpr int red_offset(int warp, int m, int n, int bm, int bn) {
  return warp * red_words(bm, bn) + m * red_pitch(bn) + n;
}
// The reduced BM x BN tile is held by the first group_threads threads, group_vectors int4s
// (4 consecutive n of one m) each: int4 v of thread tid is tile word 4 * (v * G + tid), so a
// warp's stores run along n. G is whole warps (a named barrier counts warps) and at most the
// block's threads.
I8G_DEC_HD constexpr int group_vectors(int bm, int bn, int threads) {
  return bm * bn / 4 > threads ? bm * bn / (4 * threads) : 1;
}
I8G_DEC_HD constexpr int group_threads(int bm, int bn, int threads) {
  return bm * bn / (4 * group_vectors(bm, bn, threads));
}
I8G_DEC_HD constexpr int group_word(int v, int tid, int bm, int bn, int threads) {
  return 4 * (v * group_threads(bm, bn, threads) + tid);
}

// --- K: chunks, slices, warps -----------------------------------------------------------------
// K is cut into chunks of BK bytes; split-K slice z takes chunks [z * per, min(all, (z + 1) *
// per)) with per = ceil(all / split); warp w of WK takes the slice's chunks w, w + WK, ...
I8G_DEC_HD constexpr long long chunks(long long k, int bk) { return (k + bk - 1) / bk; }
I8G_DEC_HD constexpr long long per_slice(long long k, int bk, int split) {
  return (chunks(k, bk) + split - 1) / split;
}
I8G_DEC_HD constexpr long long slice_begin(long long k, int bk, int split, int z) { return z * per_slice(k, bk, split); }
I8G_DEC_HD constexpr long long slice_end(long long k, int bk, int split, int z) {
  return (z + 1) * per_slice(k, bk, split) < chunks(k, bk) ? (z + 1) * per_slice(k, bk, split) : chunks(k, bk);
}
// Chunks warp w of wk streams in slice z (0 where the slice has fewer chunks than warps).
I8G_DEC_HD constexpr long long warp_chunks(long long k, int bk, int split, int z, int w, int wk) {
  return slice_begin(k, bk, split, z) + w < slice_end(k, bk, split, z)
             ? (slice_end(k, bk, split, z) - slice_begin(k, bk, split, z) - w + wk - 1) / wk
             : 0;
}

}  // namespace dec
}  // namespace i8g

#endif

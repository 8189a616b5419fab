/* Lane layouts of the CDNA int8 MFMA instructions (wave64), as plain constexpr functions so
 * that the device template and the host tests use the very same index math.
 *
 * v_mfma_i32_32x32x8i8  : D[32x32] += A[32x8]  * B[8x32],  16 int32 accumulators per lane
 * v_mfma_i32_16x16x16i8 : D[16x16] += A[16x16] * B[16x16],  4 int32 accumulators per lane
 * A and B operands are one 32-bit register per lane holding 4 consecutive k (lowest byte
 * first). Source: the AMD CDNA2 ISA guide's MFMA operand tables and the AMD matrix
 * instruction calculator; never executed here (no AMD GPU), so tests/runtime pins the
 * coverage properties these functions must have. */
#ifndef I8G_MFMA_LAYOUT_H
#define I8G_MFMA_LAYOUT_H

#if defined(__HIPCC_RTC__) || defined(__HIP__)
#define I8G_HD __host__ __device__
#else
#define I8G_HD
#endif

namespace i8g {
namespace mfma {

/* INSTR is the instruction's M = N: 32 (32x32x8i8) or 16 (16x16x16i8). */
I8G_HD constexpr int k_per_instr(int instr) { return instr == 32 ? 8 : 16; }
I8G_HD constexpr int acc_per_lane(int instr) { return instr * instr / 64; }

/* Operands: lane l holds row (A) or column (B) l % INSTR, k = operand_k(l) .. +3. The
 * lanes above the first INSTR take the next 4 k, so one instruction spans 64 / INSTR * 4 k. */
I8G_HD constexpr int operand_row(int instr, int lane) { return lane % instr; }
I8G_HD constexpr int operand_k(int instr, int lane) { return 4 * (lane / instr); }

/* Accumulator element r of lane l: column l % INSTR; rows come in groups of 4 consecutive
 * rows per register quad. 32x32: the two half-waves interleave every 4 rows, quads step 8
 * rows. 16x16: the four lane groups take rows 4g .. 4g+3. */
I8G_HD constexpr int acc_row(int instr, int lane, int r) {
  return instr == 32 ? 8 * (r / 4) + 4 * (lane / 32) + r % 4 : 4 * (lane / 16) + r;
}
I8G_HD constexpr int acc_col(int instr, int lane) { return lane % instr; }

/* Where the block tile puts accumulator element r of fragment (fi, fj) of lane `lane` in
 * wave `wave`: waves are laid out WM x WN, row-major; each wave owns a (BM/WM) x (BN/WN)
 * sub-tile made of FM x FN instruction blocks. */
I8G_HD constexpr int tile_row(int bm, int wm, int wn, int instr, int wave, int fi, int lane, int r) {
  return (wave / wn) * (bm / wm) + fi * instr + acc_row(instr, lane, r);
}
I8G_HD constexpr int tile_col(int bn, int wn, int instr, int wave, int fj, int lane) {
  return (wave % wn) * (bn / wn) + fj * instr + acc_col(instr, lane);
}

}  // namespace mfma
}  // namespace i8g

#endif

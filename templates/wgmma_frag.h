// Layout facts of wgmma.mma_async.sync.aligned.m64nNk32.s32.s8.s8 (sm_90a) for the wgmma family:
// the shared-memory matrix descriptor, the K-major 128-byte-swizzle layout it describes, and the
// accumulator (D) fragment map. Plain constexpr functions shared by the device template
// (templates/wgmma.cuh) and the host tests (tests/generator/wgmma_frag_test.cpp).
//
// PTX ISA 9.7.15.5.1.2 ("Shared Memory Matrix Layout", "Matrix Descriptor Format"):
//   descriptor bits 13-0   encode(start address)        encode(x) = (x & 0x3FFFF) >> 4
//                   29-16  encode(leading dim byte offset)   K-major swizzled: unused, "assumed 1"
//                   45-32  encode(stride dim byte offset)    K-major: first 8 rows -> next 8 rows
//                   51-49  base offset: 0 when the swizzle pattern starts on a 1024-byte boundary
//                   63-62  swizzle mode: 0 none, 1 = 128B, 2 = 64B, 3 = 32B
//   K-major, 128B swizzling, canonical layout in elements (T = 128 / element bits = 16 for s8):
//     Swizzle<3,4,3> o ((8,m),(T,2k)):((8T,SBO),(1,T))
//   i.e. row r of 8 at r * 128 bytes, groups of 8 rows SBO bytes apart, k contiguous in a
//   128-byte row; then address bits 4..6 (the 16-byte chunk) are XORed with bits 7..9.
//   The swizzle acts on the shared-memory address itself (hence "base offset" for patterns that
//   do not start at 1024-byte boundaries), so tiles here start on 1024-byte boundaries.
//
// Accumulator D of m64nNk32 .s32 (Figure "WGMMA .m64nNk32 register fragment layout for
// accumulator matrix D"; CUTLASS CLayout_64xN says the same): thread t of the warpgroup,
// warp w = t / 32, lane l; register i (0 <= i < N/2) holds
//   row 16w + l/4 + 8 * ((i >> 1) & 1),  column 8 * (i >> 2) + 2 * (l % 4) + (i & 1).
#ifndef I8G_WGMMA_FRAG_H
#define I8G_WGMMA_FRAG_H

#if defined(__CUDACC__)
#define I8G_WG_HD __host__ __device__ __forceinline__
#else
#define I8G_WG_HD inline
#endif

namespace i8g {
namespace wg {

using u64 = unsigned long long;  // NVRTC has no <stdint.h> by default
using u32 = unsigned;

constexpr int kM = 64;           // rows per wgmma instruction
constexpr int kK = 32;           // k bytes per instruction (s8)
constexpr int kRowBytes = 128;   // one swizzle-atom row: the tile's BK
constexpr int kAtomBytes = 1024; // 8 rows x 128 bytes: the 128B swizzle's repeating pattern
constexpr int kWarpgroup = 128;  // threads

// --- matrix descriptor ------------------------------------------------------------------------
constexpr u64 kSwizzle128B = 1;
I8G_WG_HD constexpr u64 desc_encode(u32 bytes) { return (bytes & 0x3FFFFu) >> 4; }
// K-major tile with 128-byte rows and the 128B swizzle: SBO = 1024 (8 rows of 128 bytes), LBO
// unused (encoded as 1, as the ISA's examples do), base offset 0 (tiles are 1024-aligned).
I8G_WG_HD constexpr u64 make_desc(u32 smem_addr, u32 lbo = 16, u32 sbo = kAtomBytes) {
  return desc_encode(smem_addr) | (desc_encode(lbo) << 16) | (desc_encode(sbo) << 32) |
         (kSwizzle128B << 62);
}
I8G_WG_HD constexpr u32 desc_start(u64 d) { return u32(d & 0x3FFFu) << 4; }
I8G_WG_HD constexpr u32 desc_lbo(u64 d) { return u32((d >> 16) & 0x3FFFu) << 4; }
I8G_WG_HD constexpr u32 desc_sbo(u64 d) { return u32((d >> 32) & 0x3FFFu) << 4; }
I8G_WG_HD constexpr u32 desc_base_offset(u64 d) { return u32((d >> 49) & 7u); }
I8G_WG_HD constexpr u32 desc_swizzle(u64 d) { return u32(d >> 62); }

// A descriptor's address moves by `bytes` (a multiple of 16) by adding bytes >> 4 to its low word:
// the start-address field is the low 14 bits and shared-memory addresses stay below 2^18, so
// the sum never carries out of the field (the host test checks against make_desc). The high
// word (SBO, swizzle) is the same for every tile here, so a descriptor is one 32-bit add away
// from its neighbours: what the mainloop issues per wgmma instead of re-encoding an address.
I8G_WG_HD constexpr u32 desc_lo(u32 smem_addr, u32 lbo = 16) { return u32(desc_encode(smem_addr) | (desc_encode(lbo) << 16)); }
// The high word for `sbo` bytes between 8-row groups: kAtomBytes where the atoms of one K tile
// are stacked (every TMA-loaded tile), more where a packed weight interleaves K tiles
// (generator/packed_weight.hpp: kp * 1024).
I8G_WG_HD constexpr u32 desc_hi(u32 sbo) { return u32(desc_encode(sbo) | (kSwizzle128B << 30)); }
constexpr u32 kDescHi = desc_hi(kAtomBytes);
I8G_WG_HD constexpr u64 desc_of(u32 lo, u32 hi = kDescHi) { return (u64(hi) << 32) | lo; }
I8G_WG_HD constexpr u32 desc_step(u32 bytes) { return bytes >> 4; }

// k32 step s (0..3) of a 128-byte row starts 32 * s bytes into the atom: the descriptor's start
// address moves by 32 bytes and the hardware applies the swizzle to the resulting addresses
// (which never carry into bit 7, so bits 7..9 stay the row's): the same convention CUTLASS and
// DeepGEMM use to walk K inside a swizzle atom.
I8G_WG_HD constexpr u32 k_step_offset(int s) { return u32(s) * kK; }

// The address the hardware reads for element (row, k) of an operand (rows x 32 bytes of k)
// whose descriptor starts at `start`, per the canonical layout above (emulation for the tests).
I8G_WG_HD constexpr u32 swizzle128(u32 addr) { return addr ^ (((addr >> 7) & 7u) << 4); }
I8G_WG_HD constexpr u32 canonical_addr(u32 start, u32 sbo, int row, int k) {
  return swizzle128(start + u32(row / 8) * sbo + u32(row % 8) * kRowBytes + u32(k));
}

// --- accumulator fragment ---------------------------------------------------------------------
I8G_WG_HD constexpr int d_row(int t, int i) { return 16 * (t / 32) + (t % 32) / 4 + 8 * ((i >> 1) & 1); }
I8G_WG_HD constexpr int d_col(int t, int i) { return 8 * (i >> 2) + 2 * (t % 4) + (i & 1); }

// Wide stores of 2-byte outputs: lanes t and t ^ 1 swap one packed column pair so that, for the
// column groups 2p and 2p + 1 (16 columns), each lane holds four adjacent columns and a row's four
// lanes cover 32 contiguous bytes (one sector) in one 8-byte store each. Even lanes keep group
// 2p's pair and take their odd neighbour's; odd lanes take their even neighbour's pair of group
// 2p + 1 and keep their own. wide_col: the first of the four columns lane t stores, within the 16.
I8G_WG_HD constexpr int wide_col(int t) { return 2 * (t % 4) + 6 * (t & 1); }

// --- block tiling -----------------------------------------------------------------------------
// A block of WG warpgroups computes BM x BN, BM = 64 * MI * WG: warpgroup g owns rows
// [64 * MI * g, 64 * MI * (g + 1)), one m64 instruction per 64 rows, all BN columns.
// Per stage the A tile (BM rows of 128 bytes) then the B tile (BN rows), each 1024-aligned.
I8G_WG_HD constexpr int stage_bytes(int bm, int bn) { return (bm + bn) * kRowBytes; }
// Rows of the x box over m rows: bm, or m where one row tile holds all of them. A box reaching
// past M gets its missing rows zero-filled by TMA, which the H200 does slowly (ping-pong 64x48
// on 2560 x 4096: 9.60 us at M = 1, 8.24 at 32, 7.03 at 64; with the box of M rows 7.17, 7.51
// and 7.10, session 14 calls 1 and 2). With a box of m rows the A tile's other rows keep
// whatever shared memory held and feed only output rows >= M, never stored. A partial last row
// tile still fills (a box is per tensor map, not per tile).
I8G_WG_HD constexpr int x_box_rows(int bm, long long m) { return m >= bm ? bm : m < 1 ? 1 : int(m); }

// --- a packed weight's copies (generator/packed_weight.hpp) -----------------------------------
// A weight of n rows packed with kp K tiles a stage: the bytes of one stage's block (n rounded
// up to 8 rows), where the rows of a tile from w_row (a multiple of 8) start in stage s, and how
// many bytes of its bn rows the pack holds (fewer in a last tile column past n): the one bulk
// copy a ring stage of a PW kernel issues (templates/wgmma_tma.cuh; host-tested against the pack).
I8G_WG_HD constexpr long long packed_stage_bytes(long long n, int kp) { return (n + 7) / 8 * 8 * kp * kRowBytes; }
I8G_WG_HD constexpr long long packed_tile_offset(long long s, long long w_row, long long n, int kp) {
  return s * packed_stage_bytes(n, kp) + w_row * kp * kRowBytes;
}
I8G_WG_HD constexpr int packed_tile_bytes(int bn, long long w_row, long long n, int kp) {
  return int((bn < (n + 7) / 8 * 8 - w_row ? bn : (n + 7) / 8 * 8 - w_row) * kp * kRowBytes);
}

// --- persistent tile order --------------------------------------------------------------------
// Tile `tile` of tiles_m x tiles_n in grouped order: `group` tiles of one dimension at a time,
// walking the other dimension, so that the blocks running together share operand rows in L2.
// along_n: groups of tile columns walking M (each group re-reads x, the activations); else
// groups of tile rows walking N (each group re-reads w). Re-read the smaller operand: along_n
// when M < N. A bijection of [0, tiles_m * tiles_n) for either order; 32-bit (a 64-bit division
// is a call on the device).
I8G_WG_HD void grouped_tile(int tile, int tiles_m, int tiles_n, int group, bool along_n, int& tm, int& tn) {
  const int grouped = along_n ? tiles_n : tiles_m;  // the dimension split into groups
  const int walked = along_n ? tiles_m : tiles_n;
  const int per_group = group * walked;
  const int g = tile / per_group;
  const int first = g * group;
  const int width = grouped - first < group ? grouped - first : group;
  const int in_group = tile - g * per_group;
  const int a = first + in_group % width, b = in_group / width;
  tm = along_n ? b : a;
  tn = along_n ? a : b;
}

// --- cluster work units -----------------------------------------------------------------------
// With thread-block clusters of CM blocks along M (wgmma_tma, CM = 2), the persistent scheduler
// hands out units, not tiles: unit u (of units_m x tiles_n, units_m = ceil(tiles_m / CM), in
// grouped order) is the CM tiles of one tile column in tile rows CM * um .. CM * um + CM - 1,
// and the block of rank r takes row CM * um + r. So the blocks of a cluster walk the same units,
// share each unit's w tile and run the same number of K tiles. Where CM does not divide tiles_m
// the last unit row's higher ranks get a row >= tiles_m (nothing to store). Groups: GROUP_M tile
// rows (GROUP_M / CM unit rows) or GROUP_M tile columns, the footprint of CM = 1. CM = 1: a
// unit is a tile, the order grouped_tile's.
I8G_WG_HD int cluster_units_m(int tiles_m, int cm) { return (tiles_m + cm - 1) / cm; }
I8G_WG_HD void unit_tile(int unit, int rank, int tiles_m, int tiles_n, int group, int cm, bool along_n, int& tm,
                         int& tn) {
  const int g = along_n ? group : (group / cm > 0 ? group / cm : 1);
  int um = 0;
  grouped_tile(unit, cluster_units_m(tiles_m, cm), tiles_n, g, along_n, um, tn);
  tm = um * cm + rank;
}

}  // namespace wg
}  // namespace i8g

#endif

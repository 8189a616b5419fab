// Host checks of the wgmma family's layout facts (templates/wgmma_frag.h, used as is by
// templates/wgmma.cuh): the matrix descriptor's bit fields (PTX ISA "Matrix Descriptor
// Format"), the loader's swizzled placement (mma_frag.h tile_offset<128>) against the address the
// hardware reads per the ISA's canonical K-major 128B-swizzle layout for every k32 step, the D
// fragment map (a bijection onto the 64xN tile, matching the ISA figure / CUTLASS CLayout_64xN),
// and an emulation of the kernel's whole data path (zero-filled copies, descriptor reads, MMA,
// epilogue map) against a plain int32 GEMM with M, N and K tails.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "templates/mma_frag.h"
#include "templates/wgmma_frag.h"

using namespace i8g;

namespace {

constexpr int kBK = wg::kRowBytes;

// Byte offset (from the tile start) where the loader puts element (row, k) of a tile.
unsigned loader_offset(int row, int k) {
  return mma::tile_offset<kBK>(row, k / mma::kChunk) + unsigned(k % mma::kChunk);
}

TEST(WgmmaFrag, DescriptorBitFieldsFollowTheIsa) {
  constexpr wg::u64 d = wg::make_desc(0x1A400u);  // a 1024-aligned shared address
  static_assert(wg::desc_start(d) == 0x1A400u, "start address >> 4 in bits 0-13");
  static_assert((d & 0x3FFFu) == (0x1A400u >> 4), "start address field");
  static_assert(((d >> 16) & 0x3FFFu) == 1, "LBO unused for swizzled K-major: encoded 1");
  static_assert(((d >> 32) & 0x3FFFu) == 1024 / 16, "SBO = 1024 bytes between 8-row groups");
  static_assert(wg::desc_base_offset(d) == 0, "base offset 0: the pattern starts 1024-aligned");
  static_assert((d >> 62) == 1, "swizzle mode 1 = 128B in bits 62-63");
  static_assert(((d >> 14) & 3u) == 0 && ((d >> 30) & 3u) == 0 && ((d >> 46) & 7u) == 0 &&
                    ((d >> 52) & 0x3FFu) == 0,
                "reserved bits stay zero");
  // encode(x) = (x & 0x3FFFF) >> 4: the 18-bit shared window, 16-byte units.
  static_assert(wg::desc_encode(0x3FFFFu) == 0x3FFFu && wg::desc_encode(0x40010u) == 1, "encode");
  // Every start address a k32 step can use fits and round-trips (227 KiB of shared memory).
  for (unsigned a = 0; a < 227u * 1024; a += 16) {
    const wg::u64 x = wg::make_desc(a);
    ASSERT_EQ(wg::desc_start(x), a);
    ASSERT_EQ(wg::desc_sbo(x), 1024u);
    ASSERT_EQ(wg::desc_lbo(x), 16u);
    ASSERT_EQ(wg::desc_swizzle(x), 1u);
  }
}

// The mainloop's descriptor arithmetic (desc_lo + desc_step, desc_of) equals encoding each
// address from scratch, over the whole shared-memory window the kernels use.
TEST(WgmmaFrag, SteppedDescriptorsEqualEncodedOnes) {
  for (wg::u32 base = 0; base < 232 * 1024; base += 1024)
    for (wg::u32 off : {0u, 32u, 64u, 96u, 8192u, 8192u + 96u, 16384u + 32u, 24576u + 96u}) {
      if (base + off >= (1u << 18)) continue;
      ASSERT_EQ(wg::desc_of(wg::desc_lo(base) + wg::desc_step(off)), wg::make_desc(base + off)) << base << "+" << off;
    }
}

TEST(WgmmaFrag, LoaderPlacementIsTheCanonical128BSwizzleForEveryKStep) {
  // For a tile of `rows` rows starting at a 1024-aligned address (any stage, A or B tile, any
  // m64 slice), the hardware reads element (row, k) of k32 step s at canonical_addr(start + 32s,
  // 1024, row, k). That must be exactly where the loader stored (row, 32s + k).
  for (unsigned tile_base : {0u, 1024u, 9216u, 48u * 1024, 196u * 1024})
    for (int rows : {64, 128, 256}) {
      for (int s = 0; s < kBK / wg::kK; ++s)
        for (int row = 0; row < rows; ++row)
          for (int k = 0; k < wg::kK; ++k) {
            const unsigned hw = wg::canonical_addr(tile_base + wg::k_step_offset(s), wg::kAtomBytes, row, k);
            ASSERT_EQ(hw, tile_base + loader_offset(row, s * wg::kK + k))
                << "base " << tile_base << " row " << row << " step " << s << " k " << k;
          }
      // An m64 slice at row 64*i is its own 1024-aligned operand: start + 64 * 128.
      for (int i = 0; i * wg::kM < rows; ++i)
        for (int row = 0; row < wg::kM; ++row)
          for (int k = 0; k < kBK; ++k) {
            const unsigned start = tile_base + unsigned(i * wg::kM * kBK) + wg::k_step_offset(k / wg::kK);
            ASSERT_EQ(wg::canonical_addr(start, wg::kAtomBytes, row, k % wg::kK),
                      tile_base + loader_offset(i * wg::kM + row, k));
          }
    }
}

TEST(WgmmaFrag, LoaderPlacementIsABijectionOnWholeAtoms) {
  std::set<unsigned> seen;
  for (int row = 0; row < 64; ++row)
    for (int k = 0; k < kBK; ++k) ASSERT_TRUE(seen.insert(loader_offset(row, k)).second);
  EXPECT_EQ(*seen.rbegin(), 64u * kBK - 1);
}

TEST(WgmmaFrag, AccumulatorMapIsABijectionMatchingTheIsaFigure) {
  for (int n : {8, 16, 64, 128, 256}) {
    std::set<std::pair<int, int>> seen;
    for (int t = 0; t < wg::kWarpgroup; ++t)
      for (int i = 0; i < n / 2; ++i) {
        const int row = wg::d_row(t, i), col = wg::d_col(t, i);
        ASSERT_TRUE(row >= 0 && row < 64 && col >= 0 && col < n);
        ASSERT_TRUE(seen.insert({row, col}).second) << "t " << t << " i " << i;
      }
    EXPECT_EQ(int(seen.size()), 64 * n);
  }
  // The figure's first 64x8 core: warp w rows 16w..16w+15; lane l holds (l/4, 2(l%4)), +1 col,
  // then the same 8 rows lower; each further 4 registers the next 8 columns.
  EXPECT_EQ(wg::d_row(0, 0), 0);
  EXPECT_EQ(wg::d_col(0, 1), 1);
  EXPECT_EQ(wg::d_row(5, 2), 9);
  EXPECT_EQ(wg::d_col(5, 2), 2);
  EXPECT_EQ(wg::d_row(32 + 31, 3), 16 + 7 + 8);
  EXPECT_EQ(wg::d_col(32 + 31, 3), 7);
  EXPECT_EQ(wg::d_col(0, 4), 8);
  EXPECT_EQ(wg::d_row(96, 127), 48 + 8);
  EXPECT_EQ(wg::d_col(96, 127), 8 * 31 + 1);
  // CUTLASS CLayout_64xN: ((4,8,4),(2,2,N/8)):((128,1,16),(64,8,512)), value = m + 64 n.
  for (int t = 0; t < wg::kWarpgroup; ++t)
    for (int i = 0; i < 128; ++i) {
      const int v = 128 * (t % 4) + (t / 4) % 8 + 16 * (t / 32) + 64 * (i % 2) + 8 * ((i / 2) % 2) +
                    512 * (i / 4);
      ASSERT_EQ(v, wg::d_row(t, i) + 64 * wg::d_col(t, i));
    }
}

// The wide store's lane exchange (wgmma.cuh store_wide): within groups 2p and 2p + 1, lane t sends
// its pair of group 2p + (t even) to lane t ^ 1 and stores its own pair and the received one as
// four adjacent columns from wide_col(t); per row the four lanes then store every column once.
TEST(WgmmaFrag, WideStoreExchangeCoversEveryColumnOnce) {
  for (int t = 0; t < wg::kWarpgroup; ++t) {
    const int partner = t ^ 1;
    const bool odd = t & 1;
    // Registers 2h, 2h + 1 of group g hold columns d_col(., 4g + 2h) and + 1 (same row).
    const int own = wg::d_col(t, odd ? 4 : 0), got = wg::d_col(partner, odd ? 4 : 0);
    const int lo = odd ? got : own, hi = odd ? own : got;  // the two pairs in column order
    ASSERT_EQ(wg::d_row(t, 0), wg::d_row(partner, 0));
    EXPECT_EQ(lo, wg::wide_col(t)) << "t " << t;
    EXPECT_EQ(hi, lo + 2) << "t " << t;
  }
  std::set<int> cols;
  for (int q = 0; q < 4; ++q)
    for (int c = 0; c < 4; ++c) EXPECT_TRUE(cols.insert(wg::wide_col(q) + c).second);
  EXPECT_EQ(cols, (std::set<int>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}));
}

// The kernel's data path for one block on the CPU: TileLoader's copies (chunk c of row r with
// zero fill past M/N/K) into a shared buffer, then for every k32 step and m64 slice the bytes
// the descriptors address, the MMA, and the epilogue's (thread, register) -> (row, col) map.
void emulate(int M, int N, int K, int BM, int BN, int WG, int stages, std::mt19937& rng) {
  std::uniform_int_distribution<int> dist(-128, 127);
  std::vector<int8_t> x(size_t(M) * K), w(size_t(N) * K);
  for (auto& v : x) v = int8_t(dist(rng));
  for (auto& v : w) v = int8_t(dist(rng));
  const int MI = BM / (64 * WG);
  const int stage_bytes = wg::stage_bytes(BM, BN), a_bytes = BM * kBK;
  const int bases = 512;  // the dynamic window is not 1024-aligned: the kernel rounds it up
  std::vector<int32_t> got(size_t(M) * N, INT32_MIN);
  for (int m0 = 0; m0 < M; m0 += BM)
    for (int n0 = 0; n0 < N; n0 += BN) {
      std::vector<int8_t> smem(size_t(bases) + 1024 + size_t(stages) * stage_bytes, 0x5a);
      const unsigned base = (unsigned(bases) + 1023u) & ~1023u;
      std::vector<std::vector<int32_t>> acc(size_t(WG) * wg::kWarpgroup, std::vector<int32_t>(size_t(MI) * BN / 2, 0));
      for (int kt = 0; kt * kBK < K; ++kt) {
        const unsigned sa = base + unsigned((kt % stages) * stage_bytes), sb = sa + unsigned(a_bytes);
        auto copy = [&](const std::vector<int8_t>& src, int row0, int rows, int limit, unsigned dst) {
          for (int r = 0; r < rows; ++r)
            for (int c = 0; c < kBK / 16; ++c) {
              const int k0 = kt * kBK + 16 * c;
              const bool in = row0 + r < limit && k0 < K;  // K % 16 == 0: chunks are whole
              for (int j = 0; j < 16; ++j)
                smem[dst + mma::tile_offset<kBK>(r, c) + j] = in ? src[size_t(row0 + r) * K + k0 + j] : 0;
            }
        };
        copy(x, m0, BM, M, sa);
        copy(w, n0, BN, N, sb);
        for (int g = 0; g < WG; ++g)
          for (int i = 0; i < MI; ++i)
            for (int s = 0; s < kBK / wg::kK; ++s) {
              const wg::u64 da = wg::make_desc(sa + unsigned((g * MI + i) * 64 * kBK) + wg::k_step_offset(s));
              const wg::u64 db = wg::make_desc(sb + wg::k_step_offset(s));
              for (int t = 0; t < wg::kWarpgroup; ++t)
                for (int r = 0; r < BN / 2; ++r) {
                  const int row = wg::d_row(t, r), col = wg::d_col(t, r);
                  int32_t sum = 0;
                  for (int k = 0; k < wg::kK; ++k)
                    sum += int32_t(smem[wg::canonical_addr(wg::desc_start(da), wg::desc_sbo(da), row, k)]) *
                           int32_t(smem[wg::canonical_addr(wg::desc_start(db), wg::desc_sbo(db), col, k)]);
                  acc[size_t(g) * wg::kWarpgroup + t][size_t(i) * BN / 2 + r] += sum;
                }
            }
      }
      for (int g = 0; g < WG; ++g)
        for (int t = 0; t < wg::kWarpgroup; ++t)
          for (int i = 0; i < MI; ++i)
            for (int r = 0; r < BN / 2; ++r) {
              const int m = m0 + (MI * g + i) * 64 + wg::d_row(t, r), n = n0 + wg::d_col(t, r);
              if (m < M && n < N) {
                ASSERT_EQ(got[size_t(m) * N + n], INT32_MIN) << "written twice";
                got[size_t(m) * N + n] = acc[size_t(g) * wg::kWarpgroup + t][size_t(i) * BN / 2 + r];
              }
            }
    }
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n) {
      int32_t ref = 0;
      for (int k = 0; k < K; ++k) ref += int32_t(x[size_t(m) * K + k]) * int32_t(w[size_t(n) * K + k]);
      ASSERT_EQ(got[size_t(m) * N + n], ref) << "m " << m << " n " << n << " (M " << M << " N " << N
                                             << " K " << K << " bm " << BM << " bn " << BN << ")";
    }
}

TEST(WgmmaFrag, EmulatedDataPathMatchesAPlainGemmWithTails) {
  std::mt19937 rng(7);
  emulate(64, 64, 128, 64, 64, 1, 2, rng);
  emulate(70, 72, 272, 64, 64, 1, 3, rng);      // M, N and K tails (K = 2 tiles + 16)
  emulate(130, 200, 400, 128, 128, 1, 3, rng);  // two m64 per warpgroup
  emulate(100, 130, 144, 128, 256, 2, 2, rng);  // two warpgroups, bn 256
  emulate(257, 64, 256, 256, 64, 2, 4, rng);    // two warpgroups x two m64
}

// The persistent kernels' tile order: every tile exactly once in either orientation, and a
// group's consecutive tiles share the grouped dimension's band (GROUP tiles of it) while the
// other dimension advances one tile per `width` tiles.
TEST(WgmmaFrag, GroupedTileOrderIsABijectionInBothOrientations) {
  for (int tiles_m : {1, 3, 8, 32, 33})
    for (int tiles_n : {1, 5, 8, 48})
      for (int group : {1, 8})
        for (bool along_n : {false, true}) {
          std::vector<int> seen(size_t(tiles_m * tiles_n), 0);
          for (int t = 0; t < tiles_m * tiles_n; ++t) {
            int tm = -1, tn = -1;
            wg::grouped_tile(t, tiles_m, tiles_n, group, along_n, tm, tn);
            ASSERT_TRUE(tm >= 0 && tm < tiles_m && tn >= 0 && tn < tiles_n)
                << t << " -> " << tm << "," << tn << " of " << tiles_m << "x" << tiles_n;
            ++seen[size_t(tm * tiles_n + tn)];
          }
          for (int v : seen) ASSERT_EQ(v, 1) << tiles_m << "x" << tiles_n << " group " << group << " along_n " << along_n;
        }
  // 32 x 48 tiles, groups of 8: the first 8 tiles along N are tile columns 0..7 of tile row 0,
  // the next 8 the same columns of row 1; along M, the transpose.
  int tm = 0, tn = 0;
  wg::grouped_tile(9, 32, 48, 8, true, tm, tn);
  EXPECT_EQ(tm, 1);
  EXPECT_EQ(tn, 1);
  wg::grouped_tile(9, 32, 48, 8, false, tm, tn);
  EXPECT_EQ(tm, 1);
  EXPECT_EQ(tn, 1);
  wg::grouped_tile(8 * 32, 32, 48, 8, true, tm, tn);  // the second group of tile columns
  EXPECT_EQ(tm, 0);
  EXPECT_EQ(tn, 8);
  wg::grouped_tile(8 * 48, 32, 48, 8, false, tm, tn);  // the second group of tile rows
  EXPECT_EQ(tm, 8);
  EXPECT_EQ(tn, 0);
}

// Cluster work units (wgmma_tma with cm2): over any launch, the two blocks of every cluster
// walk the same units with the same tile column and consecutive tile rows 2u, 2u + 1; every tile
// is computed exactly once, and a tile row past the last (tiles_m odd) only ever falls to rank 1
// of the last unit row. CM = 1 is grouped_tile itself.
TEST(WgmmaFrag, ClusterUnitsCoverEveryTileOnceInPairs) {
  for (int tiles_m : {1, 2, 3, 7, 8, 33})
    for (int tiles_n : {1, 2, 5, 20})
      for (bool along_n : {false, true})
        for (int clusters : {1, 3, 66}) {
          const int cm = 2, units = wg::cluster_units_m(tiles_m, cm) * tiles_n;
          std::vector<int> seen(size_t(tiles_m * tiles_n), 0);
          int past = 0;
          for (int cluster = 0; cluster < clusters; ++cluster)
            for (int unit = cluster; unit < units; unit += clusters) {
              int tm0 = -1, tn0 = -1, tm1 = -1, tn1 = -1;
              wg::unit_tile(unit, 0, tiles_m, tiles_n, 8, cm, along_n, tm0, tn0);
              wg::unit_tile(unit, 1, tiles_m, tiles_n, 8, cm, along_n, tm1, tn1);
              ASSERT_EQ(tn0, tn1) << "a cluster's tiles share the w tile";
              ASSERT_EQ(tm0 % 2, 0);
              ASSERT_EQ(tm1, tm0 + 1);
              ASSERT_TRUE(tm0 >= 0 && tm0 < tiles_m && tn0 >= 0 && tn0 < tiles_n) << tm0 << "," << tn0;
              ++seen[size_t(tm0 * tiles_n + tn0)];
              if (tm1 < tiles_m) {
                ++seen[size_t(tm1 * tiles_n + tn1)];
              } else {
                ASSERT_EQ(tm1, tiles_m) << "only the last unit row runs past M";
                ASSERT_EQ(tiles_m % 2, 1);
                ++past;
              }
            }
          for (int v : seen) ASSERT_EQ(v, 1) << tiles_m << "x" << tiles_n << " clusters " << clusters;
          EXPECT_EQ(past, tiles_m % 2 ? tiles_n : 0);
        }
  // CM = 1: the same order as grouped_tile.
  for (int u = 0; u < 7 * 9; ++u) {
    int a = 0, b = 0, c = 0, d = 0;
    wg::unit_tile(u, 0, 7, 9, 8, 1, false, a, b);
    wg::grouped_tile(u, 7, 9, 8, false, c, d);
    EXPECT_EQ(a, c);
    EXPECT_EQ(b, d);
  }
  // Groups of 8 tile rows with or without clusters: with cm2, 4 unit rows (8 tile rows) walk N.
  int tm = 0, tn = 0;
  wg::unit_tile(4, 0, 32, 48, 8, 2, false, tm, tn);  // the fifth unit: the next tile column
  EXPECT_EQ(tm, 0);
  EXPECT_EQ(tn, 1);
  wg::unit_tile(3, 1, 32, 48, 8, 2, false, tm, tn);
  EXPECT_EQ(tm, 7);
  EXPECT_EQ(tn, 0);
}

}  // namespace

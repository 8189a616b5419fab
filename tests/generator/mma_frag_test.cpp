// Host checks of the mma_sync family's index math (templates/mma_frag.h, which the device
// template uses as is): fragment maps against the PTX ISA's tables, ldmatrix address
// providers against the fragments they must produce, single ownership of every output, the
// swizzle's bijectivity, and bank-conflict freedom of every ldmatrix phase and cp.async write.
#include <gtest/gtest.h>

#include <array>
#include <set>
#include <utility>
#include <vector>

#include "templates/mma_frag.h"

using namespace i8g::mma;

namespace {

constexpr int kLanes = 32;
int bank(unsigned byte_address) { return int(byte_address / 4) % 32; }

template <int BK>
unsigned offset_of(int row, int k) {  // byte of element (row, k) in a swizzled tile
  return tile_offset<BK>(row, k / kChunk) + unsigned(k % kChunk);
}

// Emulates ldmatrix.m8n8.x4.b16 from the PTX ISA's description: lane 8q+r provides the row
// address of row r of matrix q; lane T receives in register q the four bytes at 4*(T%4) of
// row T/4 of matrix q. `tile` maps a byte offset to the (row, k) stored there.
template <typename Tile>
std::array<std::array<std::pair<int, int>, 4>, 4> ldmatrix_x4(const Tile& tile,
                                                              const unsigned (&addr)[kLanes],
                                                              int lane) {
  std::array<std::array<std::pair<int, int>, 4>, 4> regs{};
  for (int q = 0; q < 4; ++q)
    for (int j = 0; j < 4; ++j) regs[q][j] = tile.at(addr[8 * q + lane / 4] + 4 * (lane % 4) + j);
  return regs;
}

template <int BK>
struct SwizzledTile {  // rows x BK bytes, each byte remembering the (row, k) written there
  explicit SwizzledTile(int rows) : cells(size_t(rows) * BK, {-1, -1}) {
    for (int r = 0; r < rows; ++r)
      for (int k = 0; k < BK; ++k) cells.at(offset_of<BK>(r, k)) = {r, k};
  }
  std::pair<int, int> at(unsigned off) const { return cells.at(off); }
  std::vector<std::pair<int, int>> cells;
};

template <int BK>
void check_ldmatrix_feeds_fragments() {
  const SwizzledTile<BK> tile(64);
  for (int r0 = 0; r0 < 64; r0 += 16)
    for (int kk = 0; kk < BK / kK; ++kk) {
      unsigned a_addr[kLanes], b_addr[kLanes];
      for (int l = 0; l < kLanes; ++l) {
        a_addr[l] = tile_offset<BK>(r0 + ldsm_a_row(l), 2 * kk + ldsm_a_chunk(l));
        b_addr[l] = tile_offset<BK>(r0 + ldsm_b_row(l), 2 * kk + ldsm_b_chunk(l));
      }
      for (int l = 0; l < kLanes; ++l) {
        const auto a = ldmatrix_x4(tile, a_addr, l);
        const auto b = ldmatrix_x4(tile, b_addr, l);
        for (int reg = 0; reg < 4; ++reg)
          for (int j = 0; j < 4; ++j) {
            EXPECT_EQ(a[reg][j], std::make_pair(r0 + a_row(l, reg), kK * kk + a_k(l, reg, j)))
                << "A BK=" << BK << " lane " << l << " reg " << reg << " byte " << j;
            // Register pair (0,1) is n-tile rows r0..r0+7; pair (2,3) is r0+8..r0+15.
            EXPECT_EQ(b[reg][j], std::make_pair(r0 + 8 * (reg >> 1) + b_col(l),
                                                kK * kk + b_k(l, reg & 1, j)))
                << "B BK=" << BK << " lane " << l << " reg " << reg << " byte " << j;
          }
      }
    }
}

}  // namespace

TEST(MmaFragments, MatchThePtxTablesAtSpotChecks) {
  // PTX ISA m16n8k32 .s8: lane 5 is groupID 1, threadID_in_group 1.
  EXPECT_EQ(a_row(5, 0), 1);
  EXPECT_EQ(a_k(5, 0, 0), 4);
  EXPECT_EQ(a_row(5, 1), 9);
  EXPECT_EQ(a_k(5, 2, 3), 23);
  EXPECT_EQ(a_row(5, 3), 9);
  EXPECT_EQ(b_col(5), 1);
  EXPECT_EQ(b_k(5, 1, 2), 22);
  EXPECT_EQ(c_row(31, 3), 15);
  EXPECT_EQ(c_col(31, 3), 7);
}

TEST(MmaFragments, EachMapCoversItsMatrixExactlyOnce) {
  std::set<std::pair<int, int>> a, b, c;
  for (int l = 0; l < kLanes; ++l) {
    for (int reg = 0; reg < 4; ++reg)
      for (int j = 0; j < 4; ++j) EXPECT_TRUE(a.insert({a_row(l, reg), a_k(l, reg, j)}).second);
    for (int reg = 0; reg < 2; ++reg)
      for (int j = 0; j < 4; ++j) EXPECT_TRUE(b.insert({b_col(l), b_k(l, reg, j)}).second);
    for (int i = 0; i < 4; ++i) EXPECT_TRUE(c.insert({c_row(l, i), c_col(l, i)}).second);
  }
  EXPECT_EQ(a.size(), size_t(kM * kK));
  EXPECT_EQ(b.size(), size_t(kN * kK));
  EXPECT_EQ(c.size(), size_t(kM * kN));
  for (const auto& [r, k] : a) EXPECT_TRUE(r >= 0 && r < kM && k >= 0 && k < kK);
  for (const auto& [n, k] : b) EXPECT_TRUE(n >= 0 && n < kN && k >= 0 && k < kK);
  for (const auto& [r, n] : c) EXPECT_TRUE(r >= 0 && r < kM && n >= 0 && n < kN);
}

TEST(MmaFragments, LdmatrixFromTheSwizzledTileYieldsTheMmaFragments) {
  check_ldmatrix_feeds_fragments<32>();
  check_ldmatrix_feeds_fragments<64>();
  check_ldmatrix_feeds_fragments<128>();
  check_ldmatrix_feeds_fragments<256>();
}

TEST(MmaFragments, EveryOutputOfABlockTileIsOwnedOnce) {
  for (int bm : {16, 32, 64, 128, 256})
    for (int bn : {16, 32, 64, 128, 256})
      for (int wm : {1, 2, 4, 8})
        for (int wn : {1, 2, 4, 8}) {
          if (bm % (16 * wm) || bn % (16 * wn) || wm * wn > 8) continue;
          const int wtm = bm / wm, wtn = bn / wn;
          std::vector<int> owners(size_t(bm) * bn, 0);
          for (int w = 0; w < wm * wn; ++w)
            for (int l = 0; l < kLanes; ++l)
              for (int i = 0; i < wtm / kM; ++i)
                for (int j = 0; j < wtn / kN; ++j)
                  for (int e = 0; e < 4; ++e) {
                    const int r = warp_m(w, wn) * wtm + i * kM + c_row(l, e);
                    const int n = warp_n(w, wn) * wtn + j * kN + c_col(l, e);
                    ASSERT_TRUE(r < bm && n < bn);
                    ++owners[size_t(r) * bn + n];
                  }
          for (int o : owners) ASSERT_EQ(o, 1) << bm << "x" << bn << " warps " << wm << "x" << wn;
        }
}

TEST(MmaSwizzle, IsABijectionThatKeepsEachLineAndChunk) {
  auto check = [](auto bk_tag) {
    constexpr int BK = decltype(bk_tag)::value;
    constexpr int kRows = 256;
    std::set<unsigned> seen;
    for (int r = 0; r < kRows; ++r)
      for (int ch = 0; ch < BK / kChunk; ++ch) {
        const unsigned plain = unsigned(r) * BK + unsigned(ch) * kChunk;
        const unsigned s = tile_offset<BK>(r, ch);
        EXPECT_EQ(s / 128, plain / 128) << "BK=" << BK << " row " << r << " chunk " << ch;
        EXPECT_EQ(s % kChunk, 0u);  // 16-byte chunks stay whole and aligned
        EXPECT_TRUE(seen.insert(s).second) << "BK=" << BK << " row " << r << " chunk " << ch;
      }
    EXPECT_EQ(seen.size(), size_t(kRows * BK / kChunk));
  };
  check(std::integral_constant<int, 32>{});
  check(std::integral_constant<int, 64>{});
  check(std::integral_constant<int, 128>{});
  check(std::integral_constant<int, 256>{});
}

TEST(MmaSwizzle, LdmatrixPhasesHitAll32Banks) {
  // Each 8-lane phase of ldmatrix reads 8 rows x 16 bytes: conflict-free iff 32 distinct banks.
  auto check = [](auto bk_tag, int rows) {
    constexpr int BK = decltype(bk_tag)::value;
    for (int r0 = 0; r0 < rows; r0 += 16)
      for (int kk = 0; kk < BK / kK; ++kk)
        for (int which = 0; which < 2; ++which)
          for (int q = 0; q < 4; ++q) {
            std::set<int> banks;
            for (int r = 0; r < 8; ++r) {
              const int l = 8 * q + r;
              const unsigned addr =
                  which == 0 ? tile_offset<BK>(r0 + ldsm_a_row(l), 2 * kk + ldsm_a_chunk(l))
                             : tile_offset<BK>(r0 + ldsm_b_row(l), 2 * kk + ldsm_b_chunk(l));
              EXPECT_EQ(addr % 16, 0u);
              for (int word = 0; word < 4; ++word) banks.insert(bank(addr + 4 * word));
            }
            EXPECT_EQ(banks.size(), 32u) << "BK=" << BK << " rows " << r0 << " kk " << kk
                                         << (which ? " B" : " A") << " matrix " << q;
          }
  };
  check(std::integral_constant<int, 32>{}, 256);
  check(std::integral_constant<int, 64>{}, 256);
  check(std::integral_constant<int, 128>{}, 256);
  check(std::integral_constant<int, 256>{}, 256);
  // Without the swizzle a 64-byte pitch puts rows r and r+2 in the same banks: the test bites.
  std::set<int> plain;
  for (int r = 0; r < 8; ++r) plain.insert(bank(unsigned(r) * 64) / 4);
  EXPECT_LT(plain.size(), 8u);
}

TEST(MmaSwizzle, CpAsyncWritesOfEightConsecutiveChunksHitAll32Banks) {
  // A warp's 16-byte cp.async writes go in quarter-warp phases of 8 consecutive chunks.
  auto check = [](auto bk_tag) {
    constexpr int BK = decltype(bk_tag)::value;
    for (int c0 = 0; c0 < 256 * BK / kChunk; c0 += 8) {
      std::set<int> banks;
      for (int c = c0; c < c0 + 8; ++c) {
        const unsigned addr = tile_offset<BK>(copy_row<BK>(c), copy_chunk<BK>(c));
        for (int word = 0; word < 4; ++word) banks.insert(bank(addr + 4 * word));
      }
      EXPECT_EQ(banks.size(), 32u) << "BK=" << BK << " chunk " << c0;
    }
  };
  check(std::integral_constant<int, 32>{});
  check(std::integral_constant<int, 64>{});
  check(std::integral_constant<int, 128>{});
  check(std::integral_constant<int, 256>{});
}

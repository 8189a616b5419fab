// Host checks of the mma_sync family's index math (templates/mma_frag.h, which the device
// template uses as is): fragment maps against the PTX ISA's tables, ldmatrix address
// providers against the fragments they must produce, single ownership of every output, the
// swizzle's bijectivity, and bank-conflict freedom of every ldmatrix phase and cp.async write.
// For [K,N] weights: the k-row permutation, ldmatrix.x4.trans + prmt against the B fragments,
// the epilogue's column map, and a whole-problem emulation of the kernel's data path (copies,
// fragments, mma, epilogue) against a plain int32 GEMM, for both layouts.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <random>
#include <set>
#include <type_traits>
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
// `tile.at(offset)` is the byte's label ((row, k) pair) or value.
template <typename Tile>
auto ldmatrix_x4(const Tile& tile, const unsigned (&addr)[kLanes], int lane) {
  std::array<std::array<std::decay_t<decltype(tile.at(0u))>, 4>, 4> regs{};
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

// ================================ [K,N] weights ==================================================

namespace {

using Cell = std::pair<int, int>;  // (k, n) of a byte of w; {-1, -1}: not written

// ldmatrix.m8n8.x4.trans.b16 from the PTX ISA: lanes 8q..8q+7 give the addresses of rows 0..7
// of matrix q; with .trans lane T receives in register q the 16-bit elements at rows 2(T%4)
// (low half) and 2(T%4)+1 (high half) of column T/4 of matrix q, i.e. bytes 2(T/4), 2(T/4)+1
// of those two rows.
template <typename Tile>
auto ldmatrix_x4_trans(const Tile& tile, const unsigned (&addr)[kLanes], int lane) {
  std::array<std::array<std::decay_t<decltype(tile.at(0u))>, 4>, 4> regs{};
  for (int q = 0; q < 4; ++q)
    for (int h = 0; h < 2; ++h)
      for (int b = 0; b < 2; ++b)
        regs[q][2 * h + b] = tile.at(addr[8 * q + 2 * (lane % 4) + h] + 2 * (lane / 4) + b);
  return regs;
}

// prmt.b32 d, a, b, sel (generic form) from the PTX ISA: the source bytes are {b, a} numbered
// 0..7 from a's byte 0; nibble i of sel picks d's byte i (its msb, sign replication, unused).
template <typename T>
std::array<T, 4> prmt(const std::array<T, 4>& a, const std::array<T, 4>& b, unsigned sel) {
  std::array<T, 4> d{};
  for (int i = 0; i < 4; ++i) {
    const unsigned nib = (sel >> (4 * i)) & 0xFu;
    EXPECT_EQ(nib & 8u, 0u) << "sign replication would corrupt int8 bytes";
    d[i] = nib < 4 ? a[nib] : b[nib - 4];
  }
  return d;
}

// The four B registers one ldsm_x4_trans_kn yields (mma_sync.cuh): {b0, b1} of the even-column
// n8 tile, then {b0, b1} of the odd-column tile.
template <typename T>
std::array<std::array<T, 4>, 4> kn_b_regs(const std::array<std::array<T, 4>, 4>& r) {
  return {prmt(r[0], r[1], kPrmtEven), prmt(r[2], r[3], kPrmtEven), prmt(r[0], r[1], kPrmtOdd),
          prmt(r[2], r[3], kPrmtOdd)};
}

// Mirrors KnTileLoader (mma_sync.cuh): calls f(shared row, chunk, global k row (tile-relative))
// for every copy the block's threads issue for a BK x BN tile, with the loader's formulas.
template <typename F>
void kn_copies(int bk, int bn, int threads, F f) {
  const int cpr = bn / kChunk, rstep = threads / cpr, steps = (bk + rstep - 1) / rstep;
  for (int tid = 0; tid < threads; ++tid) {
    const int r0 = tid / cpr, ch = tid % cpr;  // copy_row<BN>, copy_chunk<BN>
    EXPECT_EQ(r0, bn == 16 ? copy_row<16>(tid) : bn == 32 ? copy_row<32>(tid)
                  : bn == 64 ? copy_row<64>(tid) : bn == 128 ? copy_row<128>(tid) : copy_row<256>(tid));
    for (int s = 0; s < steps; ++s) {
      const int row = r0 + s * rstep;
      if (bk % rstep != 0 && row >= bk) break;
      f(tid, s, row, ch, kn_src_row(r0) + kn_src_row(s * rstep));
    }
  }
}

unsigned kn_offset(int bn, int row, int chunk) {
  switch (bn) {
    case 16: return tile_offset<16>(row, chunk);
    case 32: return tile_offset<32>(row, chunk);
    case 64: return tile_offset<64>(row, chunk);
    case 128: return tile_offset<128>(row, chunk);
    case 256: return tile_offset<256>(row, chunk);
  }
  ADD_FAILURE() << "bn " << bn;
  return 0;
}

constexpr int kBns[] = {16, 32, 64, 128, 256};
constexpr int kBks[] = {32, 64, 128, 256};
constexpr int kThreads[] = {32, 64, 128, 256};

}  // namespace

TEST(MmaKn, RowPermutationIsTheDesignedBijection) {
  // Inside each group of 16: k = 4q+i -> {2q, 2q+1, 8+2q, 9+2q}[i]; groups stay in place.
  for (int k = 0; k < 256; ++k) {
    const int q = (k % 16) / 4, i = k % 4;
    const int want[4] = {2 * q, 2 * q + 1, 8 + 2 * q, 9 + 2 * q};
    EXPECT_EQ(kn_smem_row(k), (k & ~15) + want[i]) << k;
    EXPECT_EQ(kn_src_row(kn_smem_row(k)), k) << k;
    EXPECT_EQ(kn_smem_row(kn_src_row(k)), k) << k;
  }
  // The loader's split kn_src_row(r0 + s*R) = kn_src_row(r0) + kn_src_row(s*R), R a power of two.
  for (int r = 1; r <= 256; r *= 2)
    for (int r0 = 0; r0 < r; ++r0)
      for (int s = 0; s * r < 256; ++s)
        EXPECT_EQ(kn_src_row(r0 + s * r), kn_src_row(r0) + kn_src_row(s * r))
            << r << " " << r0 << " " << s;
}

TEST(MmaKn, CopiesFillEveryByteOfTheTileOnceFromTheRightRow) {
  for (int bn : kBns)
    for (int bk : kBks)
      for (int threads : kThreads) {
        if (threads % (bn / kChunk) != 0) continue;
        std::vector<Cell> tile(size_t(bk) * bn, {-1, -1});
        kn_copies(bk, bn, threads, [&](int, int, int row, int ch, int k) {
          ASSERT_TRUE(k >= 0 && k < bk);
          EXPECT_EQ(row, kn_smem_row(k));  // global row k lands at shared row sigma(k)
          EXPECT_EQ(row & ~15, k & ~15);   // the loader's K test uses the shared row's group
          for (int b = 0; b < kChunk; ++b) {
            Cell& c = tile.at(kn_offset(bn, row, ch) + unsigned(b));
            EXPECT_EQ(c.first, -1) << "byte written twice: bn " << bn << " bk " << bk;
            c = {k, ch * kChunk + b};
          }
        });
        for (const Cell& c : tile)
          ASSERT_NE(c.first, -1) << "bn " << bn << " bk " << bk << " threads " << threads;
      }
}

TEST(MmaKn, TransLdmatrixAndPrmtYieldTheEvenAndOddColumnFragments) {
  for (int bn : kBns)
    for (int bk : kBks) {
      std::vector<Cell> tile(size_t(bk) * bn);
      for (int k = 0; k < bk; ++k)
        for (int n = 0; n < bn; ++n)
          tile.at(kn_offset(bn, kn_smem_row(k), n / kChunk) + n % kChunk) = {k, n};
      for (int kk = 0; kk < bk / kK; ++kk)
        for (int c = 0; c < bn / kChunk; ++c) {
          unsigned addr[kLanes];
          for (int l = 0; l < kLanes; ++l) addr[l] = kn_offset(bn, kK * kk + ldsm_kn_row(l), c);
          for (int l = 0; l < kLanes; ++l) {
            const auto b = kn_b_regs(ldmatrix_x4_trans(tile, addr, l));
            for (int odd = 0; odd < 2; ++odd)
              for (int reg = 0; reg < 2; ++reg)
                for (int j = 0; j < 4; ++j)
                  EXPECT_EQ(b[2 * odd + reg][j],
                            Cell(kK * kk + b_k(l, reg, j), kChunk * c + 2 * b_col(l) + odd))
                      << "bn " << bn << " bk " << bk << " kk " << kk << " chunk " << c << " lane " << l
                      << (odd ? " odd" : " even") << " b" << reg << " byte " << j;
          }
        }
    }
}

TEST(MmaKn, EpilogueColumnsAreTheColumnsTheFragmentsHold) {
  // Logical column l of n8 tile j holds physical column 16(j/2) + 2l + (j&1) (the test above);
  // the accumulator c[2h+e] is logical column c_col(e), so acc_col_kn must be that column.
  for (int j = 0; j < 32; ++j)
    for (int l = 0; l < kLanes; ++l)
      for (int e = 0; e < 2; ++e) {
        EXPECT_EQ(acc_col_kn(j, l, e), 16 * (j / 2) + 2 * c_col(l, e) + (j & 1));
        EXPECT_EQ(acc_col(true, j, l, e), acc_col_kn(j, l, e));
        EXPECT_EQ(acc_col(false, j, l, e), acc_col_nk(j, l, e));
        EXPECT_EQ(acc_col_nk(j, l, e), 8 * j + c_col(l, e));
      }
  // The brief's statement: the even tile's c0, c1 are columns 4t, 4t+2; the odd tile's 4t+1, 4t+3.
  for (int l = 0; l < kLanes; ++l) {
    const int t = l % 4;
    EXPECT_EQ(acc_col_kn(0, l, 0), 4 * t);
    EXPECT_EQ(acc_col_kn(0, l, 1), 4 * t + 2);
    EXPECT_EQ(acc_col_kn(1, l, 0), 4 * t + 1);
    EXPECT_EQ(acc_col_kn(1, l, 1), 4 * t + 3);
  }
  // Every column of a 16-column pair is owned by exactly one (tile, lane group, e) per row.
  for (int g = 0; g < 8; ++g) {
    std::set<int> cols;
    for (int j = 0; j < 2; ++j)
      for (int t = 0; t < 4; ++t)
        for (int e = 0; e < 2; ++e) EXPECT_TRUE(cols.insert(acc_col_kn(j, 4 * g + t, e)).second);
    EXPECT_EQ(cols.size(), 16u);
    EXPECT_EQ(*cols.rbegin(), 15);
  }
}

TEST(MmaKn, SwizzleIsABijectionAndEveryTransLdmatrixPhaseHitsAll32Banks) {
  for (int bn : kBns) {
    constexpr int kRows = 256;
    std::set<unsigned> seen;
    for (int r = 0; r < kRows; ++r)
      for (int ch = 0; ch < bn / kChunk; ++ch) {
        const unsigned s = kn_offset(bn, r, ch);
        EXPECT_EQ(s / 128, (unsigned(r) * bn + unsigned(ch) * kChunk) / 128) << bn;
        EXPECT_EQ(s % kChunk, 0u);
        EXPECT_TRUE(seen.insert(s).second) << "bn " << bn << " row " << r << " chunk " << ch;
      }
    EXPECT_EQ(seen.size(), size_t(kRows) * bn / kChunk);
    // Matrix q of the k32 step kk at n chunk c: lanes 8q..8q+7 give shared rows 32kk+8q..+7.
    for (int kk = 0; kk < kRows / kK; ++kk)
      for (int c = 0; c < bn / kChunk; ++c)
        for (int q = 0; q < 4; ++q) {
          std::set<int> banks;
          for (int r = 0; r < 8; ++r) {
            const unsigned addr = kn_offset(bn, kK * kk + ldsm_kn_row(8 * q + r), c);
            EXPECT_EQ(addr % 16, 0u);
            for (int word = 0; word < 4; ++word) banks.insert(bank(addr + 4 * word));
          }
          EXPECT_EQ(banks.size(), 32u)
              << "bn " << bn << " kk " << kk << " chunk " << c << " matrix " << q;
        }
  }
}

TEST(MmaKn, CopyWritesOfEachQuarterWarpHitAll32Banks) {
  // cp.async's 16-byte writes go in phases of 8 consecutive threads at the same copy step.
  for (int bn : kBns)
    for (int bk : kBks)
      for (int threads : kThreads) {
        if (threads % (bn / kChunk) != 0) continue;
        std::vector<std::set<int>> banks(size_t(threads / 8) * 256);  // steps <= 128
        std::vector<int> words(banks.size(), 0);
        kn_copies(bk, bn, threads, [&](int tid, int s, int row, int ch, int) {
          const size_t phase = size_t(s) * (threads / 8) + tid / 8;
          for (int word = 0; word < 4; ++word)
            banks.at(phase).insert(bank(kn_offset(bn, row, ch) + 4 * word));
          words.at(phase) += 4;
        });
        for (size_t ph = 0; ph < banks.size(); ++ph)
          EXPECT_EQ(banks[ph].size(), size_t(words[ph]))
              << "bn " << bn << " bk " << bk << " threads " << threads << " phase " << ph;
      }
}

// ---- the whole data path, emulated --------------------------------------------------------------
namespace {

struct EmuConfig {
  int bm, bn, bk, wm, wn;
  bool kn;
};

// D = A B for one m16n8k32 from the lane fragments, per the PTX tables (a_row/a_k, b_col/b_k,
// c_row/c_col, checked above).
using Regs4 = std::array<std::array<int, 4>, 4>;  // four .b32 registers of byte values
void emulate_mma(std::array<std::array<int, 4>, kLanes>& acc, const std::array<Regs4, kLanes>& a,
                 const std::array<std::array<std::array<int, 4>, 2>, kLanes>& b) {
  int A[kM][kK], B[kK][kN];
  for (int l = 0; l < kLanes; ++l) {
    for (int reg = 0; reg < 4; ++reg)
      for (int j = 0; j < 4; ++j) A[a_row(l, reg)][a_k(l, reg, j)] = a[l][reg][j];
    for (int reg = 0; reg < 2; ++reg)
      for (int j = 0; j < 4; ++j) B[b_k(l, reg, j)][b_col(l)] = b[l][reg][j];
  }
  for (int l = 0; l < kLanes; ++l)
    for (int i = 0; i < 4; ++i) {
      int d = 0;
      for (int k = 0; k < kK; ++k) d += A[c_row(l, i)][k] * B[k][c_col(l, i)];
      acc[l][i] += d;
    }
}

// Runs every block of an M x N x K problem through the kernel's data path: tile copies with
// zero fills (TileLoader / KnTileLoader), ldmatrix (.trans + prmt for [K,N]) from the swizzled
// tiles, mma.sync, and the epilogue's row/column map, and returns out[m][n] (int32; -1 never
// written; a second write fails the test).
std::vector<int64_t> emulate_gemm(const EmuConfig& cf, int M, int N, int K, const std::vector<int8_t>& x,
                                  const std::vector<int8_t>& w) {
  const int threads = 32 * cf.wm * cf.wn, wtm = cf.bm / cf.wm, wtn = cf.bn / cf.wn;
  const int mt = wtm / kM, nt = wtn / kN;
  auto a_off = [&](int row, int ch) {
    switch (cf.bk) {
      case 32: return tile_offset<32>(row, ch);
      case 64: return tile_offset<64>(row, ch);
      case 128: return tile_offset<128>(row, ch);
      default: return tile_offset<256>(row, ch);
    }
  };
  std::vector<int64_t> out(size_t(M) * N, -1);
  for (int m0 = 0; m0 < M; m0 += cf.bm)
    for (int n0 = 0; n0 < N; n0 += cf.bn) {
      std::vector<std::array<std::array<int, 4>, kLanes>> acc(size_t(cf.wm * cf.wn) * mt * nt);
      for (auto& t : acc)
        for (auto& r : t) r.fill(0);
      for (int k0 = 0; k0 < K; k0 += cf.bk) {
        std::vector<int> sa(size_t(cf.bm) * cf.bk, 1000), sb(size_t(cf.bn) * cf.bk, 1000);
        // x tile: rows m, k contiguous, zero past M and K (TileLoader).
        for (int r = 0; r < cf.bm; ++r)
          for (int k = 0; k < cf.bk; ++k) {
            const bool in = m0 + r < M && k0 + k - k % kChunk < K;
            sa.at(a_off(r, k / kChunk) + k % kChunk) = in ? x.at(size_t(m0 + r) * K + k0 + k) : 0;
          }
        if (cf.kn) {
          kn_copies(cf.bk, cf.bn, threads, [&](int, int, int row, int ch, int kr) {
            const bool in = n0 + ch * kChunk < N && (row & ~15) < K - k0;  // KnTileLoader::load
            for (int b = 0; b < kChunk; ++b) {
              int& dst = sb.at(kn_offset(cf.bn, row, ch) + unsigned(b));
              EXPECT_EQ(dst, 1000);
              dst = in ? w.at(size_t(k0 + kr) * N + n0 + ch * kChunk + b) : 0;
            }
          });
        } else {
          for (int r = 0; r < cf.bn; ++r)
            for (int k = 0; k < cf.bk; ++k) {
              const bool in = n0 + r < N && k0 + k - k % kChunk < K;
              sb.at(a_off(r, k / kChunk) + k % kChunk) = in ? w.at(size_t(n0 + r) * K + k0 + k) : 0;
            }
        }
        for (int v : sb)
          if (v == 1000) {
            ADD_FAILURE() << "a byte of the B tile was never written";
            return out;
          }
        for (int warp = 0; warp < cf.wm * cf.wn; ++warp) {
          const int wrow = warp_m(warp, cf.wn) * wtm, wcol = warp_n(warp, cf.wn) * wtn;
          for (int kk = 0; kk < cf.bk / kK; ++kk) {
            std::vector<std::array<Regs4, kLanes>> a(mt), b(nt / 2);
            for (int i = 0; i < mt; ++i) {
              unsigned addr[kLanes];
              for (int l = 0; l < kLanes; ++l)
                addr[l] = a_off(wrow + i * kM + ldsm_a_row(l), 2 * kk + ldsm_a_chunk(l));
              for (int l = 0; l < kLanes; ++l) {
                const auto r = ldmatrix_x4(sa, addr, l);
                for (int q = 0; q < 4; ++q) a[i][l][q] = r[q];
              }
            }
            for (int j = 0; j < nt / 2; ++j) {
              unsigned addr[kLanes];
              for (int l = 0; l < kLanes; ++l)
                addr[l] = cf.kn ? kn_offset(cf.bn, kK * kk + ldsm_kn_row(l), wcol / kChunk + j)
                                : a_off(wcol + j * 2 * kN + ldsm_b_row(l), 2 * kk + ldsm_b_chunk(l));
              for (int l = 0; l < kLanes; ++l)
                b[j][l] = cf.kn ? kn_b_regs(ldmatrix_x4_trans(sb, addr, l)) : ldmatrix_x4(sb, addr, l);
            }
            for (int i = 0; i < mt; ++i)
              for (int j = 0; j < nt; ++j) {
                std::array<std::array<std::array<int, 4>, 2>, kLanes> bj;
                for (int l = 0; l < kLanes; ++l)
                  bj[l] = {b[j / 2][l][2 * (j & 1)], b[j / 2][l][2 * (j & 1) + 1]};
                emulate_mma(acc[(size_t(warp) * mt + i) * nt + j], a[i], bj);
              }
          }
        }
      }
      for (int warp = 0; warp < cf.wm * cf.wn; ++warp) {
        const int wrow = warp_m(warp, cf.wn) * wtm, wcol = warp_n(warp, cf.wn) * wtn;
        for (int i = 0; i < mt; ++i)
          for (int j = 0; j < nt; ++j)
            for (int l = 0; l < kLanes; ++l)
              for (int h = 0; h < 2; ++h)
                for (int e = 0; e < 2; ++e) {
                  const int m = m0 + wrow + i * kM + c_row(l, 2 * h);
                  const int n = n0 + wcol + acc_col(cf.kn, j, l, e);
                  if (m >= M || n >= N) continue;
                  int64_t& o = out.at(size_t(m) * N + n);
                  EXPECT_EQ(o, -1) << "output " << m << "," << n << " written twice";
                  o = acc[(size_t(warp) * mt + i) * nt + j][l][2 * h + e];
                }
      }
    }
  return out;
}

}  // namespace

TEST(MmaKn, EmulatedKernelMatchesAPlainGemmForBothLayoutsWithTails) {
  const EmuConfig configs[] = {
      {16, 32, 64, 1, 2, true},   {32, 64, 64, 2, 2, true},    {64, 128, 128, 2, 4, true},
      {16, 256, 64, 1, 4, true},  {128, 64, 32, 4, 1, true},   {32, 256, 256, 1, 2, true},
      {16, 16, 32, 1, 1, true},   {16, 128, 64, 1, 1, true},   {32, 64, 64, 2, 2, false},
      {64, 128, 128, 2, 4, false},
  };
  struct Shape { int m, n, k; };
  const Shape shapes[] = {{1, 48, 80}, {17, 80, 48}, {33, 272, 208}, {130, 96, 16}};
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> val(-128, 127);
  for (const EmuConfig& cf : configs)
    for (const Shape& sh : shapes) {
      std::vector<int8_t> x(size_t(sh.m) * sh.k), w(size_t(sh.k) * sh.n);
      for (auto& v : x) v = int8_t(val(rng));
      for (auto& v : w) v = int8_t(val(rng));
      const std::vector<int64_t> got = emulate_gemm(cf, sh.m, sh.n, sh.k, x, w);
      int bad = 0;
      for (int m = 0; m < sh.m; ++m)
        for (int n = 0; n < sh.n; ++n) {
          int64_t want = 0;
          for (int k = 0; k < sh.k; ++k)
            want += int64_t(x[size_t(m) * sh.k + k]) *
                    (cf.kn ? w[size_t(k) * sh.n + n] : w[size_t(n) * sh.k + k]);
          if (got[size_t(m) * sh.n + n] != want && ++bad <= 3)
            ADD_FAILURE() << (cf.kn ? "kn" : "nk") << " bm" << cf.bm << " bn" << cf.bn << " bk" << cf.bk
                          << " wm" << cf.wm << " wn" << cf.wn << " M" << sh.m << " N" << sh.n
                          << " K" << sh.k << ": out[" << m << "][" << n
                          << "] = " << got[size_t(m) * sh.n + n] << ", want " << want;
        }
      EXPECT_EQ(bad, 0);
    }
}

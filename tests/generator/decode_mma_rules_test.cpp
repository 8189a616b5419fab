// The decode_mma family's generator rules (where it runs, why a config is refused, candidates,
// splits, which M buckets a tune races a config in, launch shape, workspace, emitted source), and
// an emulation on the host of its whole data path: each lane's 16-byte loads at the formulas of
// decode_frag.h, the mma.sync fragments as the PTX tables (mma_frag.h) define them, the warps'
// shared-memory tiles, the reducing group and the split-K partials, against a plain GEMM, with
// M, N and K tails. (Every candidate validating and its name round-tripping is pinned for all
// families in generator_test.cpp and family_table_test.cpp.)
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>

#include "generator/families.hpp"
#include "generator/generator.hpp"
#include "templates/decode_frag.h"
#include "templates/mma_frag.h"
#include "templates/splitk.h"

using namespace i8g;

namespace {

const GemmProblem kTargets[] = {{2560, 4096}, {6144, 4096}, {8192, 8192}, {4096, 14336}};

// decode_mma's candidates.
std::vector<KernelConfig> decode_of(const GemmProblem& p, Target t) {
  std::vector<KernelConfig> out;
  for (const KernelConfig& c : candidates(p, t))
    if (c.family == Family::decode_mma) out.push_back(c);
  return out;
}

KernelConfig config(int bm, int bn, int bk, int wk, int stages, int split) {
  KernelConfig c;
  c.family = Family::decode_mma;
  c.bm = bm;
  c.bn = bn;
  c.bk = bk;
  c.warps_k = wk;
  c.stages = stages;
  c.split_k = split;
  return c;
}

bool has(const std::string& s, const char* what) { return s.find(what) != std::string::npos; }

// ---- the emulation ---------------------------------------------------------------------------

struct Int4 {
  int32_t v[4] = {0, 0, 0, 0};
};
Int4 load16(const std::vector<int8_t>& a, int64_t offset) {
  Int4 r;
  std::memcpy(r.v, a.data() + offset, 16);
  return r;
}
int8_t byte_of(uint32_t word, int b) { return int8_t(word >> (8 * b)); }

// One warp's mma.sync.m16n8k32 as the PTX fragment tables define it: a[lane][4], b[lane][2],
// c[lane][4].
void mma(int32_t (*c)[4], const uint32_t (*a)[4], const uint32_t (*b)[2]) {
  int8_t A[16][32], B[32][8];
  for (int lane = 0; lane < 32; ++lane)
    for (int reg = 0; reg < 4; ++reg)
      for (int byte = 0; byte < 4; ++byte) {
        A[mma::a_row(lane, reg)][mma::a_k(lane, reg, byte)] = byte_of(a[lane][reg], byte);
        if (reg < 2) B[mma::b_k(lane, reg, byte)][mma::b_col(lane)] = byte_of(b[lane][reg], byte);
      }
  for (int lane = 0; lane < 32; ++lane)
    for (int i = 0; i < 4; ++i) {
      const int row = mma::c_row(lane, i), col = mma::c_col(lane, i);
      for (int k = 0; k < 32; ++k) c[lane][i] += int32_t(A[row][k]) * int32_t(B[k][col]);
    }
}

// The kernel's int32 output tile sums for x [M,K] and w [N,K], as decode_mma.cuh computes them:
// returns acc[m * N + n] for every m < M, n < N (what the epilogue would read).
std::vector<int32_t> emulate(const KernelConfig& c, int64_t M, int64_t N, int64_t K, const std::vector<int8_t>& x,
                             const std::vector<int8_t>& w) {
  const int RT = c.bn / dec::kRows, NT = c.bm / dec::kCols, U = c.bk / dec::kStep, WK = c.warps_k;
  const int threads = 32 * WK, G = dec::group_threads(c.bm, c.bn, threads), V = dec::group_vectors(c.bm, c.bn, threads);
  EXPECT_EQ(4 * V * G, c.bm * c.bn);
  EXPECT_EQ(G % 32, 0);
  std::vector<int32_t> out(size_t(M * N), 0);
  const int64_t gx = (N + c.bn - 1) / c.bn, gy = (M + c.bm - 1) / c.bm;
  for (int64_t by = 0; by < gy; ++by)
    for (int64_t bx = 0; bx < gx; ++bx) {
      std::vector<int32_t> total(size_t(c.bm * c.bn), 0);  // the slices' sum (splitk_reduce)
      for (int z = 0; z < c.split_k; ++z) {
        std::vector<int32_t> red(size_t(WK * dec::red_words(c.bm, c.bn)), -777);  // poisoned smem
        for (int warp = 0; warp < WK; ++warp) {
          std::vector<std::array<int32_t, 4>> acc(size_t(32 * RT * NT), std::array<int32_t, 4>{0, 0, 0, 0});
          const int64_t first = dec::slice_begin(K, c.bk, c.split_k, z) + warp;
          const int64_t iters = dec::warp_chunks(K, c.bk, c.split_k, z, warp, WK);
          for (int64_t i = 0; i < iters; ++i) {
            const int64_t kb = (first + i * WK) * c.bk;
            EXPECT_LT(kb, K);
            for (int u = 0; u < U; ++u)
              for (int s = 0; s < 2; ++s)
                for (int r = 0; r < RT; ++r)
                  for (int j = 0; j < NT; ++j) {
                    uint32_t a[32][4], b[32][2];
                    int32_t cc[32][4];
                    for (int lane = 0; lane < 32; ++lane) {
                      const int64_t k = kb + dec::load_k(u, lane);
                      const bool in = k < K;
                      Int4 wl[2], xl;
                      for (int h = 0; h < 2; ++h) {
                        const int64_t n = std::min(bx * c.bn + dec::w_row(r, h, lane), N - 1);
                        if (in) wl[h] = load16(w, n * K + k);
                        else for (int q = 0; q < 4; ++q) wl[h].v[q] = 0x5a5a5a5a;  // stale registers
                      }
                      const int64_t m = std::min(by * c.bm + dec::x_row(j, lane), M - 1);
                      if (in) xl = load16(x, m * K + k);
                      for (int q = 0; q < 4; ++q) a[lane][q] = uint32_t(wl[dec::a_load(q)].v[dec::a_word(q, s)]);
                      for (int q = 0; q < 2; ++q) b[lane][q] = uint32_t(xl.v[dec::b_word(q, s)]);
                      std::memcpy(cc[lane], acc[size_t((lane * RT + r) * NT + j)].data(), 16);
                    }
                    mma(cc, a, b);
                    for (int lane = 0; lane < 32; ++lane)
                      std::memcpy(acc[size_t((lane * RT + r) * NT + j)].data(), cc[lane], 16);
                  }
          }
          for (int lane = 0; lane < 32; ++lane)
            for (int r = 0; r < RT; ++r)
              for (int j = 0; j < NT; ++j)
                for (int e = 0; e < 4; ++e)
                  red[size_t(dec::red_offset(warp, dec::c_m(j, lane, e), dec::c_n(r, lane, e), c.bm, c.bn))] =
                      acc[size_t((lane * RT + r) * NT + j)][size_t(e)];
        }
        std::set<int> words;  // every tile word held by exactly one group thread
        for (int tid = 0; tid < G; ++tid)
          for (int v = 0; v < V; ++v)
            for (int e = 0; e < 4; ++e) {
              const int q = dec::group_word(v, tid, c.bm, c.bn, threads) + e;
              EXPECT_TRUE(words.insert(q).second) << q;
              for (int warp = 0; warp < WK; ++warp)
                total[size_t(q)] += red[size_t(dec::red_offset(warp, q / c.bn, q % c.bn, c.bm, c.bn))];
            }
        EXPECT_EQ(words.size(), size_t(c.bm * c.bn));
      }
      for (int q = 0; q < c.bm * c.bn; ++q) {
        const int64_t m = by * c.bm + q / c.bn, n = bx * c.bn + q % c.bn;
        if (m < M && n < N) out[size_t(m * N + n)] = total[size_t(q)];
      }
    }
  return out;
}

std::vector<int32_t> plain_gemm(int64_t M, int64_t N, int64_t K, const std::vector<int8_t>& x,
                                const std::vector<int8_t>& w) {
  std::vector<int32_t> out(size_t(M * N), 0);
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      int32_t s = 0;
      for (int64_t k = 0; k < K; ++k) s += int32_t(x[size_t(m * K + k)]) * int32_t(w[size_t(n * K + k)]);
      out[size_t(m * N + n)] = s;
    }
  return out;
}

}  // namespace

TEST(DecodeMmaFrag, BothOperandsSeeTheSamePhysicalKAndEveryByteOnce) {
  for (int s = 0; s < 2; ++s)
    for (int lane = 0; lane < 32; ++lane)
      for (int reg = 0; reg < 4; ++reg)
        for (int byte = 0; byte < 4; ++byte) {
          // A register reg of step s holds bytes 4 * a_word .. of the lane's 16-byte load at
          // k = 16t: physical k 16t + 4 a_word + byte, which must be phys_k of its logical k.
          const int phys = dec::kLoad * (lane % 4) + 4 * dec::a_word(reg, s) + byte;
          EXPECT_EQ(phys, dec::phys_k(s, mma::a_k(lane, reg, byte))) << s << " " << lane << " " << reg;
          if (reg < 2) {
            const int bphys = dec::kLoad * (lane % 4) + 4 * dec::b_word(reg, s) + byte;
            EXPECT_EQ(bphys, dec::phys_k(s, mma::b_k(lane, reg, byte)));
          }
        }
  std::set<int> seen;
  for (int s = 0; s < 2; ++s)
    for (int l = 0; l < 32; ++l) seen.insert(dec::phys_k(s, l));
  EXPECT_EQ(seen.size(), 64u);
  EXPECT_EQ(*seen.rbegin(), 63);
}

TEST(DecodeMmaFrag, KChunksCoverKOnceOverSlicesAndWarps) {
  for (int64_t k : {16, 64, 80, 336, 4096, 4080, 14336})
    for (int bk : {64, 128, 256})
      for (int split : {1, 2, 3, 16})
        for (int wk : {1, 4, 8}) {
          std::vector<int> hits(size_t(dec::chunks(k, bk)), 0);
          for (int z = 0; z < split; ++z)
            for (int w = 0; w < wk; ++w)
              for (int64_t i = 0; i < dec::warp_chunks(k, bk, split, z, w, wk); ++i)
                ++hits.at(size_t(dec::slice_begin(k, bk, split, z) + w + i * wk));
          for (int h : hits) EXPECT_EQ(h, 1) << k << " " << bk << " " << split << " " << wk;
        }
}

// The data path with tails: N = 40 (a partial 32-row or 64-row tile), K = 336 (a partial
// chunk, and with bk 256 a partial 64-byte step), M = 1, 3, 9, 33 (partial token tiles, and two
// row tiles at bm 8).
// The shared-memory ring (RING = 1): a chunk's copies fill every 16-byte unit of a slot exactly
// once, and each lane's fragment read finds the bytes the register path would have loaded
// (same row, same k); no 8 lanes of a quarter warp share a bank group, reading or copying.
TEST(DecodeMmaFrag, TheSharedRingHoldsWhatTheRegisterLoadsWouldRead) {
  for (int bk : {128, 256})
    for (int bm : {8, 16, 32, 64})
      for (int bn : {16, 32, 64}) {
        const int rows = bm + bn, units = bk / dec::kLoad;
        ASSERT_EQ(dec::ring_slot_bytes(bm, bn, bk), rows * bk);
        // Copy: slot unit -> the (row, unit) it holds; every unit once.
        std::vector<int> held(size_t(rows * units), -1);
        for (int op = 0; op < dec::copy_ops(bm, bn, bk); ++op) {
          std::set<int> banks[4];
          for (int lane = 0; lane < 32; ++lane) {
            const int row = dec::copy_row(op, lane, bk), unit = dec::copy_unit(lane, bk);
            ASSERT_LT(row, rows);
            const int off = dec::ring_offset(row, unit, bk);
            ASSERT_EQ(off % dec::kLoad, 0);
            ASSERT_GE(off, 0);
            ASSERT_LT(off, rows * bk);
            int& h = held[size_t(off / dec::kLoad)];
            ASSERT_EQ(h, -1) << "bk=" << bk << " op " << op << " lane " << lane << " overwrites a unit";
            h = row * units + unit;
            banks[lane / 8].insert((off / dec::kLoad) % 8);
          }
          for (const std::set<int>& b : banks) EXPECT_EQ(b.size(), 8u) << "copy op " << op << " bk=" << bk;
        }
        EXPECT_EQ(std::count(held.begin(), held.end(), -1), 0) << "bk=" << bk << " bm=" << bm << " bn=" << bn;
        // Read: lane (g, t)'s fragment units are the rows and k of its register loads.
        for (int u = 0; u < bk / dec::kStep; ++u) {
          for (int r = 0; r < bn / dec::kRows; ++r)
            for (int hh = 0; hh < 2; ++hh) {
              std::set<int> banks[4];
              for (int lane = 0; lane < 32; ++lane) {
                const int row = dec::w_row(r, hh, lane), unit = dec::load_k(u, lane) / dec::kLoad;
                const int off = dec::ring_offset(row, unit, bk);
                EXPECT_EQ(held[size_t(off / dec::kLoad)], row * units + unit);
                banks[lane / 8].insert((off / dec::kLoad) % 8);
              }
              for (const std::set<int>& b : banks) EXPECT_EQ(b.size(), 8u) << "weight read, bk=" << bk;
            }
          for (int j = 0; j < bm / dec::kCols; ++j)
            for (int lane = 0; lane < 32; ++lane) {
              const int row = bn + dec::x_row(j, lane), unit = dec::load_k(u, lane) / dec::kLoad;
              EXPECT_EQ(held[size_t(dec::ring_offset(row, unit, bk) / dec::kLoad)], row * units + unit);
            }
        }
      }
}

TEST(DecodeMmaEmulation, EveryConfigShapeMatchesAPlainGemmWithTails) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> d(-127, 127);
  const int64_t N = 40, K = 336;
  int checked = 0;
  for (int64_t M : {1, 3, 9, 33}) {
    std::vector<int8_t> x(size_t(M * K)), w(size_t(N * K));
    for (int8_t& v : x) v = int8_t(d(rng));
    for (int8_t& v : w) v = int8_t(d(rng));
    const std::vector<int32_t> want = plain_gemm(M, N, K, x, w);
    for (const KernelConfig& c : {config(8, 16, 256, 4, 2, 1), config(8, 32, 128, 2, 2, 3),
                                  config(16, 64, 64, 1, 1, 2), config(64, 16, 64, 8, 2, 2),
                                  config(32, 32, 256, 2, 3, 1)}) {
      EXPECT_EQ(emulate(c, M, N, K, x, w), want) << c << " M=" << M;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 20);
}

TEST(DecodeMmaRules, RunsOnSm80PlusWithNkWeightsAndKMultipleOf16) {
  for (const char* arch : {"sm_80", "sm_86", "sm_89", "sm_90", "sm_90a"}) {
    const Target t = Target::from_arch(arch);
    for (const GemmProblem& p : kTargets) {
      const size_t n = decode_of(p, t).size();
      EXPECT_GT(n, 0u) << p.key() << " on " << arch;
      EXPECT_LE(n, 156u) << p.key() << ": 44 unsplit + 88 split + 24 deep rings at most";
    }
    EXPECT_FALSE(decode_of({1000, 4080}, t).empty()) << "N and K tails";
    EXPECT_TRUE(decode_of({2560, 4088}, t).empty()) << "K % 16 != 0";
    EXPECT_TRUE(decode_of({2560, 4096, WeightLayout::kn}, t).empty()) << "[K,N] goes to mma_sync";
  }
  EXPECT_TRUE(decode_of({2560, 4096}, Target::from_arch("sm_75")).empty());
  const Target t = Target::from_arch("sm_90a");
  const KernelConfig c = decode_of({2560, 4096}, t).front();
  EXPECT_TRUE(has(invalid_reason({2560, 4096, WeightLayout::kn}, c, t), "[K,N] runs on mma_sync"));
  EXPECT_TRUE(has(invalid_reason({2560, 4088}, c, t), "K=4088"));
  EXPECT_TRUE(has(invalid_reason({2560, 4096}, c, Target::from_arch("sm_75")), "sm_80"));
}

TEST(DecodeMmaRules, InvalidReasonNamesTheBrokenRule) {
  const Target t = Target::from_arch("sm_90a");
  const GemmProblem p{2560, 4096};
  const KernelConfig good = config(8, 16, 256, 4, 2, 1);
  ASSERT_EQ(invalid_reason(p, good, t), "");
  auto why = [&](KernelConfig c) { return invalid_reason(p, c, t); };
  // Each field pushed past its rule, and the words the reason must hold.
  const std::pair<int KernelConfig::*, std::pair<int, const char*>> broken[] = {
      {&KernelConfig::bm, {12, "bm=12"}},          {&KernelConfig::bm, {128, "bm=128"}},
      {&KernelConfig::bn, {48, "bn=48"}},          {&KernelConfig::bk, {32, "bk=32"}},
      {&KernelConfig::warps_k, {16, "warps_k=16"}}, {&KernelConfig::stages, {5, "5 stages"}},
      {&KernelConfig::split_k, {17, "split_k=17"}}};
  for (const auto& [field, bad] : broken) {
    KernelConfig c = good;
    c.*field = bad.first;
    EXPECT_TRUE(has(why(c), bad.second)) << bad.second << ": " << why(c);
  }
  KernelConfig c = good;
  c.split_k = 16;
  EXPECT_EQ(why(c), "") << "16 chunks of 256: one per slice";
  EXPECT_TRUE(has(invalid_reason({2560, 1024}, c, t), "without K chunks")) << invalid_reason({2560, 1024}, c, t);
  c = config(64, 64, 256, 8, 4, 1);
  EXPECT_TRUE(has(why(c), "registers")) << why(c);
}

TEST(DecodeMmaRules, CandidatesCoverEveryTokenTileAndKeepTheRingInRegisters) {
  const Target t = Target::from_arch("sm_90a");
  for (const GemmProblem& p : kTargets) {
    std::map<int, int> per_bm, rings_per_bm;
    for (const KernelConfig& c : decode_of(p, t)) {
      ++per_bm[c.bm];
      if (c.schedule == 1 && c.stages == 4) {
        // The deep ring (DeepRingTwinsOnlyWhereOneWaveOfBlocksStreamsFewChunksPerWarp).
        EXPECT_EQ(c.bk, 128) << c;
        EXPECT_EQ(c.split_k, 1) << c;
        EXPECT_LE(family_info(Family::decode_mma).dynamic_smem(c), t.smem_per_block_optin) << c;
      } else if (c.schedule == 1) {
        // The shared-memory ring: 3 (or 2) chunks of whole 128- or 256-byte rows, room for 2
        // blocks per SM.
        ++rings_per_bm[c.bm];
        EXPECT_TRUE(c.stages == 3 || c.stages == 2) << c;
        EXPECT_TRUE(c.bk == 128 || c.bk == 256) << c;
        EXPECT_LE(family_info(Family::decode_mma).dynamic_smem(c), 96 * 1024) << c;
      } else {
        EXPECT_EQ(c.schedule, 0) << c;
        EXPECT_EQ(c.stages, 2) << c;
      }
      EXPECT_TRUE(c.warps_k == 4 || c.warps_k == 8) << c;
      EXPECT_LE(family_info(Family::decode_mma).registers(c), 232) << c;
      EXPECT_EQ(c.threads(), 32 * c.warps_k);
    }
    for (int bm : {8, 16, 32, 64}) EXPECT_GT(per_bm[bm], 0) << p.key() << " bm=" << bm;
    for (int bm : {8, 16, 32}) EXPECT_GT(rings_per_bm[bm], 0) << p.key() << " bm=" << bm << ": a shared-memory ring";
  }
  // Small N: no bn past the padded N.
  for (const KernelConfig& c : decode_of({16, 4096}, t)) EXPECT_EQ(c.bn, 16) << c;
}

TEST(DecodeMmaRules, DeepRingTwinsOnlyWhereOneWaveOfBlocksStreamsFewChunksPerWarp) {
  const Target t = Target::from_arch("sm_90a");
  auto deep = [&](const GemmProblem& p) {
    std::vector<KernelConfig> d;
    for (const KernelConfig& c : decode_of(p, t))
      if (c.schedule == 1 && c.stages == 4) d.push_back(c);
    return d;
  };
  // 768 x 4096: 48 column tiles of 16 rows; each of 8 warps streams 4 chunks of 128 bytes, the
  // regular ring holds 2 of them in flight. The deep twin of that tile (M = 9...16's winner in
  // session 29's race) is offered.
  bool found = false;
  for (const KernelConfig& c : deep({768, 4096})) {
    EXPECT_LE((768 + c.bn - 1) / c.bn, t.sm_count) << c << ": more column tiles than SMs";
    EXPECT_GT(family_info(Family::decode_mma).dynamic_smem(c), 96 * 1024) << c << ": the regular ring fits it";
    found = found || (c.bm == 16 && c.bn == 16 && c.warps_k == 8);
  }
  EXPECT_TRUE(found);
  // 28672 x 4096: never one wave of 16-, 32- or 64-row tiles on 132 SMs.
  EXPECT_TRUE(deep({28672, 4096}).empty());
  // 4096 x 384: 3 chunks of 128 bytes a slice, no warp holds more than the regular ring does.
  EXPECT_TRUE(deep({4096, 384}).empty());
  // The untuned default up to M = 16 where the 16-row tile of 8 warps has a deep twin (768 x
  // 4096: only that one, in its bucket), none from M = 17 (not measured there), and never on
  // 2560 x 4096 (160 column tiles of 16 rows: no deep twin of that tile).
  for (int64_t m : {1, 8, 16, 32}) {
    int serving = 0;
    for (const KernelConfig& c : deep({768, 4096}))
      if (family_info(Family::decode_mma).serves_untuned({768, 4096}, c, t, m)) {
        ++serving;
        EXPECT_TRUE(c.bn == 16 && c.warps_k == 8 && c.bm == (m <= 8 ? 8 : 16)) << c << " M=" << m;
      }
    EXPECT_EQ(serving, m <= 16 ? 1 : 0) << "M=" << m;
    for (const KernelConfig& c : deep({2560, 4096}))
      EXPECT_FALSE(family_info(Family::decode_mma).serves_untuned({2560, 4096}, c, t, m)) << c << " M=" << m;
  }
}

TEST(DecodeMmaRules, SplitsOnlyWhereTheColumnTilesLeaveBlockSlotsEmpty) {
  const Target t = Target::from_arch("sm_90a");
  // 2560 x 4096: 160 tiles of 16 rows at most, fewer than the resident slots: splits offered.
  int split = 0;
  for (const KernelConfig& c : decode_of({2560, 4096}, t))
    if (c.split_k > 1) {
      ++split;
      EXPECT_GE(dec::per_slice(4096, c.bk, c.split_k), c.warps_k) << c << ": a warp without a chunk";
    }
  EXPECT_GT(split, 0);
  // The GPU tests take split configs of these token tiles.
  for (const auto& [p, bm] : {std::pair{GemmProblem{2560, 4096}, 8}, std::pair{GemmProblem{2560, 4096}, 64},
                              std::pair{GemmProblem{1000, 4080}, 64}}) {
    int found = 0;
    for (const KernelConfig& c : decode_of(p, t)) found += c.bm == bm && c.split_k > 1;
    EXPECT_GT(found, 0) << p.key() << " bm=" << bm;
  }
  // 8192 x 8192 with 16-row tiles: 512 blocks already fill the slots: that shape never splits.
  for (const KernelConfig& c : decode_of({8192, 8192}, t))
    if (c.bn == 16 && c.bm == 8) {
      EXPECT_EQ(c.split_k, 1) << c;
    }
}

TEST(DecodeMmaRules, ATuneRacesEachConfigOnlyInItsTokenTilesBucket) {
  Target t = Target::from_arch("sm_90a");
  const GemmProblem p{2560, 4096};
  const std::map<int64_t, int> tile = {{1, 8}, {2, 8}, {4, 8}, {8, 8}, {16, 16}, {32, 32}, {64, 64}};
  for (const KernelConfig& c : decode_of(p, t)) {
    const KernelSpec s{p, c, t.arch};
    for (const auto& [m, bm] : tile) EXPECT_EQ(raced_at(s, m), c.bm == bm) << s.name() << " M=" << m;
    EXPECT_FALSE(raced_at(s, 128)) << s.name();
    EXPECT_FALSE(raced_at(s, 4096)) << s.name();
  }
  // Every other family races in every bucket, but for wgmma_tma's split configs (where they
  // fill the SMs: wgmma_tma_splitk_test.cpp) and its raster twin (where M < N: wgmma_tma_order_test.cpp).
  for (const KernelConfig& c : candidates(p, t))
    if (c.family != Family::decode_mma && !(c.family == Family::wgmma_tma && (c.split_k > 1 || c.raster_group))) {
      EXPECT_TRUE(raced_at({p, c, t.arch}, 4096)) << c;
    }
  // I8GEMM_FAMILY=decode_mma gets the bucket's token tile.
  for (const auto& [m, bm] : tile) EXPECT_EQ(heuristic_default(p, t, m, Family::decode_mma).bm, bm) << m;
}

TEST(DecodeMmaRules, LaunchShapeWorkspaceAndAlignment) {
  const GemmProblem p{2560, 4096};
  const KernelSpec s{p, config(16, 32, 256, 4, 2, 3), "sm_90a"};
  const LaunchShape l = launch_shape(s, 17);
  EXPECT_EQ(l.grid[0], 80u);
  EXPECT_EQ(l.grid[1], 2u);
  EXPECT_EQ(l.grid[2], 3u);
  EXPECT_EQ(l.block[0], 128u);
  EXPECT_EQ(l.dynamic_smem, unsigned(4 * 16 * (32 + 4) * 4));
  EXPECT_EQ(workspace_bytes(s, 17), size_t(80 * 2 * splitk::tile_words(3, 16, 32) * 4));
  EXPECT_EQ(workspace_bytes({p, config(16, 32, 256, 4, 2, 1), "sm_90a"}, 17), 0u);
  EXPECT_EQ(required_alignment(s.config), 16);
}

TEST(DecodeMmaEmit, SourceAndNameRoundTrip) {
  GemmProblem p{2560, 4096};
  p.bias = true;
  const KernelSpec spec{p, config(8, 32, 128, 8, 2, 4), "sm_90a"};
  ASSERT_EQ(invalid_reason(p, spec.config, Target::from_arch("sm_90a")), "");
  const Source s = emit(spec);
  EXPECT_EQ(s.name, "i8g_sm90a_decode_mma_n2560_k4096_nk_tok_ch_bf16_bias_bm8_bn32_bk128_wk8_s2_sk4");
  EXPECT_EQ(s.entry, "i8g::decode_mma_kernel<8, 32, 128, 8, 2, 0, 4, 0, 2560LL, 4096LL, 1, 1, 0, 1, 0>");
  EXPECT_TRUE(has(s.code, "#include \"decode_mma.cuh\""));
  EXPECT_TRUE(has(s.code, "8 /*WK*/, 2 /*STAGES*/, 0 /*RING*/, 4 /*SPLIT_K*/"));
  EXPECT_EQ(KernelSpec::parse_name(s.name), spec);
  // The shared-memory ring is named (_sc1) and passed as RING = 1.
  KernelSpec ring = spec;
  ring.config.schedule = 1;
  ring.config.stages = 3;
  ASSERT_EQ(invalid_reason(p, ring.config, Target::from_arch("sm_90a")), "");
  const Source r = emit(ring);
  EXPECT_EQ(r.name, "i8g_sm90a_decode_mma_n2560_k4096_nk_tok_ch_bf16_bias_bm8_bn32_bk128_wk8_s3_sk4_sc1");
  EXPECT_TRUE(has(r.code, "8 /*WK*/, 3 /*STAGES*/, 1 /*RING*/, 4 /*SPLIT_K*/"));
  EXPECT_EQ(KernelSpec::parse_name(r.name), ring);
}

// The untuned default on sm_90: decode_mma up to M = 16 with the tiles the H200 tunes picked
// (bm 8 to M = 8, bm 16 to 16; 4 warps, 16 weight rows, no split; bm 16 in the shared-memory
// ring, bm 8 there only where its column tiles fit one wave of the ring's blocks) where N >= 768
// and K >= 384 (session 30, from session 29's H200 races on 768 x 4096, 4096 x 2048 and
// 4096 x 384), wgmma_tma from 17; elsewhere (not measured there) never decode_mma. From 17 to
// 32 rows on sm_90a it is the bm-32 tile in the shared-memory ring where N is 768..4096
// (K >= 384), wgmma_tma above 32 rows and where N is larger.
TEST(DecodeMmaRules, TheUntunedDefaultTakesItUpToSixteenRowsOnSm90Only) {
  const Target h = Target::from_arch("sm_90a");
  for (const GemmProblem& p : kTargets) {
    for (int64_t m : {1, 2, 4, 8, 9, 16}) {
      const KernelConfig c = heuristic_default(p, h, m);
      EXPECT_EQ(c.family, Family::decode_mma) << p.key() << " M=" << m;
      EXPECT_EQ(c.bm, m <= 8 ? 8 : 16) << p.key() << " M=" << m;
      EXPECT_EQ(c.warps_k, 4) << p.key() << " M=" << m;
      // 8192 rows are 512 tiles of 16, more than 132 SMs x 3 resident ring blocks.
      const bool ring = m > 8 || p.n <= 6144;
      EXPECT_EQ(c.schedule, ring ? 1 : 0) << p.key() << " M=" << m;
      EXPECT_EQ(c.stages, ring ? 3 : 2) << p.key() << " M=" << m;
      EXPECT_EQ(c.bn, 16);
      EXPECT_EQ(c.split_k, 1);
      EXPECT_TRUE(raced_at({p, c, h.arch}, m)) << "the default is one of the bucket's raced configs";
    }
    const Family mid = p.n <= 4096 ? Family::decode_mma : Family::wgmma_tma;
    for (int64_t m : {17, 24, 32}) {
      const KernelConfig c = heuristic_default(p, h, m);
      EXPECT_EQ(c.family, mid) << p.key() << " M=" << m;
      if (c.family != Family::decode_mma) continue;
      EXPECT_EQ(KernelSpec({p, c, h.arch}).name().substr(KernelSpec({p, c, h.arch}).name().find("_bm")),
                "_bm32_bn16_bk128_wk4_s3_sk1_sc1")
          << p.key() << " M=" << m << ": the config the H200 timed (session 25)";
      EXPECT_TRUE(raced_at({p, c, h.arch}, m));
    }
    EXPECT_EQ(heuristic_default(p, h, 33).family, Family::wgmma_tma) << p.key();
    EXPECT_EQ(heuristic_default(p, h, 64).family, Family::wgmma_tma) << p.key();
  }
  // 768 x 4096 from 17 to 32 rows (measured there), not 384 x 4096 (not measured); sm_90 without
  // the arch-specific target keeps mma_sync above 16 rows (wgmma_tma is sm_90a only).
  EXPECT_EQ(heuristic_default(GemmProblem{768, 4096}, h, 32).family, Family::decode_mma);
  EXPECT_EQ(heuristic_default(GemmProblem{384, 4096}, h, 32).family, Family::wgmma_tma);
  EXPECT_EQ(heuristic_default(GemmProblem{2560, 2048}, h, 32).family, Family::decode_mma);
  EXPECT_EQ(heuristic_default(GemmProblem{4096, 384}, h, 32).family, Family::decode_mma);
  EXPECT_EQ(heuristic_default(GemmProblem{4096, 256}, h, 32).family, Family::wgmma_tma) << "K below 384";
  EXPECT_NE(heuristic_default(kTargets[0], Target::from_arch("sm_90"), 32).family, Family::decode_mma);
  for (const char* arch : {"sm_80", "sm_89", "sm_100", "sm_120"})
    for (int64_t m : {1, 16}) {
      EXPECT_NE(heuristic_default(kTargets[0], Target::from_arch(arch), m).family, Family::decode_mma) << arch;
    }
  // Down to N = 768 and K = 384 (where session 29's races timed it within 0-6% of the winner);
  // outside that (N below 768, K below 384: never measured) mma_sync's split-K default.
  for (const GemmProblem& p : {GemmProblem{768, 4096}, GemmProblem{4096, 2048}, GemmProblem{4096, 384}})
    for (int64_t m : {1, 16}) {
      const KernelConfig c = heuristic_default(p, h, m);
      EXPECT_EQ(c.family, Family::decode_mma) << p.key() << " M=" << m;
      EXPECT_EQ(c.schedule, 1) << p.key() << " M=" << m << ": the shared-memory ring (the races' fastest of the two)";
      EXPECT_TRUE(raced_at({p, c, h.arch}, m));
    }
  for (const GemmProblem& p : {GemmProblem{512, 4096}, GemmProblem{4096, 256}})
    EXPECT_EQ(heuristic_default(p, h, 1).family, Family::mma_sync) << p.key();
  // [K,N] weights, which decode_mma does not stream, keep their family.
  GemmProblem kn{2560, 4096};
  kn.layout = WeightLayout::kn;
  EXPECT_NE(heuristic_default(kn, h, 1).family, Family::decode_mma);
}

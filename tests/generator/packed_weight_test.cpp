// The packed weight (generator/packed_weight.hpp) and wgmma_tma's packed-weight twins: the pack
// holds every weight byte once, zeros elsewhere, in exactly the place where the kernel's wgmma
// descriptors read it once a tile's rows of a stage are bulk-copied to a 1024-byte aligned ring
// slot, for every tile width (templates/wgmma_frag.h, canonical_addr: an independent statement
// of the 128B swizzle); the twins are offered only with the experimental flag, keep their plain
// twins' tiles, refuse what they never run with, and are never the untuned default.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>

#include "core/error.hpp"
#include "generator/generator.hpp"
#include "generator/packed_weight.hpp"
#include "templates/wgmma_frag.h"

using namespace i8g;

namespace {

std::vector<int8_t> random_weight(int64_t n, int64_t k, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<int8_t> w(size_t(n * k));
  for (int8_t& v : w) v = int8_t(int(rng() % 255) - 127);
  return w;
}

// Shapes with N and K tails: N not a multiple of 8 (1001, 130), K not a whole number of 128-byte
// tiles, and with kp = 2 an odd number of K tiles (the last stage half zeros).
struct Case {
  int64_t n, k;
  int kp;
};
constexpr Case kCases[] = {{256, 512, 1}, {256, 512, 2}, {1000, 4080, 2}, {1001, 400, 2},
                           {130, 384, 2}, {96, 144, 1},  {2560, 1024, 2}};
constexpr int kWidths[] = {48, 64, 80, 96, 128, 256};  // every wgmma_tma tile width reads the same pack

const Target kPacked = [] {
  Target t = Target::from_arch("sm_90a");
  t.experimental_packed_weight = true;
  return t;
}();

std::vector<KernelConfig> packed_of(const GemmProblem& p, const Target& t = kPacked) {
  std::vector<KernelConfig> out;
  for (const KernelConfig& c : candidates(p, t))
    if (c.family == Family::wgmma_tma && c.packed_weight) out.push_back(c);
  return out;
}

}  // namespace

TEST(PackedWeight, UnpacksToTheWeightWithZerosEverywhereElse) {
  for (const Case& c : kCases) {
    const PackedWeightLayout l{c.n, c.k, c.kp};
    ASSERT_EQ(l.invalid_reason(), "") << l.name();
    const std::vector<int8_t> w = random_weight(c.n, c.k, unsigned(c.n * 7 + c.k));
    const std::vector<int8_t> packed = pack_weight(l, w.data());
    ASSERT_EQ(int64_t(packed.size()), l.bytes());
    EXPECT_EQ(l.bytes(), (c.n + 7) / 8 * 8 * (((c.k + 127) / 128 + c.kp - 1) / c.kp) * c.kp * 128);
    EXPECT_EQ(unpack_weight(l, packed.data()), w) << l.name() << " n=" << c.n << " k=" << c.k;
    // Every (row, col) has its own byte of the pack; the rest are zeros.
    std::vector<char> used(packed.size(), 0);
    for (int64_t row = 0; row < c.n; ++row)
      for (int64_t col = 0; col < c.k; ++col) {
        const int64_t o = l.offset(row, col);
        ASSERT_GE(o, 0);
        ASSERT_LT(o, l.bytes());
        ASSERT_FALSE(used[size_t(o)]) << "two weight bytes at " << o;
        used[size_t(o)] = 1;
      }
    for (size_t i = 0; i < packed.size(); ++i)
      ASSERT_TRUE(used[i] || packed[i] == 0) << l.name() << ": padding byte " << i << " is " << int(packed[i]);
  }
}

// A tile's rows of a stage as the kernel's ring slot holds them after one bulk copy: rows
// [r0, r0 + R) of stage s are the R * kp * 128 bytes at s * stage_bytes + r0 * kp * 128 (R = bn, or
// what is left of the pack's N rounded up to 8), and K tile j's descriptor (start j * 1024, kp *
// 1024 bytes between 8-row groups) reads row r, byte kk at canonical_addr.
TEST(PackedWeight, EachTilesRowsOfAStageAreTheSwizzledTileTheDescriptorsRead) {
  for (const Case& c : kCases) {
    const PackedWeightLayout l{c.n, c.k, c.kp};
    const std::vector<int8_t> w = random_weight(c.n, c.k, 11);
    const std::vector<int8_t> packed = pack_weight(l, w.data());
    for (int bn : kWidths)
      for (int64_t r0 = 0; r0 < c.n; r0 += bn) {
        const int64_t rows = std::min<int64_t>(bn, (c.n + 7) / 8 * 8 - r0);
        // The kernel's copy (wgmma_frag.h, what the producer issues) is exactly these bytes.
        ASSERT_EQ(wg::packed_tile_bytes(bn, r0, c.n, c.kp), rows * c.kp * 128);
        for (int64_t s = 0; s < l.stages(); ++s) {
          const int64_t at = s * ((c.n + 7) / 8 * 8) * c.kp * 128 + r0 * c.kp * 128;
          ASSERT_EQ(wg::packed_tile_offset(s, r0, c.n, c.kp), at);
          ASSERT_EQ(l.offset(r0, s * c.kp * 128), at) << "the tile's first row starts the copy";
          ASSERT_LE(at + rows * c.kp * 128, l.bytes()) << "the copy stays inside the pack";
          const int8_t* slot = packed.data() + at;
          for (int j = 0; j < c.kp; ++j)
            for (int r = 0; r < rows; ++r)
              for (int kk = 0; kk < 128; ++kk) {
                const int64_t row = r0 + r, col = (s * c.kp + j) * 128 + kk;
                const int8_t want = row < c.n && col < c.k ? w[size_t(row * c.k + col)] : int8_t(0);
                const unsigned byte = wg::canonical_addr(unsigned(j * wg::kAtomBytes), unsigned(c.kp * wg::kAtomBytes), r, kk);
                ASSERT_EQ(slot[byte], want) << l.name() << " bn " << bn << " rows from " << r0 << " stage " << s
                                            << " K tile " << j << " row " << r << " byte " << kk;
              }
        }
      }
  }
}

TEST(PackedWeight, MalformedLayoutsAndPlainSpecsAreRefused) {
  const int8_t w[256] = {};
  EXPECT_THROW(pack_weight({16, 20, 1}, w), Error);  // K not a multiple of 16
  EXPECT_THROW(pack_weight({16, 16, 3}, w), Error);  // kp 3
  EXPECT_THROW(pack_weight({0, 16, 1}, w), Error);   // no rows
  const GemmProblem p{2560, 4096};
  const KernelSpec plain{p, heuristic_default(p, kPacked, 64), "sm_90a"};
  EXPECT_THROW(packed_weight_layout(plain), Error);
}

// Twins of the unclustered tiles up to 128 rows and 128 columns, one K tile a stage, and of the
// bk-256 twins (ping-pong 64-row tiles), with as deep a ring as fits; only under the flag; named
// _pw1 (and parsed back); the layout they read.
TEST(PackedWeight, TwinsOfTheSmallAndMidTilesOnlyUnderTheFlag) {
  const GemmProblem p{2560, 4096};
  EXPECT_TRUE(packed_of(p, Target::from_arch("sm_90a")).empty());
  std::set<std::string> got;
  for (const KernelConfig& c : packed_of(p)) {
    const KernelSpec s{p, c, "sm_90a"};
    EXPECT_EQ(invalid_reason(p, c, kPacked), "") << s.name();
    EXPECT_EQ(s.name().substr(s.name().size() - 4), "_pw1") << s.name();
    EXPECT_EQ(KernelSpec::parse_name(s.name()), s);
    EXPECT_LE(c.bm, 128) << s.name();
    EXPECT_LE(c.bn, 128) << s.name();
    if (c.bk == 256) {
      EXPECT_TRUE(c.schedule == 2 && c.bm == 64) << s.name();
    }
    EXPECT_EQ(c.stages, std::min(16, (kPacked.smem_per_block_optin - 1024 - 16) / ((c.bm + c.bn) * c.bk + 16)))
        << s.name();
    const PackedWeightLayout l = packed_weight_layout(s);
    EXPECT_EQ(l.name(), c.bk == 128 ? "kp1" : "kp2");
    EXPECT_EQ(tma_box_rows(c, 64).w, c.bn);
    got.insert("sc" + std::to_string(c.schedule) + "_" + std::to_string(c.bm) + "x" + std::to_string(c.bn) + "_bk" +
               std::to_string(c.bk));
  }
  // 2560 columns: 48 (1.2% of N wasted) and 80 (exact) are offered, 96 does not divide N; the
  // narrow ones only with 64 rows a consumer.
  EXPECT_EQ(got, (std::set<std::string>{"sc2_64x48_bk128", "sc2_64x48_bk256", "sc2_64x64_bk128", "sc2_64x64_bk256",
                                        "sc2_64x80_bk128", "sc2_64x80_bk256", "sc2_64x128_bk128", "sc2_64x128_bk256",
                                        "sc2_128x64_bk128", "sc2_128x128_bk128", "sc1_128x48_bk128", "sc1_128x64_bk128",
                                        "sc1_128x80_bk128", "sc1_128x128_bk128"}));
  // Plain candidates are the same with and without the flag.
  std::vector<KernelConfig> plain;
  for (const KernelConfig& c : candidates(p, kPacked))
    if (!c.packed_weight) plain.push_back(c);
  EXPECT_EQ(plain, candidates(p, Target::from_arch("sm_90a")));
}

TEST(PackedWeight, RefusedWithClustersSplitsAndTheStagedStoreNeverUntuned) {
  const GemmProblem p{8192, 8192};
  std::vector<KernelConfig> twins;
  for (const KernelConfig& c : packed_of(p))
    if (c.bk == 128) twins.push_back(c);  // (bk 256 with a cluster or split is refused for that first)
  ASSERT_FALSE(twins.empty());
  for (auto set : {+[](KernelConfig& c) { c.cluster_m = 2; }, +[](KernelConfig& c) { c.cluster_k = 2; },
                   +[](KernelConfig& c) { c.split_k = 2; }, +[](KernelConfig& c) { c.epilogue_store = 1; },
                   +[](KernelConfig& c) { c.packed_weight = 2; }}) {
    KernelConfig c = twins.front();
    set(c);
    EXPECT_NE(invalid_reason(p, c, kPacked).find("packed_weight"), std::string::npos) << KernelSpec{p, c, "sm_90a"}.name();
  }
  for (int64_t m : {1, 16, 17, 32, 64, 128, 1024})
    EXPECT_EQ(heuristic_default(p, kPacked, m).packed_weight, 0) << m;
}

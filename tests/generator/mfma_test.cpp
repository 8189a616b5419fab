// The mfma family on the host: AMD targets, candidates from rules, name round trips, emitted
// source, and the MFMA lane layouts (templates/mfma_layout.h, the very header the device code
// includes) covering each tile exactly once, since no AMD GPU can check them by running.
#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <vector>

#include "core/error.hpp"
#include "generator/generator.hpp"
#include "templates/mfma_layout.h"

namespace i8g {
namespace {

std::vector<GemmProblem> amd_problems() {
  std::vector<GemmProblem> out;
  for (auto [n, k] : {std::pair{2560, 4096}, std::pair{4096, 2048}, std::pair{768, 4096}, std::pair{4096, 384},
                      std::pair{1000, 1001}, std::pair{8, 64}}) {
    for (WeightLayout l : {WeightLayout::nk, WeightLayout::kn}) {
      GemmProblem p;
      p.n = n;
      p.k = k;
      p.layout = l;
      p.out = n == 1000 ? OutType::f16 : OutType::bf16;
      p.asymmetric = n == 1000;
      out.push_back(p);
    }
  }
  return out;
}

TEST(AmdTarget, KnowsGfx90aAndGfx908Facts) {
  const Target a = Target::from_arch("gfx90a");
  EXPECT_TRUE(a.amd);
  EXPECT_EQ(a.warp_size, 64);
  EXPECT_EQ(a.sm_count, 110);
  EXPECT_EQ(a.smem_per_block_optin, 64 * 1024);
  EXPECT_TRUE(a.unified_vgprs);
  EXPECT_EQ(a.max_waves_per_simd, 8);
  const Target b = Target::from_arch("gfx908");
  EXPECT_EQ(b.sm_count, 120);
  EXPECT_FALSE(b.unified_vgprs);
  EXPECT_EQ(b.max_waves_per_simd, 10);
  for (const char* bad : {"gfx942", "gfx1100", "gfx90", "gfx90az"}) EXPECT_THROW(Target::from_arch(bad), Error) << bad;
}

TEST(MfmaCandidates, EveryCandidateValidatesAndNamesRoundTrip) {
  for (const std::string& arch : Target::supported_amd_archs()) {
    const Target t = Target::from_arch(arch);
    for (const GemmProblem& p : amd_problems()) {
      const auto cs = candidates(p, t);
      ASSERT_FALSE(cs.empty()) << p.key() << " on " << arch;
      std::set<std::string> names;
      for (const KernelConfig& c : cs) {
        EXPECT_EQ(c.family, Family::mfma);
        EXPECT_EQ(invalid_reason(p, c, t), "") << c;
        EXPECT_LE(c.static_smem_bytes(), t.smem_per_block_optin);
        EXPECT_EQ(c.threads() % 64, 0);
        const KernelSpec spec{p, c, arch};
        EXPECT_TRUE(names.insert(spec.name()).second) << spec.name();
        const KernelSpec back = KernelSpec::parse_name(spec.name());
        EXPECT_EQ(back, spec);
        EXPECT_EQ(back.arch, arch);
        EXPECT_EQ(back.config, c);
      }
      for (int64_t m : m_buckets(4096)) EXPECT_EQ(invalid_reason(p, heuristic_default(p, t, m), t), "");
    }
  }
  EXPECT_EQ(KernelSpec::parse_name("i8g_gfx90a_mfma_n2560_k4096_nk_tok_ch_bf16_bm128_bn128_bk64_ins32_wm2_wn2_s2_v16").name(),
            "i8g_gfx90a_mfma_n2560_k4096_nk_tok_ch_bf16_bm128_bn128_bk64_ins32_wm2_wn2_s2_v16");
}

TEST(MfmaCandidates, FamiliesStayOnTheirVendor) {
  GemmProblem p;
  p.n = 2560;
  p.k = 4096;
  const KernelConfig amd = candidates(p, Target::from_arch("gfx90a")).front();
  EXPECT_NE(invalid_reason(p, amd, Target::from_arch("sm_90a")), "");
  const KernelConfig nv = candidates(p, Target::from_arch("sm_90a")).front();
  EXPECT_NE(invalid_reason(p, nv, Target::from_arch("gfx90a")), "");
  KernelConfig bad = amd;
  bad.instr = 8;
  EXPECT_NE(invalid_reason(p, bad, Target::from_arch("gfx90a")), "");
  bad = amd;
  bad.split_k = 2;
  EXPECT_NE(invalid_reason(p, bad, Target::from_arch("gfx90a")), "");
}

TEST(MfmaEmit, SourceIsOneIncludeAndOneInstantiation) {
  GemmProblem p;
  p.n = 768;
  p.k = 4096;
  p.bias = true;
  const Target t = Target::from_arch("gfx90a");
  const KernelSpec spec{p, heuristic_default(p, t, 16), t.arch};
  const Source s = emit(spec);
  EXPECT_EQ(s.name, spec.name());
  EXPECT_NE(s.code.find("#include \"mfma.hip.h\""), std::string::npos);
  // The code names each argument in a comment; without them it instantiates the entry.
  const std::string code = std::regex_replace(s.code, std::regex(R"( /\*[A-Z_]+\*/)"), "");
  EXPECT_NE(code.find("template __global__ void " + s.entry + "(const I8gArgs);"), std::string::npos) << s.code;
  EXPECT_EQ(s.entry.rfind("i8g::mfma_kernel<", 0), 0u);
  EXPECT_NE(s.entry.find("768LL, 4096LL, 0, 1, 1, 0, 1, 0>"), std::string::npos) << s.entry;
  EXPECT_EQ(launch_shape(spec, 100).block[0], unsigned(64 * spec.config.warps_m * spec.config.warps_n));
}

// Each accumulator element of each lane of each wave lands on its own (m, n) of the block
// tile, and every (m, n) is covered: no output is lost or written twice.
TEST(MfmaLayout, AccumulatorsCoverTheBlockTileExactlyOnce) {
  struct Tile { int bm, bn, instr, wm, wn; };
  for (const Tile& c : {Tile{128, 128, 32, 2, 2}, Tile{64, 128, 32, 1, 2}, Tile{32, 64, 16, 1, 2},
                        Tile{128, 64, 16, 2, 1}, Tile{32, 32, 32, 1, 1}, Tile{16, 16, 16, 1, 1}}) {
    SCOPED_TRACE(testing::Message() << c.bm << "x" << c.bn << " instr " << c.instr << " waves " << c.wm << "x" << c.wn);
    std::vector<int> hits(c.bm * c.bn, 0);
    const int fm = c.bm / c.wm / c.instr, fn = c.bn / c.wn / c.instr;
    for (int wave = 0; wave < c.wm * c.wn; ++wave)
      for (int lane = 0; lane < 64; ++lane)
        for (int i = 0; i < fm; ++i)
          for (int j = 0; j < fn; ++j)
            for (int r = 0; r < mfma::acc_per_lane(c.instr); ++r) {
              const int m = mfma::tile_row(c.bm, c.wm, c.wn, c.instr, wave, i, lane, r);
              const int n = mfma::tile_col(c.bn, c.wn, c.instr, wave, j, lane);
              ASSERT_TRUE(m >= 0 && m < c.bm && n >= 0 && n < c.bn) << m << "," << n;
              ++hits[m * c.bn + n];
            }
    for (int v : hits) ASSERT_EQ(v, 1);
  }
}

// Within one instruction, the A (and B) operands of the 64 lanes hold each (row, k) of the
// INSTR x K slice exactly once, 4 consecutive k per lane.
TEST(MfmaLayout, OperandsCoverOneInstructionExactlyOnce) {
  for (int instr : {32, 16}) {
    const int k = mfma::k_per_instr(instr);
    EXPECT_EQ(64 * 4, instr * k);  // 4 int8 per lane fill the operand
    std::vector<int> hits(instr * k, 0);
    for (int lane = 0; lane < 64; ++lane)
      for (int b = 0; b < 4; ++b) {
        const int row = mfma::operand_row(instr, lane), kk = mfma::operand_k(instr, lane) + b;
        ASSERT_LT(kk, k);
        ++hits[row * k + kk];
      }
    for (int v : hits) EXPECT_EQ(v, 1);
    EXPECT_EQ(mfma::acc_per_lane(instr) * 64, instr * instr);
  }
}

}  // namespace
}  // namespace i8g

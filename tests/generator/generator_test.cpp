#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "core/error.hpp"
#include "generator/generator.hpp"

using namespace i8g;

namespace {

std::vector<GemmProblem> problem_grid() {
  std::vector<GemmProblem> ps;
  const std::pair<int64_t, int64_t> shapes[] = {{2560, 4096}, {4096, 2048}, {768, 4096},
                                                {4096, 384},  {1000, 4095}, {100, 68},
                                                {1, 4},       {17, 3}};
  for (auto [n, k] : shapes)
    for (WeightLayout l : {WeightLayout::nk, WeightLayout::kn})
      for (ActScale a : {ActScale::per_tensor, ActScale::per_token})
        for (WeightScale w : {WeightScale::per_tensor, WeightScale::per_channel})
          for (OutType o : {OutType::bf16, OutType::f16, OutType::f32, OutType::i32})
            for (int flags = 0; flags < 4; ++flags) {
              GemmProblem p{n, k, l, a, w, o, bool(flags & 1), bool(flags & 2)};
              if (p.invalid_reason().empty()) ps.push_back(p);
            }
  return ps;
}

}  // namespace

TEST(Problem, KeyRoundTripsForEveryOption) {
  for (const GemmProblem& p : problem_grid()) {
    EXPECT_EQ(GemmProblem::parse_key(p.key()), p) << p.key();
    EXPECT_EQ(GemmProblem::parse_key(p.key()).key(), p.key());
  }
}

TEST(Problem, RejectsNonPositiveShapes) {
  EXPECT_NE((GemmProblem{0, 64}.invalid_reason()), "");
  EXPECT_NE((GemmProblem{64, -1}.invalid_reason()), "");
  EXPECT_THROW(GemmProblem({-5, 64}).validate(), Error);
}

TEST(Problem, RejectsKThatCanOverflowInt32) {
  GemmProblem p{4096, kMaxKSymmetric};
  EXPECT_EQ(p.invalid_reason(), "");
  EXPECT_LT(127LL * 127 * kMaxKSymmetric, (1LL << 31) - 1);
  p.k = kMaxKSymmetric + 1;
  EXPECT_GE(127LL * 127 * p.k, (1LL << 31) - 1);
  EXPECT_NE(p.invalid_reason().find("overflow"), std::string::npos);
  GemmProblem a{4096, kMaxKAsymmetric};
  a.asymmetric = true;
  EXPECT_EQ(a.invalid_reason(), "");
  EXPECT_LT(255LL * 127 * kMaxKAsymmetric, (1LL << 31));
  a.k += 1;
  EXPECT_NE(a.invalid_reason(), "");
}

TEST(Problem, RejectsBiasWithRawInt32Output) {
  GemmProblem p{64, 64};
  p.out = OutType::i32;
  p.bias = true;
  EXPECT_NE(p.invalid_reason().find("bias"), std::string::npos);
}

TEST(Problem, ParseKeyRejectsGarbage) {
  for (const char* s : {"", "n1_k1", "n1_k1_nk_tok_ch_bf17", "n1_k1_nk_tok_ch_bf16_extra",
                        "n99999999999999_k1_nk_tok_ch_bf16"})
    EXPECT_THROW(GemmProblem::parse_key(s), Error) << s;
}

TEST(Target, KnowsEverySupportedArch) {
  for (const std::string& a : Target::supported_archs()) {
    Target t = Target::from_arch(a);
    EXPECT_EQ(t.arch, a);
    EXPECT_GT(t.sm_count, 0);
    EXPECT_GT(t.smem_per_block_optin, 48 * 1024 - 1);
    EXPECT_EQ(t.regs_per_sm, 65536);
  }
  EXPECT_TRUE(Target::from_arch("sm_90a").arch_specific);
  EXPECT_FALSE(Target::from_arch("sm_90").arch_specific);
  EXPECT_EQ(Target::from_arch("sm90a").arch, "sm_90a");
  EXPECT_EQ(Target::from_arch("sm_90").sm_count, 132);
  // Blackwell (CCCL's arch_traits): sm_100 as Hopper's shared memory and threads, sm_120 with
  // 100 KiB per SM (99 KiB per block), 1536 threads and 24 blocks.
  const Target b = Target::from_arch("sm_100"), g = Target::from_arch("sm_120");
  EXPECT_EQ(b.smem_per_block_optin, 227 * 1024);
  EXPECT_EQ(b.max_threads_per_sm, 2048);
  EXPECT_EQ(g.smem_per_sm, 100 * 1024);
  EXPECT_EQ(g.smem_per_block_optin, 99 * 1024);
  EXPECT_EQ(g.max_threads_per_sm, 1536);
  EXPECT_EQ(g.max_blocks_per_sm, 24);
  EXPECT_FALSE(b.arch_specific);
}

TEST(Target, RejectsUnknownAndUnsupportedArchs) {
  for (const char* a : {"sm_61", "sm_103", "sm_100a", "sm_9", "cuda", "", "sm_90b", "gfx942"}) {
    try {
      Target::from_arch(a);
      ADD_FAILURE() << a << " was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("supported"), std::string::npos) << e.what();
    }
  }
}

TEST(Candidates, EveryCandidateValidatesAndNamesRoundTrip) {
  size_t total = 0;
  for (const std::string& arch : Target::supported_archs()) {
    const Target t = Target::from_arch(arch);
    for (const GemmProblem& p : problem_grid()) {
      const std::vector<KernelConfig> cs = candidates(p, t);
      ASSERT_FALSE(cs.empty()) << p.key() << " on " << arch;  // the reference family always exists
      std::set<std::string> names;
      for (const KernelConfig& c : cs) {
        EXPECT_EQ(invalid_reason(p, c, t), "") << c;
        const KernelSpec spec{p, c, arch};
        const std::string name = spec.name();
        EXPECT_TRUE(names.insert(name).second) << "duplicate " << name;
        const KernelSpec back = KernelSpec::parse_name(name);
        EXPECT_EQ(back, spec);
        EXPECT_EQ(back.name(), name);
        EXPECT_EQ(back.arch, arch);
        EXPECT_EQ(back.problem, p);
        EXPECT_EQ(back.config, c);
        ++total;
      }
    }
  }
  EXPECT_GT(total, 1000u);
}

TEST(Candidates, VectorWidthFollowsAlignmentOfK) {
  const Target t = Target::from_arch("sm_80");
  EXPECT_EQ(candidates({2560, 4096}, t).front().vec, 16);
  EXPECT_EQ(candidates({2560, 4100}, t).front().vec, 4);
  EXPECT_EQ(candidates({2560, 4095}, t).front().vec, 1);
  GemmProblem kn{100, 4096, WeightLayout::kn};
  EXPECT_EQ(candidates(kn, t).front().vec, 4);  // N=100 rows of w are only 4-byte aligned
}

TEST(Candidates, InvalidProblemHasNone) {
  EXPECT_TRUE(candidates({0, 64}, Target::from_arch("sm_90a")).empty());
}

TEST(Candidates, ValidateExplainsBadConfigs) {
  const Target t = Target::from_arch("sm_90a");
  const GemmProblem p{2560, 4096};
  KernelConfig c = candidates(p, t).front();
  KernelConfig bad = c;
  bad.split_k = 2;
  EXPECT_NE(invalid_reason(p, bad, t), "");
  bad = c;
  bad.bm = 48;
  EXPECT_NE(invalid_reason(p, bad, t), "");
  bad = c;
  bad.vec = 16;
  EXPECT_NE(invalid_reason({2560, 4100}, bad, t), "");
  bad = c;
  bad.bm = 1024;
  bad.thread_m = 1;
  EXPECT_NE(invalid_reason(p, bad, t), "");  // 1024 * bn / thread_n threads
}

TEST(Candidates, HeuristicDefaultIsACandidateAndDeterministic) {
  const Target t = Target::from_arch("sm_90a");
  const GemmProblem p{2560, 4096};
  const std::vector<KernelConfig> cs = candidates(p, t);
  for (int64_t m : {1, 16, 65, 256, 4096}) {
    const KernelConfig d = heuristic_default(p, t, m);
    EXPECT_EQ(d, heuristic_default(p, t, m));
    EXPECT_NE(std::find(cs.begin(), cs.end(), d), cs.end());
  }
  EXPECT_THROW(heuristic_default({0, 1}, t, 1), Error);
}

TEST(KernelName, ParseRejectsMalformedNames) {
  const std::string good =
      KernelSpec{{2560, 4096}, candidates({2560, 4096}, Target::from_arch("sm_80")).front(), "sm_80"}
          .name();
  EXPECT_NO_THROW(KernelSpec::parse_name(good));
  for (std::string bad : {std::string(""), good + "_", "x" + good, good.substr(0, good.size() - 3),
                          std::string(4096, 'a'), std::string("i8g_sm80_wgmma_") + good.substr(20),
                          std::string("../../etc/passwd")})
    EXPECT_THROW(KernelSpec::parse_name(bad), Error) << bad;
}

TEST(Emit, SourceMatchesGoldenFile) {
  GemmProblem p{2560, 4096};
  p.bias = true;
  KernelConfig c;
  c.family = Family::simt_dp4a;
  c.bm = 32; c.bn = 128; c.bk = 32; c.thread_m = 4; c.thread_n = 4; c.vec = 16;
  const Source s = emit({p, c, "sm_90a"});
  const std::string path = std::string(I8G_SOURCE_DIR) + "/tests/generator/golden/simt_dp4a_bias.cu";
  std::ifstream f(path);
  ASSERT_TRUE(f) << "missing " << path;
  std::stringstream golden;
  golden << f.rdbuf();
  EXPECT_EQ(s.code, golden.str());
  EXPECT_EQ(s.name, "i8g_sm90a_simt_dp4a_n2560_k4096_nk_tok_ch_bf16_bias_bm32_bn128_bk32_tm4_tn4_v16");
  EXPECT_EQ(s.entry, "i8g::simt_dp4a_kernel<32, 128, 32, 4, 4, 16, 2560LL, 4096LL, 0, 1, 1, 0, 1, 0>");
}

TEST(Emit, EmittedIncludesAreEmbedded) {
  std::set<std::string> embedded;
  for (const EmbeddedFile& f : embedded_templates()) embedded.insert(f.path);
  EXPECT_TRUE(embedded.count("simt_dp4a.cuh"));
  EXPECT_TRUE(embedded.count("epilogue.cuh"));
  EXPECT_TRUE(embedded.count("i8g_args.h"));
  EXPECT_TRUE(std::regex_match(std::string(generator_hash()), std::regex("[0-9a-f]{64}")));
}

TEST(LaunchShape, CoversEveryOutputTile) {
  const Target t = Target::from_arch("sm_90a");
  const GemmProblem p{1000, 4096};
  const KernelConfig c = candidates(p, t).front();
  for (int64_t m : {1, 65, 3072}) {
    const LaunchShape s = launch_shape({p, c, t.arch}, m);
    EXPECT_GE(int64_t(s.grid[0]) * c.bn, p.n);
    EXPECT_LT(int64_t(s.grid[0] - 1) * c.bn, p.n);
    EXPECT_GE(int64_t(s.grid[1]) * c.bm, m);
    EXPECT_EQ(int(s.block[0]), c.threads());
  }
}

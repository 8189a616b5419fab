// The decode_mma family compiles with NVRTC for sm_90a (the H200) and sm_80: every candidate of
// the decode target shapes and every epilogue option over N and K tails has no spills, no stack
// frame and no local memory (its register ring is indexed only by compile-time constants); its
// SASS holds mma.sync (IMMA), 128-bit global loads and no cp.async — or, with the shared-memory
// ring (schedule 1), cp.async (LDGSTS) and 128-bit shared loads; split configs hold the
// reduction's arrival counter (ATOMG), unsplit ones none. Whether the kernels compute the right
// thing is for a GPU (tests/gpu/decode_mma_test.cpp; a tune verifies every candidate first).
#include <gtest/gtest.h>

#include <iostream>
#include <set>

#include "core/embedded.hpp"
#include "generator/generator.hpp"
#include "runtime/compile/compiler.hpp"
#include "runtime/report/report.hpp"
#include "tests/runtime/compile/tensor_kernel_checks.hpp"

using namespace i8g;

namespace {

using test::sass_count;

int text_count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

std::vector<KernelSpec> decode_candidates(const GemmProblem& p, Target t) {
  std::vector<KernelSpec> specs;
  for (const KernelConfig& c : candidates(p, t))
    if (c.family == Family::decode_mma) specs.push_back({p, c, t.arch});
  return specs;
}

void compile_and_check(const Target& t, const std::vector<KernelSpec>& all, bool print) {
  std::vector<KernelSpec> in_registers, in_shared;
  for (const KernelSpec& s : all) (s.config.schedule == 1 ? in_shared : in_registers).push_back(s);
  const auto check = [&](const KernelSpec& spec, const CompileOutcome&, const ResourceReport& r,
                     const LaunchShape& shape) {
    EXPECT_EQ(shape.block[0], unsigned(32 * spec.config.warps_k)) << spec.name();
    if (r.sass_available) {
      EXPECT_GT(sass_count(r, "IMMA"), 0) << spec.name() << " has no mma.sync (IMMA)";
      EXPECT_GT(text_count(r.sass, ".128"), 0) << spec.name() << " has no 16-byte load";
      // CALL.REL.NOINC is sm_80's convergence jump out of a loop, not a call.
      EXPECT_EQ(sass_count(r, "CALL"), text_count(r.sass, "CALL.REL.NOINC"))
          << spec.name() << " calls a function (a 64-bit division?)";
      if (spec.config.schedule == 1)
        EXPECT_GT(sass_count(r, "LDS"), 0) << spec.name() << " reads no fragment from its shared ring";
      if (spec.config.split_k > 1) {
        EXPECT_GT(sass_count(r, "ATOMG"), 0) << spec.name() << " has no split-K arrival counter";
      } else {
        EXPECT_EQ(sass_count(r, "ATOMG"), 0) << spec.name() << ": unsplit kernels keep no counter";
      }
    }
    if (print)
      std::cout << spec.name() << ": " << r.registers << " regs, " << shape.dynamic_smem << " B smem, "
                << r.blocks_per_sm << " blocks/SM, IMMA=" << sass_count(r, "IMMA")
                << " LDG=" << sass_count(r, "LDG") << " LDGSTS=" << sass_count(r, "LDGSTS") << "\n";
  };
  if (!in_registers.empty()) test::compile_tensor_kernels(t, in_registers, check, test::Copies::registers);
  if (!in_shared.empty()) test::compile_tensor_kernels(t, in_shared, check, test::Copies::shared);
}

}  // namespace

TEST(DecodeMma, TemplatesAreEmbedded) {
  std::set<std::string> embedded;
  for (const EmbeddedFile& f : embedded_templates()) embedded.insert(f.path);
  EXPECT_TRUE(embedded.count("decode_mma.cuh"));
  EXPECT_TRUE(embedded.count("decode_frag.h"));
  EXPECT_TRUE(embedded.count("mma_s8.cuh"));
}

// Every candidate of the decode target shape with the most split variants, and the unsplit ones
// of the widest K (its split variants differ only in the reduction, compiled above).
TEST(DecodeMma, EveryCandidateOfTheDecodeTargetsCompilesCleanlyForSm90a) {
  const Target t = Target::from_arch("sm_90a");
  std::vector<KernelSpec> specs = decode_candidates({2560, 4096}, t);
  for (const KernelSpec& s : decode_candidates({4096, 14336}, t))
    if (s.config.split_k == 1) specs.push_back(s);
  ASSERT_GE(specs.size(), 60u);
  compile_and_check(t, specs, true);
}

// Each epilogue option over N = 1000 and K = 4080 (partial tiles and chunks), on the token tile
// of M = 1 and a split config of M = 64, plus sm_80 (the family's oldest arch).
TEST(DecodeMma, EveryEpilogueOptionCompilesWithTails) {
  const Target t = Target::from_arch("sm_90a");
  std::vector<KernelSpec> specs;
  for (const GemmProblem& p : test::epilogue_option_problems()) {
    const std::vector<KernelSpec> all = decode_candidates(p, t);
    ASSERT_FALSE(all.empty()) << p.key();
    specs.push_back(all.front());
    for (const KernelSpec& s : all)
      if (s.config.bm == 64 && s.config.split_k > 1) {
        specs.push_back(s);
        break;
      }
    for (const KernelSpec& s : all)  // the shared-memory ring, zero-filling K's last chunk
      if (s.config.schedule == 1) {
        specs.push_back(s);
        break;
      }
  }
  compile_and_check(t, specs, false);
  const Target ampere = Target::from_arch("sm_80");
  compile_and_check(ampere, {decode_candidates({1000, 4080}, ampere).front(), decode_candidates({2560, 4096}, ampere).back()},
                    true);
}

// The trigger twins (pdl_trigger 1 and 2; the tuner races them beside its finalists) compile as
// cleanly as their plain config, and only they signal the dependent launch (PREEXIT in SASS).
TEST(DecodeMma, TriggerTwinsCompileAndOnlyTheySignal) {
  const Target t = Target::from_arch("sm_90a");
  const GemmProblem p{28672, 4096};
  std::vector<KernelSpec> specs;
  for (const char* config : {"bm8_bn32_bk128_wk4_s2_sk1", "bm16_bn16_bk128_wk4_s3_sk1_sc1"}) {  // registers, shared ring
    const KernelSpec plain{p, KernelConfig::parse(Family::decode_mma, config), t.arch};
    specs.push_back(plain);
    for (const KernelConfig& c : trigger_twins(p, plain.config, t)) specs.push_back({p, c, t.arch});
  }
  ASSERT_EQ(specs.size(), 6u);
  const auto signals = [](const KernelSpec& spec, const CompileOutcome&, const ResourceReport& r, const LaunchShape&) {
    if (r.sass_available)
      EXPECT_EQ(sass_count(r, "PREEXIT") > 0, spec.config.pdl_trigger != 0) << spec.name() << "\n" << r.sass;
  };
  std::vector<KernelSpec> in_registers, in_shared;
  for (const KernelSpec& s : specs) (s.config.schedule == 1 ? in_shared : in_registers).push_back(s);
  ASSERT_FALSE(in_registers.empty());
  ASSERT_FALSE(in_shared.empty());
  test::compile_tensor_kernels(t, in_registers, signals, test::Copies::registers);
  test::compile_tensor_kernels(t, in_shared, signals, test::Copies::shared);
}

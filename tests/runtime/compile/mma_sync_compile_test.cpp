// The mma_sync family compiles with NVRTC for every tensor-core arch it targets: the configs
// prepare picks for the seed TP4 shapes have no spills and no stack frame, and their SASS
// holds the instructions the design depends on (IMMA tensor ops, LDSM = ldmatrix, LDGSTS =
// cp.async; PRMT for [K,N] weights). What runs on a GPU is checked in tests/gpu.
#include <gtest/gtest.h>

#include <iostream>
#include <set>

#include "generator/generator.hpp"
#include "runtime/compile/compiler.hpp"
#include "runtime/report/report.hpp"
#include "tests/runtime/compile/tensor_kernel_checks.hpp"

using namespace i8g;

namespace {

const GemmProblem kTp4[] = {{2560, 4096}, {4096, 2048}, {768, 4096}, {4096, 384}};

using test::sass_count;

std::vector<CompileOutcome> compile_and_check(const Target& t, const std::vector<KernelSpec>& specs,
                                              bool print) {
  return test::compile_tensor_kernels(
      t, specs, [&](const KernelSpec& spec, const CompileOutcome&, const ResourceReport& r, const LaunchShape& shape) {
        if (r.sass_available) {
          EXPECT_GT(sass_count(r, "IMMA"), 0) << spec.name() << " has no IMMA in its SASS";
          EXPECT_GT(sass_count(r, "LDSM"), 0) << spec.name() << " has no ldmatrix (LDSM) in its SASS";
          if (spec.problem.layout == WeightLayout::kn) {
            EXPECT_GT(sass_count(r, "PRMT"), 0) << spec.name() << ": [K,N] fragments are split with prmt";
          }
        }
        if (print)
          std::cout << spec.name() << ": " << r.registers << " regs, " << shape.dynamic_smem << " B smem, "
                    << r.blocks_per_sm << " blocks/SM, IMMA=" << sass_count(r, "IMMA")
                    << " LDSM=" << sass_count(r, "LDSM") << " LDGSTS=" << sass_count(r, "LDGSTS") << "\n";
      });
}

GemmProblem as_kn(GemmProblem p) {
  p.layout = WeightLayout::kn;
  return p;
}

}  // namespace

TEST(MmaSync, DefaultConfigsCompileWithoutSpillsAndUseTensorCores) {
  for (const char* arch : {"sm_80", "sm_86", "sm_89", "sm_90a", "sm_100", "sm_120"}) {
    const Target t = Target::from_arch(arch);
    std::vector<KernelSpec> specs;
    std::set<std::string> seen;
    for (const GemmProblem& p : kTp4)
      for (int64_t m : {1, 16, 256, 4096}) {
        KernelSpec s{p, heuristic_default(p, t, m, Family::mma_sync), t.arch};
        ASSERT_EQ(s.config.family, Family::mma_sync) << s.name();
        if (seen.insert(s.name()).second) specs.push_back(s);
      }
    compile_and_check(t, specs, std::string(arch) == "sm_90a");
  }
}

TEST(MmaSync, EveryEpilogueOptionCompilesWithTails) {
  // N = 1000 leaves a partial N tile, K = 4080 a partial K tile (zero-filled chunks).
  for (const char* arch : {"sm_80", "sm_90a"}) {
    const Target t = Target::from_arch(arch);
    std::vector<KernelSpec> specs;
    for (const GemmProblem& p : test::epilogue_option_problems()) {
      const bool tensor = p.act_scale == ActScale::per_tensor;
      specs.push_back({p, heuristic_default(p, t, tensor ? 4096 : 16, Family::mma_sync), t.arch});
    }
    compile_and_check(t, specs, false);
  }
}

TEST(MmaSync, EveryCandidateOfAShapeCompilesWithoutSpills) {
  // The register estimate must keep every candidate clear of spills, on the smallest-smem and
  // the largest-smem targets (their candidate sets differ in stages and tiles).
  for (const char* arch : {"sm_86", "sm_90a"}) {
    const Target t = Target::from_arch(arch);
    const GemmProblem p{2560, 4096};
    std::vector<KernelSpec> specs;
    for (const KernelConfig& c : candidates(p, t))
      if (c.family == Family::mma_sync) specs.push_back({p, c, t.arch});
    compile_and_check(t, specs, false);
  }
}

TEST(MmaSync, KnDefaultsAndTailsCompileWithoutSpills) {
  // [K,N] weights: the defaults for the TP4 shapes, and N = 1040 / K = 4080 (partial N and K
  // tiles) with every epilogue option.
  for (const char* arch : {"sm_80", "sm_90a"}) {
    const Target t = Target::from_arch(arch);
    std::vector<KernelSpec> specs;
    std::set<std::string> seen;
    for (const GemmProblem& nk : kTp4)
      for (int64_t m : {1, 16, 256, 4096}) {
        KernelSpec s{as_kn(nk), heuristic_default(as_kn(nk), t, m), t.arch};
        ASSERT_EQ(s.config.family, Family::mma_sync) << s.name();
        if (seen.insert(s.name()).second) specs.push_back(s);
      }
    for (OutType o : {OutType::bf16, OutType::f16, OutType::f32, OutType::i32})
      for (int flags = 0; flags < 4; ++flags) {
        GemmProblem p{1040, 4080, WeightLayout::kn, ActScale::per_token, WeightScale::per_channel, o,
                      bool(flags & 1), bool(flags & 2)};
        if (!p.invalid_reason().empty()) continue;
        specs.push_back({p, heuristic_default(p, t, 16, Family::mma_sync), t.arch});
      }
    compile_and_check(t, specs, std::string(arch) == "sm_90a");
  }
}

TEST(MmaSync, EveryKnCandidateOfAShapeCompilesWithoutSpills) {
  const Target t = Target::from_arch("sm_90a");
  const GemmProblem p{2560, 4096, WeightLayout::kn};
  std::vector<KernelSpec> specs;
  for (const KernelConfig& c : candidates(p, t))
    if (c.family == Family::mma_sync) specs.push_back({p, c, t.arch});
  ASSERT_FALSE(specs.empty());
  compile_and_check(t, specs, false);
}

TEST(MmaSync, KnIssuesAsManyLdmatrixAndMmaAsNk) {
  // One ldmatrix.x4(.trans) per two n8 tiles per k32 step either way: the SASS of a [K,N]
  // kernel has the [N,K] kernel's LDSM and IMMA counts, plus the PRMTs that split fragments.
  const Target t = Target::from_arch("sm_90a");
  std::vector<KernelSpec> specs;
  for (const GemmProblem& nk : {GemmProblem{2560, 4096}, GemmProblem{4096, 384}})
    for (int64_t m : {1, 4096}) {
      const KernelConfig c = heuristic_default(nk, t, m, Family::mma_sync);
      specs.push_back({nk, c, t.arch});
      specs.push_back({as_kn(nk), c, t.arch});
    }
  const auto outcomes = compile_and_check(t, specs, false);
  for (size_t i = 0; i + 1 < specs.size(); i += 2) {
    if (!outcomes[i].binary || !outcomes[i + 1].binary) continue;
    const ResourceReport nk = make_report(*outcomes[i].binary, t, specs[i].config.threads(), 0);
    const ResourceReport kn = make_report(*outcomes[i + 1].binary, t, specs[i + 1].config.threads(), 0);
    if (!nk.sass_available) GTEST_SKIP() << "no SASS disassembler";
    EXPECT_EQ(sass_count(kn, "LDSM"), sass_count(nk, "LDSM")) << specs[i + 1].name();
    EXPECT_EQ(sass_count(kn, "IMMA"), sass_count(nk, "IMMA")) << specs[i + 1].name();
    std::cout << specs[i + 1].name() << ": " << kn.registers << " regs (nk " << nk.registers
              << "), LDSM " << sass_count(kn, "LDSM") << ", IMMA " << sass_count(kn, "IMMA") << ", PRMT "
              << sass_count(kn, "PRMT") << " (nk " << sass_count(nk, "PRMT") << ")\n";
  }
}

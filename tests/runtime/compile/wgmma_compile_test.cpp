// The experimental wgmma family compiles with NVRTC for sm_90a: its default and candidate
// configs have no spills, no stack frame and no local memory, and their SASS holds the warpgroup
// MMA (nvdisasm prints int8 wgmma as IGMMA), cp.async (LDGSTS) and no mma.sync (IMMA); ptxas
// does not warn about serializing the wgmmas. Whether the kernels compute the right thing is
// for a GPU tune (it verifies every candidate first).
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

const GemmProblem kTp4[] = {{2560, 4096}, {4096, 2048}, {768, 4096}, {4096, 384}};

Target hopper() {
  Target t = Target::from_arch("sm_90a");
  t.experimental_wgmma = true;
  return t;
}

using test::sass_count;

void compile_and_check(const std::vector<KernelSpec>& specs, bool print) {
  test::compile_tensor_kernels(
      hopper(), specs,
      [&](const KernelSpec& spec, const CompileOutcome& o, const ResourceReport& r, const LaunchShape& shape) {
        // ptxas warns when it must serialize wgmma (e.g. accumulators it cannot keep in place).
        EXPECT_EQ(o.binary->log.find("serialized"), std::string::npos) << spec.name() << ":\n" << o.binary->log;
        EXPECT_EQ(o.binary->log.find("Performance Loss"), std::string::npos) << o.binary->log;
        if (r.sass_available) {
          EXPECT_GT(sass_count(r, "IGMMA"), 0) << spec.name() << " has no warpgroup MMA (IGMMA) in its SASS";
          EXPECT_EQ(sass_count(r, "IMMA"), 0) << spec.name() << " fell back to mma.sync";
        }
        if (print)
          std::cout << spec.name() << ": " << r.registers << " regs, " << shape.dynamic_smem << " B smem, "
                    << r.blocks_per_sm << " blocks/SM, IGMMA=" << sass_count(r, "IGMMA") << " LDGSTS="
                    << sass_count(r, "LDGSTS") << " WARPSYNC=" << sass_count(r, "WARPSYNC") << "\n";
      });
}

}  // namespace

TEST(Wgmma, TemplatesAreEmbedded) {
  std::set<std::string> embedded;
  for (const EmbeddedFile& f : embedded_templates()) embedded.insert(f.path);
  EXPECT_TRUE(embedded.count("wgmma.cuh"));
  EXPECT_TRUE(embedded.count("wgmma_frag.h"));
  EXPECT_TRUE(embedded.count("tile_copy.cuh"));
}

TEST(Wgmma, DefaultConfigsCompileWithoutSpillsAndUseWarpgroupMma) {
  std::vector<KernelSpec> specs;
  std::set<std::string> seen;
  for (const GemmProblem& p : kTp4)
    for (int64_t m : {1, 16, 256, 4096}) {
      KernelSpec s{p, heuristic_default(p, hopper(), m, Family::wgmma), "sm_90a"};
      if (seen.insert(s.name()).second) specs.push_back(s);
    }
  compile_and_check(specs, true);
}

TEST(Wgmma, EveryCandidateOfAShapeCompilesWithoutSpills) {
  const GemmProblem p{2560, 4096};
  std::vector<KernelSpec> specs;
  for (const KernelConfig& c : candidates(p, hopper()))
    if (c.family == Family::wgmma) specs.push_back({p, c, "sm_90a"});
  ASSERT_FALSE(specs.empty());
  compile_and_check(specs, true);
}

TEST(Wgmma, EveryEpilogueOptionCompilesWithTails) {
  // N = 1000 leaves a partial N tile, K = 4080 a partial K tile (zero-filled chunks).
  std::vector<KernelSpec> specs;
  for (const GemmProblem& p : test::epilogue_option_problems()) {
    const bool tensor = p.act_scale == ActScale::per_tensor;
    specs.push_back({p, heuristic_default(p, hopper(), tensor ? 4096 : 16, Family::wgmma), "sm_90a"});
  }
  compile_and_check(specs, false);
}

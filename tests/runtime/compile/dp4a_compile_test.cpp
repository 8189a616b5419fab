// The simt_dp4a reference family compiles for every NVIDIA arch it targets, with zero spills
// and no local memory in the configs prepare picks (heuristic defaults per M bucket).
#include <gtest/gtest.h>

#include <array>
#include <set>

#include "generator/generator.hpp"
#include "runtime/compile/compiler.hpp"
#include "runtime/report/report.hpp"

using namespace i8g;

namespace {

const GemmProblem kTp4[] = {{2560, 4096}, {4096, 2048}, {768, 4096}, {4096, 384}};

void expect_clean(const KernelSpec& spec, const CompileOutcome& o, const Target& t) {
  ASSERT_TRUE(o.binary) << spec.name() << ": " << o.error;
  const ResourceReport r = make_report(*o.binary, t, spec.config.threads(), 0);
  EXPECT_GT(r.registers, 0) << spec.name();
  EXPECT_EQ(r.spill_store_bytes, 0) << spec.name();
  EXPECT_EQ(r.spill_load_bytes, 0) << spec.name();
  EXPECT_EQ(r.stack_frame_bytes, 0) << spec.name();
  EXPECT_TRUE(r.consistent) << spec.name();
  EXPECT_EQ(r.static_smem_bytes, spec.config.static_smem_bytes()) << spec.name();
  EXPECT_GT(r.blocks_per_sm, 0) << spec.name();
  if (r.sass_available) {
    EXPECT_GT(r.instruction_mix.count("IDP"), 0u) << spec.name() << " has no dp4a (IDP) in its SASS";
  }
}

}  // namespace

TEST(SimtDp4a, DefaultConfigsCompileWithoutSpillsOnEveryArch) {
  for (const char* arch : {"sm_75", "sm_80", "sm_86", "sm_89", "sm_90a"}) {
    const Target t = Target::from_arch(arch);
    std::vector<KernelSpec> specs;
    std::set<std::string> seen;
    for (GemmProblem p : kTp4) {
      for (int64_t m : m_buckets(4096)) {
        KernelSpec s{p, heuristic_default(p, t, m, Family::simt_dp4a), t.arch};
        if (seen.insert(s.name()).second) specs.push_back(s);
      }
    }
    std::vector<Source> sources;
    for (const KernelSpec& s : specs) sources.push_back(emit(s));
    const auto outcomes = compile_all(*make_compiler(t), sources, t, 0);
    for (size_t i = 0; i < specs.size(); ++i) expect_clean(specs[i], outcomes[i], t);
  }
}

TEST(SimtDp4a, EveryOptionCompilesOnSm75AndSm90a) {
  // Every epilogue option and both layouts, on a shape with N and K tails.
  for (const char* arch : {"sm_75", "sm_90a"}) {
    const Target t = Target::from_arch(arch);
    std::vector<KernelSpec> specs;
    for (WeightLayout l : {WeightLayout::nk, WeightLayout::kn})
      for (OutType o : {OutType::bf16, OutType::f16, OutType::f32, OutType::i32})
        for (int flags = 0; flags < 4; ++flags) {
          GemmProblem p{1000, 4095, l, ActScale::per_token, WeightScale::per_channel, o,
                        bool(flags & 1), bool(flags & 2)};
          if (!p.invalid_reason().empty()) continue;
          specs.push_back({p, heuristic_default(p, t, 16, Family::simt_dp4a), t.arch});
        }
    std::vector<Source> sources;
    for (const KernelSpec& s : specs) sources.push_back(emit(s));
    const auto outcomes = compile_all(*make_compiler(t), sources, t, 0);
    for (size_t i = 0; i < specs.size(); ++i) expect_clean(specs[i], outcomes[i], t);
  }
}

TEST(SimtDp4a, EveryCandidateOfAShapeCompilesWithoutSpills) {
  const Target t = Target::from_arch("sm_90a");
  const GemmProblem p{2560, 4096};
  std::vector<KernelSpec> specs;
  for (const KernelConfig& c : candidates(p, t))
    if (c.family == Family::simt_dp4a) specs.push_back({p, c, t.arch});
  std::vector<Source> sources;
  for (const KernelSpec& s : specs) sources.push_back(emit(s));
  const auto outcomes = compile_all(*make_compiler(t), sources, t, 0);
  for (size_t i = 0; i < specs.size(); ++i) expect_clean(specs[i], outcomes[i], t);
}

TEST(UtilityModule, CompilesForEveryArch) {
  for (const std::string& arch : Target::supported_archs()) {
    const Target t = Target::from_arch(arch);
    const Binary b = make_compiler(t)->compile(emit_utility(t.arch), t);
    EXPECT_FALSE(b.image.empty());
    for (const char* entry : {"i8g_colsum_nk", "i8g_colsum_kn", "i8g_quantize_rows_bf16_sym",
                              "i8g_range_f32_asym", "i8g_finalize_range_sym",
                              "i8g_quantize_tensor_f16_asym"})
      EXPECT_NE(b.ir.find(entry), std::string::npos) << arch << " lacks " << entry;
    // The dequant entries of every epilogue (scales, output type, bias, asymmetry), vector and
    // element: what the host launches.
    for (int e = 0; e < 64; ++e) {
      GemmProblem p{64, 64};
      p.act_scale = e & 1 ? ActScale::per_tensor : ActScale::per_token;
      p.weight_scale = e & 2 ? WeightScale::per_tensor : WeightScale::per_channel;
      p.bias = e & 4;
      p.asymmetric = e & 8;
      p.out = std::array{OutType::bf16, OutType::f16, OutType::f32, OutType::i32}[e >> 4];
      for (const std::string& entry : {dequant_entry(p), dequant_any_entry(p)})
        EXPECT_NE(b.ir.find(entry + "("), std::string::npos) << arch << " lacks " << entry;
    }
  }
}

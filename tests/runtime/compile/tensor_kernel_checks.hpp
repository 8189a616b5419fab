// What every tensor-core family's kernels must show after an NVRTC compile (no GPU needed):
// no spills, no stack frame, a consistent resource report, only dynamic shared memory, at least
// one resident block, no local memory in the SASS and the family's global loads: cp.async
// (LDGSTS), UTMALDG for TMA-fed families, or, for a family that loads into registers
// (Copies::registers: decode_mma), 128-bit global loads and no cp.async. Each family's compile
// test adds its own instructions through the callback.
#pragma once
#include <gtest/gtest.h>

#include <functional>
#include <vector>

#include "generator/families.hpp"
#include "generator/generator.hpp"
#include "runtime/compile/compiler.hpp"
#include "runtime/report/report.hpp"

namespace i8g::test {

inline int sass_count(const ResourceReport& r, const char* op) {
  auto it = r.instruction_mix.find(op);
  return it == r.instruction_mix.end() ? 0 : it->second;
}

// How a family's operands reach it: cp.async or TMA into shared memory (by the family record's
// tma_operands), or 16-byte global loads straight into registers.
enum class Copies { shared, registers };

using FamilyChecks =
    std::function<void(const KernelSpec&, const CompileOutcome&, const ResourceReport&, const LaunchShape&)>;

inline void expect_clean_tensor_kernel(const KernelSpec& spec, const CompileOutcome& o, const Target& t,
                                       const FamilyChecks& family, Copies copies = Copies::shared) {
  ASSERT_TRUE(o.binary) << spec.name() << ": " << o.error;
  const LaunchShape shape = launch_shape(spec, 1);
  const ResourceReport r = make_report(*o.binary, t, int(shape.block[0]), int(shape.dynamic_smem));
  EXPECT_GT(r.registers, 0) << spec.name();
  EXPECT_EQ(r.spill_store_bytes, 0) << spec.name();
  EXPECT_EQ(r.spill_load_bytes, 0) << spec.name();
  EXPECT_EQ(r.stack_frame_bytes, 0) << spec.name();
  EXPECT_TRUE(r.consistent) << spec.name();
  EXPECT_EQ(r.static_smem_bytes, 0) << spec.name() << ": the stage ring is dynamic";
  EXPECT_GT(r.blocks_per_sm, 0) << spec.name();
  if (r.sass_available) {
    if (copies == Copies::registers) {
      EXPECT_GT(sass_count(r, "LDG"), 0) << spec.name() << " has no global load (LDG) in its SASS";
      EXPECT_EQ(sass_count(r, "LDGSTS"), 0) << spec.name() << " loads operands with cp.async";
    } else if (family_info(spec.config.family).tma_operands) {
      EXPECT_GT(sass_count(r, "UTMALDG"), 0) << spec.name() << " has no TMA load (UTMALDG) in its SASS";
      EXPECT_EQ(sass_count(r, "LDGSTS"), 0) << spec.name() << " loads operands with cp.async";
    } else {
      EXPECT_GT(sass_count(r, "LDGSTS"), 0) << spec.name() << " has no cp.async (LDGSTS) in its SASS";
    }
    EXPECT_EQ(sass_count(r, "LDL") + sass_count(r, "STL"), 0) << spec.name() << " touches local memory";
  }
  family(spec, o, r, shape);
}

// Every epilogue option of N x K with [N,K] weights (each output type, with and without bias and
// asymmetry, per-token x per-channel scales), then the per-tensor x per-tensor one last.
// N = 1000 and K = 4080 leave partial N and K tiles in every family.
inline std::vector<GemmProblem> epilogue_option_problems(int64_t n = 1000, int64_t k = 4080) {
  std::vector<GemmProblem> out;
  for (OutType o : {OutType::bf16, OutType::f16, OutType::f32, OutType::i32})
    for (int flags = 0; flags < 4; ++flags) {
      GemmProblem p{n, k, WeightLayout::nk, ActScale::per_token, WeightScale::per_channel, o, bool(flags & 1),
                    bool(flags & 2)};
      if (p.invalid_reason().empty()) out.push_back(p);
    }
  out.push_back({n, k, WeightLayout::nk, ActScale::per_tensor, WeightScale::per_tensor});
  return out;
}

// Emits and compiles `specs` for `t` in parallel, then checks each one as above.
inline std::vector<CompileOutcome> compile_tensor_kernels(const Target& t, const std::vector<KernelSpec>& specs,
                                                          const FamilyChecks& family, Copies copies = Copies::shared) {
  std::vector<Source> sources;
  for (const KernelSpec& s : specs) sources.push_back(emit(s));
  auto outcomes = compile_all(*make_compiler(t), sources, t, 0);
  for (size_t i = 0; i < specs.size(); ++i) expect_clean_tensor_kernel(specs[i], outcomes[i], t, family, copies);
  return outcomes;
}

}  // namespace i8g::test

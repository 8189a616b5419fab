// The AMD backend keeps each kernel's LLVM IR (a comgr compile of the same source, read with
// LLVM 15 in the hipRTC worker), and the IR audit reads it: every TP4 gfx90a candidate carries
// IR whose MFMA intrinsics match its ISA and its config; a kernel whose private array survives
// into scratch is flagged by the IR and by the code object alike; bad IR is a finding.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "generator/families.hpp"
#include "runtime/compile/hip_compiler.hpp"
#include "runtime/report/amd_ir.hpp"
#include "runtime/report/report.hpp"
#include "amd_test_support.hpp"

namespace i8g {
namespace {

#ifdef I8G_HAVE_LLVM_IR
bool has(const std::vector<AmdIrFinding>& fs, const std::string& severity, const std::string& text) {
  for (const auto& f : fs)
    if (f.severity == severity && f.what.find(text) != std::string::npos) return true;
  return false;
}

std::string describe(const std::vector<AmdIrFinding>& fs) {
  std::string s;
  for (const auto& f : fs) s += f.severity + " " + f.kernel + ": " + f.what + "\n";
  return s;
}

// Every candidate config of the first TP4 shape and of 4096x384 (K = 384: six K steps of 64,
// which hipRTC's code generation unrolls whole for some configs — the IR must be the one the
// code generator saw), and the untuned defaults of the other two.
TEST(AmdIr, EveryTp4Gfx90aCandidateCarriesIrWhoseMfmaCountMatchesItsIsaAndConfig) {
  const Target t = Target::from_arch("gfx90a");
  const std::vector<GemmProblem> tp4 = test::tp4_problems();
  ASSERT_EQ(tp4[3].k, 384);
  std::vector<KernelSpec> specs;
  for (size_t i : {size_t(0), size_t(3)})
    for (const KernelConfig& c : candidates(tp4[i], t)) specs.push_back({tp4[i], c, t.arch});
  for (size_t i : {size_t(1), size_t(2)})
    for (const KernelSpec& s : test::default_specs(tp4[i], t)) specs.push_back(s);
  ASSERT_GE(specs.size(), 8u);
  std::vector<Source> sources;
  for (const KernelSpec& s : specs) sources.push_back(emit(s));
  const auto outcomes = compile_all(*make_compiler(t), sources, t, 2);
  for (size_t i = 0; i < specs.size(); ++i) {
    SCOPED_TRACE(specs[i].name());
    ASSERT_TRUE(outcomes[i].binary) << outcomes[i].error;
    const Binary& b = *outcomes[i].binary;
    ASSERT_EQ(b.ir.rfind("; ModuleID", 0), 0u) << b.log;
    EXPECT_NE(b.ir.find("amdgpu_kernel"), std::string::npos);
    const ResourceReport r = make_report(b, t, int(launch_shape(specs[i], 1).block[0]), 0);
    ASSERT_TRUE(r.sass_available) << r.sass_note;
    const std::vector<AmdIrKernel> facts = parse_amd_ir_facts(amd_ir_facts(b.ir));
    ASSERT_EQ(facts.size(), 1u);
    EXPECT_EQ(facts[0].name, b.lowered_name);
    EXPECT_EQ(facts[0].mfma, r.amd.mfma) << "IR and ISA disagree";
    const int implied = family_info(Family::mfma).matrix_instructions(specs[i].config);
    const int64_t k_steps = (specs[i].problem.k + specs[i].config.bk - 1) / specs[i].config.bk;
    // One K step's MFMAs, or one per K step where the constant K loop was unrolled whole.
    EXPECT_TRUE(facts[0].mfma == implied || facts[0].mfma == implied * k_steps) << facts[0].mfma << " vs " << implied;
    EXPECT_EQ(facts[0].lds_bytes, r.amd.lds_bytes);
    EXPECT_TRUE(facts[0].allocas.empty());
    const auto findings = audit_amd_ir(b.ir, {b.lowered_name, implied, k_steps, r.amd.mfma, r.amd.lds_bytes});
    EXPECT_TRUE(findings.empty()) << describe(findings);
  }
}

// Test-only: a dynamically indexed private array too big for LDS promotion stays in private
// memory (addrspace 5) and so in scratch.
Source private_array_kernel() {
  Source s;
  s.name = "i8g_test_private_array";
  s.entry = "private_array<1024>";
  s.code = R"(
template <int N>
__global__ void __launch_bounds__(256) private_array(int* out, int i) {
  int buf[N];
  for (int j = 0; j < N; ++j) buf[j] = out[j] * j;
  out[threadIdx.x] = buf[(i + threadIdx.x) % N];
}
template __global__ void private_array<1024>(int*, int);
)";
  return s;
}

TEST(AmdIr, APrivateArrayIsFlaggedByTheIrAuditAndTheCodeObjectAlike) {
  const Target t = Target::from_arch("gfx90a");
  const Binary b = make_compiler(t)->compile(private_array_kernel(), t);
  ASSERT_FALSE(b.ir.empty()) << b.log;
  const ResourceReport r = make_report(b, t, 256, 0);
  EXPECT_GT(r.amd.scratch_bytes, 0) << r.to_text();
  const auto findings = audit_amd_ir(b.ir, {b.lowered_name, -1, -1, -1, -1});
  EXPECT_TRUE(has(findings, "reject", "private memory survives")) << describe(findings);
  EXPECT_TRUE(has(findings, "reject", "addrspace 5")) << describe(findings);
  for (const auto& f : findings) EXPECT_EQ(f.kernel, b.lowered_name);
}

TEST(AmdIr, UnreadableIrIsAFindingNamingTheKernelNotACrash) {
  const std::string ir = "; ModuleID = 'x'\ndefine amdgpu_kernel void @k() {\n  %1 = add i32";
  for (const std::string& bad : {ir, std::string("garbage"), std::string("BC\xC0\xDE\x01", 5), std::string("a\0b", 3)}) {
    const auto findings = audit_amd_ir(bad, {"k", 1, 1, 1, 0});
    ASSERT_EQ(findings.size(), 1u);
    EXPECT_EQ(findings[0].severity, "error");
    EXPECT_EQ(findings[0].kernel, "k");
    EXPECT_NE(findings[0].what.find("IR unreadable"), std::string::npos) << findings[0].what;
  }
  EXPECT_THROW(amd_ir_facts("not IR"), Error);
}
#endif

TEST(AmdIr, AnEntryWithoutIrIsNamedAsSuch) {
  const auto findings = audit_amd_ir("", {"k", 1, 1, 1, 0});
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].severity, "info");
  EXPECT_NE(findings[0].what.find("no LLVM IR stored"), std::string::npos);
}

}  // namespace
}  // namespace i8g

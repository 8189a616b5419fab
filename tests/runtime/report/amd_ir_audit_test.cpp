// The IR audit's rules on hand-made facts (no LLVM needed): which fact is a reject, a warning
// or nothing, and that every finding names its kernel; a malformed reader answer is an Error.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "runtime/report/amd_ir.hpp"

namespace i8g {
namespace {

AmdIrKernel clean() {
  AmdIrKernel k;
  k.name = "kern";
  k.mfma = 32;
  k.lds_bytes = 8704;
  k.calls.push_back({"kern", "__ockl_get_local_id", "external"});
  return k;
}

const AmdIrExpectations kExpect{"kern", 32, -1, 32, 8704};

TEST(AmdIrAudit, ACleanKernelHasNoFindingsAndExternalCallsAreNotOnes) {
  EXPECT_TRUE(judge_amd_ir({clean()}, kExpect).empty());
}

TEST(AmdIrAudit, PrivateAllocasAreRejectsOtherAllocasWarnings) {
  AmdIrKernel k = clean();
  k.allocas.push_back({"kern", "[1024 x i32]", 4096, 5});
  k.allocas.push_back({"kern", "i32", 4, 0});
  const auto f = judge_amd_ir({k}, kExpect);
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].severity, "reject");
  EXPECT_NE(f[0].what.find("[1024 x i32] (4096 B, addrspace 5)"), std::string::npos) << f[0].what;
  EXPECT_EQ(f[1].severity, "warning");
  for (const auto& x : f) EXPECT_EQ(x.kernel, "kern");
}

TEST(AmdIrAudit, MfmaCountsAreHeldAgainstTheConfigAndTheIsa) {
  AmdIrKernel k = clean();
  k.mfma = 16;
  const auto f = judge_amd_ir({k}, kExpect);
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].severity, "reject");
  EXPECT_NE(f[0].what.find("16 MFMA intrinsics, the config implies 32"), std::string::npos);
  EXPECT_EQ(f[1].severity, "warning");
  EXPECT_NE(f[1].what.find("the ISA has 32 v_mfma"), std::string::npos);
  EXPECT_TRUE(judge_amd_ir({k}, {"kern", -1, -1, -1, -1}).empty()) << "negative expectations are not checked";
}

TEST(AmdIrAudit, AWhollyUnrolledKLoopHoldsOneKStepOfMfmasPerStep) {
  AmdIrKernel k = clean();
  k.mfma = 32 * 6;
  EXPECT_TRUE(judge_amd_ir({k}, {"kern", 32, 6, 32 * 6, 8704}).empty());
  k.mfma = 32 * 7;
  const auto f = judge_amd_ir({k}, {"kern", 32, 6, 32 * 7, 8704});
  ASSERT_EQ(f.size(), 1u);
  EXPECT_NE(f[0].what.find("224 MFMA intrinsics, the config implies 32 per K step (6 steps)"), std::string::npos) << f[0].what;
}

TEST(AmdIrAudit, LdsBytesAreHeldAgainstTheReport) {
  AmdIrKernel k = clean();
  k.lds_bytes = 17408;
  const auto f = judge_amd_ir({k}, kExpect);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_NE(f[0].what.find("17408 B of LDS globals (addrspace 3), the report says 8704 B"), std::string::npos);
}

TEST(AmdIrAudit, CallsNotInlinedAndIndirectCallsAreWarnings) {
  AmdIrKernel k = clean();
  k.calls.push_back({"kern", "helper", "defined"});
  k.calls.push_back({"kern", "", "indirect"});
  const auto f = judge_amd_ir({k}, kExpect);
  ASSERT_EQ(f.size(), 2u);
  EXPECT_NE(f[0].what.find("call to helper not inlined"), std::string::npos);
  EXPECT_NE(f[1].what.find("indirect call"), std::string::npos);
}

TEST(AmdIrAudit, AMissingKernelIsAnErrorAndOtherKernelsAreNamed) {
  AmdIrKernel other = clean();
  other.name = "other";
  other.allocas.push_back({"other", "i32", 4, 5});
  const auto f = judge_amd_ir({other}, kExpect);
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].kernel, "other");
  EXPECT_EQ(f[1].severity, "error");
  EXPECT_EQ(f[1].kernel, "kern");
}

TEST(AmdIrAudit, MalformedReaderAnswersAreErrors) {
  for (const char* bad : {"", "{", "[]", R"({"kernels": 3})", R"({"kernels": [{"name": 1}]})",
                          R"({"kernels": [{"name": "k", "mfma": 1e300, "lds_bytes": 0, "allocas": [], "calls": []}]})",
                          R"({"kernels": [{"name": "k", "mfma": 1, "lds_bytes": 0.5, "allocas": [], "calls": []}]})"})
    EXPECT_THROW(parse_amd_ir_facts(bad), Error) << bad;
  const auto ok = parse_amd_ir_facts(
      R"({"kernels": [{"name": "k", "mfma": 2, "lds_bytes": 64, "allocas": [{"function": "k", "type": "i32", "bytes": 4, "addrspace": 5}], "calls": []}]})");
  ASSERT_EQ(ok.size(), 1u);
  EXPECT_EQ(ok[0].mfma, 2);
  EXPECT_EQ(ok[0].allocas.at(0).addrspace, 5);
}

}  // namespace
}  // namespace i8g

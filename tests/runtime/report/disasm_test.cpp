// nvdisasm: SASS when the tool is found, a note (not an error) when it is not.
#include <gtest/gtest.h>

#include <cstdlib>

#include "core/options.hpp"
#include "runtime/report/disasm.hpp"
#include "runtime/report/report.hpp"
#include "tests/runtime/runtime_test_support.hpp"

namespace i8g {
namespace {

// Sets or clears the I8GEMM_NVDISASM option for one test, restoring it afterwards.
class ScopedNvdisasmEnv {
 public:
  explicit ScopedNvdisasmEnv(const char* value) : scope_(with(value)) {}

 private:
  static Options with(const char* value) {
    Options o = options();
    o.nvdisasm = value ? value : "";
    return o;
  }
  ScopedOptions scope_;
};

TEST(Disasm, InstructionMixCountsBaseMnemonicsPastPredicates) {
  const char* sass =
      "\t.section\t.text._Z1kPi,\"ax\",@progbits\n"
      "_Z1kPi:\n"
      "        /*0000*/                   LDC R1, c[0x0][0x28] ;\n"
      "        /*0010*/               @P0 BRA `(.L_x_0) ;\n"
      "        /*0020*/              @!P0 IDP.4A.S8.S8 R11, R0, R8, R11 ;\n"
      "        /*0030*/                   IDP.4A.S8.S8 R12, R0, R8, R12 ;\n"
      "        /*0040*/                   HGMMA.64x128x16.F32 R24, gdesc[UR4], R24 ;\n"
      "        /*0050*/                   IMMA.16816.S8.S8 R4, R8, R12, R4 ;\n"
      "        /*0060*/                   LDG.E.128 R4, desc[UR4][R2.64] ;\n"
      ".L_x_0:\n"
      "        /*0070*/                   EXIT ;\n"
      "        /* comment */ NOT_AN_INSTRUCTION\n";
  auto mix = instruction_mix(sass);
  EXPECT_EQ(mix["IDP"], 2);
  EXPECT_EQ(mix["LDC"], 1);
  EXPECT_EQ(mix["BRA"], 1);
  EXPECT_EQ(mix["HGMMA"], 1);
  EXPECT_EQ(mix["IMMA"], 1);
  EXPECT_EQ(mix["LDG"], 1);
  EXPECT_EQ(mix["EXIT"], 1);
  EXPECT_EQ(mix["total"], 8);
  EXPECT_EQ(mix["tensor_core"], 2);
  EXPECT_EQ(mix.count("NOT_AN_INSTRUCTION"), 0u);
}

TEST(Disasm, ReportHasSassWithIdpForTheDp4aKernel) {
  ScopedNvdisasmEnv env(nullptr);
  std::string note;
  if (find_nvdisasm(&note).empty()) GTEST_SKIP() << note;
  for (const char* arch : {"sm_75", "sm_80", "sm_90a"}) {
    const Binary& b = test::compiled(test::dp4a_source(), arch);
    ResourceReport r = make_report(b, Target::from_arch(arch), 256, 0);
    ASSERT_TRUE(r.sass_available) << arch << ": " << r.sass_note;
    EXPECT_NE(r.sass.find(b.lowered_name), std::string::npos) << arch;
    EXPECT_GE(r.instruction_mix["IDP"], 1) << arch;
    EXPECT_GE(r.instruction_mix["BAR"], 2) << arch;
    EXPECT_GE(r.instruction_mix["LDS"], 1) << arch;
    EXPECT_GE(r.instruction_mix["STS"], 1) << arch;
    EXPECT_GE(r.instruction_mix["LDG"], 2) << arch;
    EXPECT_GE(r.instruction_mix["STG"], 1) << arch;
    EXPECT_EQ(r.instruction_mix["tensor_core"], 0) << arch;
  }
}

TEST(Disasm, SpillingKernelShowsLocalMemoryTraffic) {
  ScopedNvdisasmEnv env(nullptr);
  std::string note;
  if (find_nvdisasm(&note).empty()) GTEST_SKIP() << note;
  ResourceReport r = make_report(test::compiled(test::spill_source(), "sm_90a"), Target::from_arch("sm_90a"), 128, 0);
  ASSERT_TRUE(r.sass_available) << r.sass_note;
  EXPECT_GT(r.instruction_mix["STL"], 0);
  EXPECT_GT(r.instruction_mix["LDL"], 0);
}

TEST(Disasm, OverrideToAMissingFileIsReportedNotThrown) {
  ScopedNvdisasmEnv env("/nonexistent/i8g/nvdisasm");
  std::string note;
  EXPECT_EQ(find_nvdisasm(&note), "");
  EXPECT_NE(note.find("/nonexistent/i8g/nvdisasm"), std::string::npos) << note;
  ResourceReport r = make_report(test::compiled(test::plain_source(), "sm_80"), Target::from_arch("sm_80"), 64, 0);
  EXPECT_FALSE(r.sass_available);
  EXPECT_TRUE(r.sass.empty());
  EXPECT_TRUE(r.instruction_mix.empty());
  EXPECT_NE(r.sass_note.find("nvdisasm not found"), std::string::npos) << r.sass_note;
  EXPECT_GT(r.registers, 0);  // the rest of the report is still there
}

TEST(Disasm, FailingToolIsReportedWithItsExitStatus) {
  ScopedNvdisasmEnv env("/bin/false");
  Disassembly d = disassemble(test::compiled(test::plain_source(), "sm_80").image);
  EXPECT_FALSE(d.ok);
  EXPECT_EQ(d.tool, "/bin/false");
  EXPECT_NE(d.note.find("exit 1"), std::string::npos) << d.note;
}

TEST(Disasm, GarbageImageIsAFailedDisassemblyNotACrash) {
  ScopedNvdisasmEnv env(nullptr);
  std::string note;
  if (find_nvdisasm(&note).empty()) GTEST_SKIP() << note;
  Disassembly d = disassemble(std::vector<uint8_t>(64, 0x5a));
  EXPECT_FALSE(d.ok);
  EXPECT_FALSE(d.note.empty());
}

}  // namespace
}  // namespace i8g

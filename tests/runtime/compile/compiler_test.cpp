// NVRTC compiler: CUBIN + PTX + whole log for every arch, errors carry the whole log.
#include <gtest/gtest.h>

#include <algorithm>

#include "runtime/report/cubin_elf.hpp"
#include "tests/runtime/runtime_test_support.hpp"

namespace i8g {
namespace {

class CompilerPerArch : public ::testing::TestWithParam<std::string> {};

TEST_P(CompilerPerArch, ProducesCubinPtxAndLoweredKernelName) {
  const std::string arch = GetParam();
  const Binary& b = test::compiled(test::dp4a_source(), arch);
  EXPECT_EQ(b.name, "test_dp4a");
  EXPECT_EQ(b.arch, arch);
  EXPECT_EQ(b.entry, "dp4a_kernel<1024>");
  EXPECT_EQ(b.lowered_name, "_Z11dp4a_kernelILi1024EEvPKiS1_Pii");
  EXPECT_FALSE(b.image.empty());
  EXPECT_NE(b.ir.find(".entry " + b.lowered_name), std::string::npos);
  EXPECT_NE(b.ir.find(".target " + arch), std::string::npos);
  EXPECT_NE(b.log.find("Compiling entry function '" + b.lowered_name + "' for '" + arch + "'"),
            std::string::npos);
  EXPECT_EQ(b.log.find('\0'), std::string::npos);
  EXPECT_EQ(b.compiler, make_compiler(Target::from_arch(arch))->version());
  EXPECT_GT(b.compile_ms, 0);
  CubinInfo info = read_cubin(b.image);
  ASSERT_NE(info.find(b.lowered_name), nullptr);
  EXPECT_EQ(info.sm, Target::from_arch(arch).sm);
}

INSTANTIATE_TEST_SUITE_P(Archs, CompilerPerArch,
                         ::testing::Values("sm_75", "sm_80", "sm_86", "sm_89", "sm_90a", "sm_100", "sm_120"));

TEST(Compiler, VersionNamesNvrtcAndItsRelease) {
  const std::string v = make_compiler(Target::from_arch("sm_80"))->version();
  EXPECT_EQ(v.rfind("nvrtc ", 0), 0u) << v;
  EXPECT_NE(v.find('.'), std::string::npos) << v;
}

TEST(Compiler, OptionsAskForPtxasResourcesAndNeverFastMath) {
  const auto opts = nvrtc_options(Target::from_arch("sm_90a"));
  auto has = [&](const std::string& o) { return std::find(opts.begin(), opts.end(), o) != opts.end(); };
  EXPECT_TRUE(has("--gpu-architecture=sm_90a"));
  EXPECT_TRUE(has("-v"));
  EXPECT_TRUE(has("-warn-spills"));
  EXPECT_EQ(std::count(opts.begin(), opts.end(), "-Xptxas"), 2);
  for (const auto& o : opts) EXPECT_EQ(o.find("fast"), std::string::npos) << o;
  EXPECT_EQ(test::compiled(test::plain_source(), "sm_80").options, nvrtc_options(Target::from_arch("sm_80")));
}

TEST(Compiler, EmbeddedTemplatesAreIncludableHeaders) {
  Source src{"test_args", R"(
#include "i8g_args.h"
__global__ void args_kernel(const __grid_constant__ I8gArgs args) {
  static_cast<int*>(args.out)[threadIdx.x] = int(args.m + args.n + args.k);
}
)",
             "args_kernel"};
  const Binary& b = test::compiled(src, "sm_80");
  EXPECT_EQ(b.lowered_name, "_Z11args_kernel7I8gArgs");
  EXPECT_FALSE(b.image.empty());
}

TEST(Compiler, SyntaxErrorThrowsErrorCarryingTheWholeLog) {
  Target t = Target::from_arch("sm_80");
  try {
    make_compiler(t)->compile(test::broken_source(), t);
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.where(), "nvrtcCompileProgram");
    EXPECT_NE(e.message().find("test_broken"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("sm_80"), std::string::npos) << e.message();
    // Both diagnostics, not only the first line of the log.
    EXPECT_NE(e.message().find("undeclared_one"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("undeclared_two"), std::string::npos) << e.message();
  }
}

// An arch the loaded NVRTC does not know is refused before compiling, naming the library and the
// archs it knows (NVRTC 13 dropped sm_70, as NVRTC 12 before 12.8 lacks sm_100 and sm_120).
TEST(Compiler, AnArchTheLoadedNvrtcLacksIsRefusedByName) {
  Target t = Target::from_arch("sm_80");
  t.arch = "sm_70";
  t.sm = 70;
  const std::string v = make_compiler(t)->version();
  if (v.rfind("nvrtc 12.", 0) == 0) GTEST_SKIP() << v << " still compiles sm_70";
  try {
    make_compiler(t)->compile(test::plain_source(), t);
    ADD_FAILURE() << "sm_70 compiled with " << v;
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_EQ(e.kind(), ErrorKind::unsupported) << m;
    EXPECT_NE(m.find("cannot compile for sm_70"), std::string::npos) << m;
    EXPECT_NE(m.find(v), std::string::npos) << m;
    EXPECT_NE(m.find("sm_90"), std::string::npos) << m;
    EXPECT_NE(m.find("I8GEMM_NVRTC"), std::string::npos) << m;
  }
}

TEST(Compiler, EmptyEntryIsAnError) {
  Target t = Target::from_arch("sm_80");
  Source src = test::plain_source();
  src.entry.clear();
  EXPECT_THROW(make_compiler(t)->compile(src, t), Error);
}

TEST(Compiler, AmdTargetsGetHipRtcAndOthersAreRefused) {
  EXPECT_EQ(make_compiler(Target::from_arch("gfx90a"))->version().rfind("hiprtc ", 0), 0u);
  Target amd;
  amd.arch = "gfx942";
  amd.amd = true;
  EXPECT_THROW(make_compiler(amd), Error);
}

}  // namespace
}  // namespace i8g

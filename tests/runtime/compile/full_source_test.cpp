// The full-source dump: a kernel with its templates inlined compiles on its own (NVRTC given
// no headers at all) into the same CUBIN as the normal compile (up to NVRTC's per-compile tags
// on internal symbols, then into the same SASS), so it can be rebuilt or diffed outside i8gemm.
#include <gtest/gtest.h>

#include <cstdio>
#include <regex>

#include "core/embedded.hpp"
#include "generator/generator.hpp"
#include "runtime/compile/compiler.hpp"
#include "runtime/compile/full_source.hpp"
#include "runtime/compile/nvrtc_lib.hpp"
#include "runtime/report/report.hpp"

namespace i8g {
namespace {

// NVRTC with no include files: what a user outside i8gemm has. Returns the CUBIN, or fails.
std::vector<uint8_t> compile_alone(const Source& src, const std::vector<std::string>& options) {
  const Nvrtc& n = nvrtc();  // the copy i8gemm's own compile uses
  nvrtcProgram prog = nullptr;
  EXPECT_EQ(n.nvrtcCreateProgram(&prog, src.code.c_str(), (src.name + ".cu").c_str(), 0, nullptr, nullptr),
            NVRTC_SUCCESS);
  EXPECT_EQ(n.nvrtcAddNameExpression(prog, src.entry.c_str()), NVRTC_SUCCESS);
  std::vector<const char*> opts;
  for (const auto& o : options) opts.push_back(o.c_str());
  const nvrtcResult r = n.nvrtcCompileProgram(prog, int(opts.size()), opts.data());
  size_t size = 0;
  n.nvrtcGetProgramLogSize(prog, &size);
  std::string log(size, '\0');
  if (size) n.nvrtcGetProgramLog(prog, &log[0]);
  std::vector<uint8_t> cubin;
  if (r == NVRTC_SUCCESS && n.nvrtcGetCUBINSize(prog, &size) == NVRTC_SUCCESS) {
    cubin.resize(size);
    n.nvrtcGetCUBIN(prog, reinterpret_cast<char*>(cubin.data()));
  }
  n.nvrtcDestroyProgram(&prog);
  EXPECT_EQ(r, NVRTC_SUCCESS) << src.name << ":\n" << log;
  return cubin;
}

// The dump of `src` for `t` compiles alone, into the CUBIN the normal compile makes.
void expect_dump_recompiles_identically(const Source& src, const Target& t) {
  const auto compiler = make_compiler(t);
  const DumpHeader h{t.arch, compiler->version(), compiler->options(t), "test"};
  const Source dumped{src.name, full_source(src, h, true), src.entry};
  EXPECT_EQ(dumped.code.find("#include \""), std::string::npos) << "an include was left";
  const std::vector<uint8_t> alone = compile_alone(dumped, compiler->options(t));
  ASSERT_FALSE(alone.empty());
  const Binary normal = compiler->compile(src, t);
  if (alone == normal.image) return;  // byte for byte
  // NVRTC tags internal-linkage symbols with a per-compile id (..._cu_<hex>_<number>), so two
  // compiles of the very same source can differ in those bytes alone: then the kernel's SASS
  // must be the same.
  Binary other = normal;
  other.image = alone;
  const ResourceReport a = make_report(other, t, 0, 0), b = make_report(normal, t, 0, 0);
  ASSERT_TRUE(b.sass_available) << src.name << ": the CUBINs differ and there is no SASS to compare: " << b.sass_note;
  EXPECT_EQ(alone.size(), normal.image.size()) << src.name;
  EXPECT_EQ(a.sass, b.sass) << src.name << ": the inlined dump compiles to other SASS";
  std::printf("%s: CUBINs differ (NVRTC tags internal symbols per compile); kernel SASS of %zu bytes: %s\n", src.name.c_str(),
              b.sass.size(), a.sass == b.sass ? "identical" : "DIFFERENT");
}

GemmProblem problem() {
  GemmProblem p;
  p.n = 2560;
  p.k = 4096;
  return p;
}

TEST(FullSource, InlinedDumpOfADp4aKernelCompilesAloneToTheSameCubin) {
  const Target t = Target::from_arch("sm_80");
  const KernelSpec spec{problem(), heuristic_default(problem(), t, 16, Family::simt_dp4a), t.arch};
  expect_dump_recompiles_identically(emit(spec), t);
}

TEST(FullSource, InlinedDumpOfAnMmaSyncKernelCompilesAloneToTheSameCubin) {
  const Target t = Target::from_arch("sm_80");
  const KernelSpec spec{problem(), heuristic_default(problem(), t, 256, Family::mma_sync), t.arch};
  expect_dump_recompiles_identically(emit(spec), t);
}

TEST(FullSource, InlinedDumpOfTheUtilityModuleCompilesAloneToTheSameCubin) {
  expect_dump_recompiles_identically(emit_utility("sm_80"), Target::from_arch("sm_80"));
}

TEST(FullSource, EachTemplateIsInlinedOnceAndPragmaOnceIsDropped) {
  const Target t = Target::from_arch("sm_90a");
  const KernelSpec spec{problem(), heuristic_default(problem(), t, 256, Family::mma_sync), t.arch};
  const std::string text = inline_templates(emit(spec).code);
  for (const EmbeddedFile& f : embedded_templates()) {
    const std::string begin = std::string("// ==== begin \"") + f.path + "\"";
    const size_t first = text.find(begin);
    if (first != std::string::npos) {
      EXPECT_EQ(text.find(begin, first + 1), std::string::npos) << f.path;
    }
  }
  EXPECT_NE(text.find("// ==== begin \"mma_sync.cuh\""), std::string::npos);
  EXPECT_NE(text.find("// ==== begin \"i8g_args.h\""), std::string::npos);
  EXPECT_NE(text.find("is inlined above"), std::string::npos);  // epilogue_common.h includes i8g_args.h again
  EXPECT_FALSE(std::regex_search(text, std::regex(R"(#\s*pragma\s+once)")));
}

// "Each file once" is exact only because every template is include-once; a new template
// without #pragma once or a guard would be inlined at every include (still correct C++).
TEST(FullSource, EveryTemplateIsIncludeOnce) {
  for (const EmbeddedFile& f : embedded_templates()) {
    const std::string twice = std::string("#include \"") + f.path + "\"\n#include \"" + f.path + "\"\n";
    const std::string text = inline_templates(twice);
    EXPECT_NE(text.find("is inlined above"), std::string::npos) << f.path << " is not include-once";
  }
}

TEST(FullSource, OtherIncludesStayAndTheHeaderNamesTheOptions) {
  const Source src{"k", "#include <cuda_fp16.h>\n#include \"not_a_template.h\"\n__global__ void k() {}\n", "k"};
  const std::string text = full_source(src, {"sm_80", "nvrtc 13.0", {"--gpu-architecture=sm_80", "-Xptxas", "-v"}, "test"}, true);
  EXPECT_NE(text.find("#include <cuda_fp16.h>"), std::string::npos);
  EXPECT_NE(text.find("#include \"not_a_template.h\""), std::string::npos);
  EXPECT_NE(text.find("// options:  --gpu-architecture=sm_80 -Xptxas -v\n"), std::string::npos) << text;
  EXPECT_NE(text.find("// entry:    k "), std::string::npos) << text;
  EXPECT_EQ(text.rfind("// i8gemm kernel k\n", 0), 0u) << text;
}

TEST(FullSource, CompilerOptionsAreKnownBeforeCompilingAndAreTheOnesUsed) {
  for (const char* arch : {"sm_80", "sm_90a"}) {
    const Target t = Target::from_arch(arch);
    const auto compiler = make_compiler(t);
    EXPECT_EQ(compiler->options(t), compile_options(t)) << arch;
    EXPECT_EQ(compiler->compile(emit_utility(arch), t).options, compiler->options(t)) << arch;
  }
}

}  // namespace
}  // namespace i8g

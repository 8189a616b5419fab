// The AMD backend end to end on the CPU: hipRTC compiles the mfma family for gfx90a/gfx908,
// the report matches the code object's metadata, the ISA holds MFMAs, unsupported targets
// are refused (and a comgr abort stays in its child), and the cache keys HIP entries by arch
// and hipRTC version. Nothing here runs a kernel: no AMD GPU is lent.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <optional>
#include <regex>

#include "cache/cache.hpp"
#include "core/options.hpp"
#include "runtime/compile/amd_code_object.hpp"
#include "runtime/compile/hip_compiler.hpp"
#include "runtime/serve/jit.hpp"
#include "runtime/report/report.hpp"
#include "amd_test_support.hpp"

namespace i8g {
namespace {

ResourceReport report_for(const KernelSpec& spec, const Binary& b, const Target& t) {
  return make_report(b, t, int(launch_shape(spec, 1).block[0]), 0);
}

void expect_clean(const KernelSpec& spec, const CompileOutcome& o, const Target& t) {
  ASSERT_TRUE(o.binary) << spec.name() << ": " << o.error;
  const Binary& b = *o.binary;
  const ResourceReport r = report_for(spec, b, t);
  SCOPED_TRACE(spec.name() + "\n" + r.to_text());
  ASSERT_TRUE(r.amd.present);
  EXPECT_EQ(r.amd.vgpr_spills, 0);
  EXPECT_EQ(r.amd.sgpr_spills, 0);
  EXPECT_EQ(r.amd.scratch_bytes, 0);
  EXPECT_FALSE(r.amd.dynamic_stack);
  EXPECT_TRUE(r.consistent);
  EXPECT_EQ(r.amd.lds_bytes, spec.config.static_smem_bytes());
  EXPECT_GT(r.blocks_per_sm, 0);
  ASSERT_TRUE(r.sass_available) << r.sass_note;
  EXPECT_GT(r.amd.mfma, 0);
  EXPECT_NE(r.sass.find(spec.config.instr == 32 ? "v_mfma_i32_32x32x8i8" : "v_mfma_i32_16x16x16i8"), std::string::npos);
  EXPECT_EQ(r.sass.find("<unknown>"), std::string::npos);
}

TEST(AmdCompile, EveryTp4DefaultConfigCompilesForGfx90aWithoutSpills) {
  const Target t = Target::from_arch("gfx90a");
  std::vector<KernelSpec> specs;
  for (const GemmProblem& p : test::tp4_problems())
    for (const KernelSpec& s : test::default_specs(p, t)) specs.push_back(s);
  ASSERT_GE(specs.size(), 4u);
  std::vector<Source> sources;
  for (const KernelSpec& s : specs) sources.push_back(emit(s));
  const auto outcomes = compile_all(*make_compiler(t), sources, t, 2);
  for (size_t i = 0; i < specs.size(); ++i) expect_clean(specs[i], outcomes[i], t);
}

TEST(AmdCompile, EveryProblemOptionAndTailsCompileWithoutSpills) {
  const Target t = Target::from_arch("gfx90a");
  std::vector<KernelSpec> specs;
  GemmProblem p;
  p.n = 1000;  // N and K tails; K odd forces byte loads
  p.k = 1001;
  p.layout = WeightLayout::kn;
  p.act_scale = ActScale::per_tensor;
  p.weight_scale = WeightScale::per_tensor;
  p.out = OutType::f16;
  p.bias = true;
  p.asymmetric = true;
  specs.push_back({p, heuristic_default(p, t, 65), t.arch});
  p.k = 1000;  // 8-byte loads of [K,N]
  p.out = OutType::f32;
  p.asymmetric = false;
  specs.push_back({p, heuristic_default(p, t, 3072), t.arch});
  p.layout = WeightLayout::nk;
  p.out = OutType::i32;
  p.bias = false;
  specs.push_back({p, heuristic_default(p, t, 1), t.arch});
  std::vector<Source> sources;
  for (const KernelSpec& s : specs) sources.push_back(emit(s));
  const auto outcomes = compile_all(*make_compiler(t), sources, t, 2);
  for (size_t i = 0; i < specs.size(); ++i) expect_clean(specs[i], outcomes[i], t);
}

TEST(AmdCompile, Gfx908CompilesWithSeparateAgprs) {
  const Target t = Target::from_arch("gfx908");
  const GemmProblem p = test::tp4_problems()[0];
  const KernelSpec spec{p, heuristic_default(p, t, 4096), t.arch};
  CompileOutcome o;
  o.binary = make_compiler(t)->compile(emit(spec), t);
  expect_clean(spec, o, t);
}

TEST(AmdCompile, ReportMatchesMetadataReadByLlvmReadelf) {
  const Target t = Target::from_arch("gfx90a");
  const GemmProblem p = test::tp4_problems()[1];
  const KernelSpec spec{p, heuristic_default(p, t, 3072), t.arch};
  const Binary b = make_compiler(t)->compile(emit(spec), t);
  const ResourceReport r = report_for(spec, b, t);
  const auto f = test::readelf_kernel_fields(b.image, b.lowered_name);
  if (f.empty()) GTEST_SKIP() << "llvm-readelf-14 is not installed";
  EXPECT_EQ(f.at(".vgpr_count"), std::to_string(r.amd.vgprs));
  EXPECT_EQ(f.at(".agpr_count"), std::to_string(r.amd.agprs));
  EXPECT_EQ(f.at(".sgpr_count"), std::to_string(r.amd.sgprs));
  EXPECT_EQ(f.at(".group_segment_fixed_size"), std::to_string(r.amd.lds_bytes));
  EXPECT_EQ(f.at(".private_segment_fixed_size"), std::to_string(r.amd.scratch_bytes));
  EXPECT_EQ(f.at(".vgpr_spill_count"), std::to_string(r.amd.vgpr_spills));
  EXPECT_EQ(f.at(".sgpr_spill_count"), std::to_string(r.amd.sgpr_spills));
  EXPECT_EQ(f.at(".uses_dynamic_stack"), r.amd.dynamic_stack ? "true" : "false");
  EXPECT_EQ(f.at(".wavefront_size"), "64");
  EXPECT_EQ(f.at(".symbol"), b.lowered_name + ".kd");
  // The exact template symbol: Itanium mangling of the emitted instantiation.
  EXPECT_EQ(b.lowered_name.rfind("_ZN3i8g11mfma_kernelILi", 0), 0u) << b.lowered_name;
  EXPECT_EQ(r.symbol, b.lowered_name);
}

TEST(AmdCompile, F32EpilogueHasNoFusedMultiplyAdd) {
  const Target t = Target::from_arch("gfx90a");
  GemmProblem p = test::tp4_problems()[2];
  p.out = OutType::f32;
  p.bias = true;
  const KernelSpec spec{p, heuristic_default(p, t, 16), t.arch};
  const Binary b = make_compiler(t)->compile(emit(spec), t);
  const ResourceReport r = report_for(spec, b, t);
  ASSERT_TRUE(r.sass_available);
  for (const char* op : {"v_fma_f32", "v_fmac_f32", "v_mac_f32", "v_mad_f32", "v_pk_fma_f32"})
    EXPECT_EQ(r.sass.find(op), std::string::npos) << op << " would break the bit-exact epilogue";
  EXPECT_GT(r.instruction_mix.at("v_mul_f32_e32") + r.instruction_mix.count("v_mul_f32_e64"), 0);
}

TEST(HipCompiler, Gfx942IsRefusedWithAClearError) {
  Target t;
  t.arch = "gfx942";
  t.amd = true;
  try {
    make_compiler(t);
    ADD_FAILURE() << "gfx942 was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("gfx942 is not supported by this hipRTC (ROCm 5.2); supported: gfx908, gfx90a"),
              std::string::npos) << e.what();
  }
  EXPECT_THROW(Target::from_arch("gfx942"), Error);
  EXPECT_THROW(make_compiler(Target::from_arch("gfx90a"))->compile(emit({test::tp4_problems()[0],
      heuristic_default(test::tp4_problems()[0], Target::from_arch("gfx90a"), 1), "gfx90a"}), t), Error);
}

TEST(HipCompiler, ComgrAbortStaysInTheChildAndTheCallerSurvives) {
  const Target t = Target::from_arch("gfx90a");
  const GemmProblem p = test::tp4_problems()[3];
  const KernelSpec spec{p, heuristic_default(p, t, 1), t.arch};
  const pid_t me = getpid();
  try {
    hip_compile_isolated(emit(spec), "gfx942");  // no up-front refusal: comgr aborts
    ADD_FAILURE() << "gfx942 compiled";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("child process"), std::string::npos) << e.what();
  }
  EXPECT_EQ(getpid(), me);
  const Binary b = make_compiler(t)->compile(emit(spec), t);  // and the caller goes on
  EXPECT_FALSE(b.image.empty());
}

// Sets the hipRTC worker option for one scope (as I8GEMM_HIPRTC_WORKER would).
class ScopedWorker {
 public:
  explicit ScopedWorker(const std::string& path) : scope_(with(path)) {}

 private:
  static Options with(const std::string& path) {
    Options o = options();
    o.hiprtc_worker = path;
    return o;
  }
  ScopedOptions scope_;
};

TEST(HipCompiler, AMissingWorkerIsAClearErrorNamingTheOverride) {
  const Target t = Target::from_arch("gfx90a");
  const GemmProblem p = test::tp4_problems()[3];
  const KernelSpec spec{p, heuristic_default(p, t, 1), t.arch};
  ScopedWorker worker("/nonexistent/i8gemm_hiprtc_worker");
  try {
    hip_compile_isolated(emit(spec), "gfx90a");
    ADD_FAILURE() << "compiled without a worker";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("I8GEMM_HIPRTC_WORKER=/nonexistent/i8gemm_hiprtc_worker is not an executable"),
              std::string::npos) << e.what();
  }
}

TEST(HipCompiler, AWorkerThatAnswersWithoutTheHeaderIsRefused) {
  char dir[] = "/tmp/i8g_fake_worker_XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string fake = std::string(dir) + "/echo_worker";
  std::ofstream(fake) << "#!/bin/sh\ncat\n";  // answers with the request itself
  ASSERT_EQ(chmod(fake.c_str(), 0700), 0);
  const Target t = Target::from_arch("gfx90a");
  const GemmProblem p = test::tp4_problems()[3];
  const KernelSpec spec{p, heuristic_default(p, t, 1), t.arch};
  {
    ScopedWorker worker(fake);
    try {
      hip_compile_isolated(emit(spec), "gfx90a");
      ADD_FAILURE() << "a fake worker's answer was taken";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("without the expected header"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("child process " + fake), std::string::npos) << e.what();
    }
  }
  std::remove(fake.c_str());
  rmdir(dir);
  // And the real worker is found again without the override.
  EXPECT_FALSE(make_compiler(t)->compile(emit(spec), t).image.empty());
}

TEST(HipCompiler, CompileErrorsCarryTheWholeLog) {
  const Target t = Target::from_arch("gfx90a");
  const Source broken{"broken", "__global__ void broken_kernel(int* o) { o[0] = undeclared_one; }\n", "broken_kernel"};
  try {
    make_compiler(t)->compile(broken, t);
    ADD_FAILURE() << "compiled";
  } catch (const Error& e) {
    EXPECT_EQ(e.where(), "hiprtcCompileProgram");
    EXPECT_NE(e.message().find("undeclared_one"), std::string::npos) << e.message();
  }
}

TEST(HipCompiler, VersionNamesHipRtcAndComgr) {
  const std::string v = make_compiler(Target::from_arch("gfx90a"))->version();
  EXPECT_TRUE(std::regex_match(v, std::regex(R"(hiprtc \d+\.\d+\.\d+ comgr \d+\.\d+)"))) << v;
  EXPECT_EQ(v.rfind("hiprtc 5.2.", 0), 0u) << v;
}

TEST(AmdCache, HipEntriesAreKeyedByArchAndHipRtcVersion) {
  char dir[] = "/tmp/i8g_amd_cache_XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string path = std::string(dir) + "/c.sqlite";
  {
    cache::Cache c(path, cache::Cache::Mode::read_write);
    const Target t = Target::from_arch("gfx90a");
    const auto compiler = make_compiler(t);
    const GemmProblem p = test::tp4_problems()[3];
    const KernelSpec spec{p, heuristic_default(p, t, 1), t.arch};
    const auto first = compile_and_store(c, *compiler, {spec}, t, 1);
    ASSERT_EQ(first[0].status, JitOutcome::Status::compiled) << first[0].error;
    EXPECT_EQ(first[0].kernel.key.arch, "gfx90a");
    EXPECT_EQ(first[0].kernel.key.compiler_version, compiler->version());
    EXPECT_EQ(first[0].kernel.spill_bytes, 0);
    EXPECT_EQ(compile_and_store(c, *compiler, {spec}, t, 1)[0].status, JitOutcome::Status::cached);
    cache::BinaryKey other = binary_key(spec, *compiler);
    EXPECT_TRUE(c.get_kernel(other));
    other.compiler_version = "hiprtc 5.1.20531 comgr 2.4";
    EXPECT_FALSE(c.get_kernel(other)) << "another hipRTC must miss";
    other = binary_key(spec, *compiler);
    other.arch = "gfx908";
    EXPECT_FALSE(c.get_kernel(other)) << "another arch must miss";
    const auto stored = c.get_kernel(binary_key(spec, *compiler));
    const ResourceReport r = ResourceReport::from_json(nlohmann::json::parse(stored->report_json));
    EXPECT_TRUE(r.amd.present);
    EXPECT_GT(r.amd.mfma, 0);
    EXPECT_EQ(stored->isa, r.sass);
  }
  std::remove(path.c_str());
  std::remove((path + "-wal").c_str());
  std::remove((path + "-shm").c_str());
  rmdir(dir);
}

}  // namespace
}  // namespace i8g

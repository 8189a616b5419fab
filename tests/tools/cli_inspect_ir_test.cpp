// `inspect show --ir` and the IR half of `inspect audit`: AMD entries store LLVM IR that show
// prints and the audit reads with LLVM (15, in the hipRTC worker); NVIDIA entries show PTX;
// truncated or malformed IR in a cache is a finding, not a crash; a kernel whose private array
// survives into scratch is flagged by the IR audit and by the code-object audit alike.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cache/cache.hpp"
#include "cli_test_support.hpp"
#include "runtime/compile/compiler.hpp"
#include "runtime/report/report.hpp"

namespace i8g::clitest {
namespace {

#ifdef I8G_HAVE_LLVM_IR
using i8g::cache::Cache;

class CliInspectIr : public ::testing::Test {
 protected:
  Result run(const std::vector<std::string>& args) { return run_cli(args, RunOptions(dir_.default_cache()), dir_.path()); }
  // Two gfx90a mfma kernels of the smallest TP4 shape, compiled by this build.
  std::string amd_cache() {
    const std::string c = dir_.file("amd.sqlite");
    const Result r = run({"tune", "--compile-only", "--arch", "gfx90a", "--shape", "768x4096", "--filter",
                          "bm64_bn64_bk64_ins16_wm2_wn2_s1|bm64_bn64_bk64_ins32_wm2_wn1_s2", "-j", "2", "--cache", c});
    EXPECT_TRUE(r.ok()) << r.describe();
    return c;
  }
  TempDir dir_;
};

TEST_F(CliInspectIr, AmdEntriesStoreLlvmIrThatShowPrintsAndTheAuditReadsCleanly) {
  const std::string c = amd_cache();
  const auto rows = Cache(c, Cache::Mode::read_only).list_kernels({"mfma", true});
  ASSERT_EQ(rows.size(), 2u);
  for (const auto& k : rows) {
    ASSERT_EQ(k.ir.rfind("; ModuleID", 0), 0u) << k.log;
    const Result ir = run({"inspect", "show", k.key.name, "--ir", "--cache", c});
    ASSERT_TRUE(ir.ok()) << ir.describe();
    EXPECT_EQ(ir.out, k.ir);
    const Result j = run({"inspect", "show", k.key.name, "--ir", "--json", "--cache", c});
    ASSERT_TRUE(j.ok()) << j.describe();
    const nlohmann::json doc = nlohmann::json::parse(j.out);
    EXPECT_EQ(doc["schema"], "i8gemm/inspect-show-ir");
    EXPECT_EQ(doc["ir_kind"], "llvm");
    const Result show = run({"inspect", "show", k.key.name, "--cache", c});
    EXPECT_NE(show.out.find("== LLVM IR ==\n; ModuleID"), std::string::npos);
  }
  const Result audit = run({"inspect", "audit", "--cache", c});
  EXPECT_TRUE(audit.ok()) << audit.describe();
  EXPECT_EQ(audit.out.find("IR:"), std::string::npos) << audit.out;
  EXPECT_EQ(audit.out.find("IR unreadable"), std::string::npos) << audit.out;
}

TEST_F(CliInspectIr, TruncatedOrMalformedIrInACacheIsAFindingAndTheAuditGoesOn) {
  const std::string c = amd_cache();
  const auto rows = Cache(c, Cache::Mode::read_only).list_kernels({"mfma", false});
  ASSERT_EQ(rows.size(), 2u);
  exec_sql(c, "UPDATE kernels SET ir = substr(ir, 1, length(ir) / 2) WHERE id = " + std::to_string(rows[0].id));
  exec_sql(c, "UPDATE kernels SET ir = CAST(X'4243C0DE00FF0A0D' AS TEXT) WHERE id = " + std::to_string(rows[1].id));
  const Result audit = run({"inspect", "audit", "--cache", c});
  ASSERT_TRUE(audit.failed_cleanly()) << audit.describe();
  for (const auto& k : rows) {
    const std::string line = "error    " + k.key.name + ": IR unreadable";
    EXPECT_NE(audit.out.find(line), std::string::npos) << audit.out;
  }
  EXPECT_NE(audit.out.find("audited 2 kernels"), std::string::npos) << audit.out;
  const Result json = run({"inspect", "audit", "--json", "--cache", c});
  ASSERT_TRUE(json.failed_cleanly()) << json.describe();
  EXPECT_NO_THROW((void)nlohmann::json::parse(json.out));
  const Result show = run({"inspect", "show", rows[0].key.name, "--ir", "--cache", c});
  EXPECT_TRUE(show.ok()) << show.describe();  // the stored text, as it is
}

TEST_F(CliInspectIr, APrivateArrayIsFlaggedByTheIrAuditAndTheCodeObjectAuditAlike) {
  // Test-only: a dynamically indexed private array too big for LDS stays in scratch.
  Source src;
  src.name = "i8g_test_private_array";
  src.entry = "private_array<1024>";
  src.code = "template <int N>\n__global__ void __launch_bounds__(256) private_array(int* out, int i) {\n"
             "  int buf[N];\n  for (int j = 0; j < N; ++j) buf[j] = out[j] * j;\n"
             "  out[threadIdx.x] = buf[(i + threadIdx.x) % N];\n}\n"
             "template __global__ void private_array<1024>(int*, int);\n";
  const Target t = Target::from_arch("gfx90a");
  const auto compiler = make_compiler(t);
  const Binary b = compiler->compile(src, t);
  const ResourceReport r = make_report(b, t, 256, 0);
  cache::StoredKernel k;
  k.key = {src.name, t.arch, compiler->version(), "test-only", cache::options_hash(b.options)};
  k.family = "test";
  k.source = src.code;
  k.entry = src.entry;
  k.lowered_name = b.lowered_name;
  k.options = b.options;
  k.binary = b.image;
  k.binary_sha256 = cache::sha256_hex(b.image.data(), b.image.size());
  k.ir = b.ir;
  k.log = b.log;
  k.isa = r.sass;
  k.report_json = r.to_json().dump();
  const std::string c = dir_.file("private.sqlite");
  Cache(c, Cache::Mode::read_write).put_kernel(k);
  const Result audit = run({"inspect", "audit", "--cache", c});
  ASSERT_TRUE(audit.failed_cleanly()) << audit.describe();
  EXPECT_NE(audit.out.find("reject   " + src.name + ": uses "), std::string::npos) << audit.out;  // scratch
  EXPECT_NE(audit.out.find("B of scratch per lane"), std::string::npos) << audit.out;
  EXPECT_NE(audit.out.find("reject   " + src.name + ": IR: private memory survives: alloca [1024 x i32]"),
            std::string::npos) << audit.out;
}
#endif

TEST(CliInspectIrNvidia, ShowIrPrintsPtxForNvidiaEntries) {
  TempDir dir;
  const std::string c = dir.file("nv.sqlite");
  const RunOptions o(dir.default_cache());
  const Result tune = run_cli({"tune", "--compile-only", "--arch", "sm_80", "--shape", "256x512", "--filter",
                               "simt_dp4a.*bm16_bn64_", "-j", "2", "--cache", c}, o, dir.path());
  ASSERT_TRUE(tune.ok()) << tune.describe();
  const auto rows = cache::Cache(c, cache::Cache::Mode::read_only).list_kernels({"simt_dp4a", false});
  ASSERT_FALSE(rows.empty());
  const Result ir = run_cli({"inspect", "show", rows[0].key.name, "--ir", "--cache", c}, o, dir.path());
  ASSERT_TRUE(ir.ok()) << ir.describe();
  EXPECT_NE(ir.out.find(".version"), std::string::npos);
  EXPECT_NE(ir.out.find(".entry"), std::string::npos);
  const Result missing = run_cli({"inspect", "show", "no_such_kernel", "--ir", "--cache", c}, o, dir.path());
  EXPECT_TRUE(missing.failed_cleanly()) << missing.describe();
}

}  // namespace
}  // namespace i8g::clitest

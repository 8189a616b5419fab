// Prepare's JIT (prepare_policy, which Engine::load_all and fetch_or_compile use): the report comes
// from the ptxas log and the CUBIN without spawning nvdisasm, and a batch compiles in parallel
// with the results a serial batch gives, in request order, a failure staying that kernel's own.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "cache/cache.hpp"
#include "core/options.hpp"
#include "generator/generator.hpp"
#include "runtime/report/report.hpp"
#include "runtime/serve/jit.hpp"
#include "tests/runtime/runtime_test_support.hpp"
#include "tests/runtime/serve/jit_test_support.hpp"
#include "tests/support/files.hpp"

namespace i8g {
namespace {

using testsupport::TempDir;

// An nvdisasm stand-in, named as I8GEMM_NVDISASM would name it, that only leaves a mark: whether
// anything spawned it. It fails, so a report that ran it has no SASS either way.
class SpawnMarker {
 public:
  SpawnMarker() : scope_(with_tool(dir_.file("nvdisasm"))) {
    testsupport::write_bytes(dir_.file("nvdisasm"), "#!/bin/sh\necho spawned >> " + mark() + "\nexit 3\n");
    chmod(dir_.file("nvdisasm").c_str(), 0755);
  }
  std::string mark() const { return dir_.file("spawned"); }
  bool spawned() const {
    struct stat st;
    return stat(mark().c_str(), &st) == 0;
  }

 private:
  static Options with_tool(const std::string& path) {
    Options o = options();
    o.nvdisasm = path;
    return o;
  }
  TempDir dir_;
  ScopedOptions scope_;
};

ResourceReport report_of(const cache::StoredKernel& k) {
  return ResourceReport::from_json(nlohmann::json::parse(k.report_json));
}

using test::dp4a_request;

TEST(PrepareJit, SkippingSassKeepsEverythingTheLogAndCubinSay) {
  SpawnMarker tool;
  const Target t = Target::from_arch("sm_86");
  const Binary& b = test::compiled(test::spill_source(), "sm_86");
  const ResourceReport skipped = make_report(b, t, 128, 512, Sass::skip);
  EXPECT_FALSE(tool.spawned()) << "Sass::skip ran the disassembler";
  EXPECT_FALSE(skipped.sass_available);
  EXPECT_EQ(skipped.sass_note, kSassSkipped);
  EXPECT_GT(skipped.spill_store_bytes, 0) << "the spills come from the ptxas log, no disassembly needed";
  EXPECT_GT(skipped.stack_frame_bytes, 0);
  EXPECT_TRUE(skipped.consistent) << fmt::format("{}", fmt::join(skipped.notes, "; "));
  ResourceReport full = make_report(b, t, 128, 512, Sass::disassemble);
  EXPECT_TRUE(tool.spawned()) << "the stand-in is what a disassembling report runs";
  // Apart from the SASS fields, the two reports are the same.
  full.sass_note = skipped.sass_note;
  EXPECT_EQ(full.to_json(), skipped.to_json());
}

TEST(PrepareJit, AddSassDisassemblesAReportStoredWithout) {
  SpawnMarker tool;
  ResourceReport r = make_report(test::compiled(test::plain_source(), "sm_80"), Target::from_arch("sm_80"), 64, 0,
                                 Sass::skip);
  ASSERT_FALSE(tool.spawned());
  add_sass(r, test::compiled(test::plain_source(), "sm_80").image);
  EXPECT_TRUE(tool.spawned());
  EXPECT_NE(r.sass_note, kSassSkipped) << "the note now says why the stand-in gave no SASS";
}

TEST(PrepareJit, PreparesBatchAndSingleFetchSpawnNoHelperWhileTunesDoes) {
  SpawnMarker tool;
  TempDir dir;
  cache::Cache c(dir.file("c.sqlite"), cache::Cache::Mode::read_write);
  const Target t = Target::from_arch("sm_80");
  const auto compiler = make_compiler(t);
  const std::vector<JitRequest> batch = {dp4a_request(t, 256), {emit_utility(t.arch), std::nullopt}};
  for (const JitOutcome& o : fetch_or_compile_all(&c, *compiler, batch, t, prepare_policy())) {
    ASSERT_EQ(o.status, JitOutcome::Status::compiled) << o.name << ": " << o.error;
    EXPECT_GT(o.kernel.id, 0) << o.name << " was not stored";
    EXPECT_TRUE(o.kernel.isa.empty());
    const ResourceReport rep = report_of(o.kernel);
    EXPECT_EQ(rep.sass_note, kSassSkipped) << o.name;
    EXPECT_GT(rep.registers, 0) << o.name;
    EXPECT_EQ(rep.registers, rep.elf_registers) << o.name;
  }
  const cache::StoredKernel single = fetch_or_compile(nullptr, *compiler, emit(*dp4a_request(t, 512).spec),
                                                      dp4a_request(t, 512).spec, t);
  EXPECT_EQ(report_of(single).sass_note, kSassSkipped);
  EXPECT_FALSE(tool.spawned()) << "prepare's JIT spawned nvdisasm";
  // Tune's batch disassembles (the stand-in runs): the check above can fail.
  const auto tuned = compile_and_store(c, *compiler, {*dp4a_request(t, 768).spec}, t, 1);
  ASSERT_EQ(tuned[0].status, JitOutcome::Status::compiled) << tuned[0].error;
  EXPECT_TRUE(tool.spawned());
}

// A kernel prepare stored without SASS gets it when a tune finds it in a writable cache (once; the
// SASS is then the cache's and is not replaced); a read-only cache keeps the note.
TEST(PrepareJit, ATuneFillsInTheSassPrepareLeftOut) {
  TempDir dir;
  const Target t = Target::from_arch("sm_80");
  const auto compiler = make_compiler(t);
  if (!make_report(test::compiled(test::plain_source(), "sm_80"), t, 64, 0).sass_available)
    GTEST_SKIP() << "no nvdisasm here (I8GEMM_NVDISASM)";
  const JitRequest req = dp4a_request(t, 256);
  const std::string path = dir.file("c.sqlite");
  int64_t id = 0;
  {
    cache::Cache c(path, cache::Cache::Mode::read_write);
    const JitOutcome prepared = fetch_or_compile_all(&c, *compiler, {req}, t, prepare_policy())[0];
    ASSERT_EQ(prepared.status, JitOutcome::Status::compiled) << prepared.error;
    id = prepared.kernel.id;
  }
  {  // read-only: found, served, left as it was
    cache::Cache ro(path, cache::Cache::Mode::read_only);
    const JitOutcome o = compile_and_store(ro, *compiler, {*req.spec}, t, 1)[0];
    ASSERT_EQ(o.status, JitOutcome::Status::cached);
    EXPECT_TRUE(o.kernel.isa.empty());
    EXPECT_EQ(report_of(o.kernel).sass_note, kSassSkipped);
  }
  cache::Cache c(path, cache::Cache::Mode::read_write);
  const JitOutcome tuned = compile_and_store(c, *compiler, {*req.spec}, t, 1)[0];
  ASSERT_EQ(tuned.status, JitOutcome::Status::cached);
  EXPECT_EQ(tuned.kernel.id, id);
  EXPECT_NE(tuned.kernel.isa.find("IDP"), std::string::npos) << "a dp4a kernel's SASS has IDP.4A";
  const std::optional<cache::StoredKernel> stored = c.get_kernel(id);
  ASSERT_TRUE(stored);
  EXPECT_EQ(stored->isa, tuned.kernel.isa);
  const ResourceReport rep = report_of(*stored);
  EXPECT_TRUE(rep.sass_available);
  EXPECT_NE(rep.sass_note, kSassSkipped);
  EXPECT_GT(rep.instruction_mix.count("IDP"), 0u);
  // Stored SASS is never replaced.
  EXPECT_FALSE(c.add_sass(id, "other", "{}"));
  EXPECT_EQ(c.get_kernel(id)->isa, tuned.kernel.isa);
}

TEST(PrepareJit, AParallelBatchGivesTheSerialResultsInRequestOrder) {
  TempDir dir;
  const Target t = Target::from_arch("sm_80");
  const auto compiler = make_compiler(t);
  std::vector<JitRequest> batch;
  for (int64_t n : {256, 512, 768, 1024, 1280}) batch.push_back(dp4a_request(t, n));
  Source broken = test::broken_source();
  broken.name = "i8g_test_broken";
  batch.insert(batch.begin() + 2, JitRequest{broken, std::nullopt});
  batch.push_back({emit_utility(t.arch), std::nullopt});
  auto run = [&](const std::string& file, int threads) {
    cache::Cache c(dir.file(file), cache::Cache::Mode::read_write);
    JitPolicy policy = prepare_policy();
    policy.threads = threads;
    return fetch_or_compile_all(&c, *compiler, batch, t, policy);
  };
  const std::vector<JitOutcome> serial = run("serial.sqlite", 1), parallel = run("parallel.sqlite", 4);
  ASSERT_EQ(parallel.size(), batch.size());
  ASSERT_EQ(serial.size(), batch.size());
  for (size_t i = 0; i < batch.size(); ++i) {
    SCOPED_TRACE(batch[i].source.name);
    EXPECT_EQ(parallel[i].name, batch[i].source.name);
    EXPECT_EQ(parallel[i].status, serial[i].status);
    if (i == 2) {
      EXPECT_EQ(parallel[i].status, JitOutcome::Status::failed);
      EXPECT_NE(parallel[i].error.find("error"), std::string::npos) << "the compiler log: " << parallel[i].error;
      EXPECT_EQ(parallel[i].error, serial[i].error);
      continue;
    }
    ASSERT_EQ(parallel[i].status, JitOutcome::Status::compiled) << parallel[i].error;
    EXPECT_TRUE(parallel[i].error.empty());
    EXPECT_EQ(parallel[i].kernel.key, serial[i].kernel.key);
    EXPECT_EQ(parallel[i].kernel.binary_sha256, serial[i].kernel.binary_sha256);
    EXPECT_EQ(parallel[i].kernel.lowered_name, serial[i].kernel.lowered_name);
    EXPECT_EQ(parallel[i].kernel.report_json, serial[i].kernel.report_json);
    if (batch[i].spec) {
      EXPECT_EQ(parallel[i].spec, *batch[i].spec);
    }
  }
}

}  // namespace
}  // namespace i8g

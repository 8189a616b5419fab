// Emit -> compile -> store without a GPU: binaries are keyed by their compile options, a source
// override is compiled under its own key (never served as the generated kernel, never
// silently), and the utility module is stored with a real report.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <nlohmann/json.hpp>

#include "cache/cache.hpp"
#include "core/options.hpp"
#include "generator/generator.hpp"
#include "runtime/report/report.hpp"
#include "runtime/serve/jit.hpp"
#include "tests/support/files.hpp"
#include "tests/support/read_only.hpp"

namespace i8g {
namespace {

using testsupport::TempDir;
using testsupport::write_bytes;

KernelSpec dp4a_spec(const Target& t) {
  GemmProblem p;
  p.n = 256;
  p.k = 512;
  return {p, heuristic_default(p, t, 16, Family::simt_dp4a), t.arch};
}

Options with_override_dir(const std::string& dir) {
  Options o = options();
  o.source_override_dir = dir;
  return o;
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(Jit, BinariesAreKeyedByTheCompileOptions) {
  TempDir dir;
  cache::Cache c(dir.file("c.sqlite"), cache::Cache::Mode::read_write);
  const Target t = Target::from_arch("sm_80");
  const auto compiler = make_compiler(t);
  const KernelSpec spec = dp4a_spec(t);
  const auto first = compile_and_store(c, *compiler, {spec}, t, 1);
  ASSERT_EQ(first[0].status, JitOutcome::Status::compiled) << first[0].error;
  EXPECT_EQ(first[0].kernel.key.options_hash, cache::options_hash(compiler->options(t)));
  EXPECT_EQ(first[0].kernel.key.options_hash, cache::options_hash(first[0].kernel.options));
  EXPECT_EQ(first[0].kernel.key, binary_key(spec, *compiler));
  EXPECT_EQ(compile_and_store(c, *compiler, {spec}, t, 1)[0].status, JitOutcome::Status::cached);
  cache::BinaryKey other_flags = binary_key(spec, *compiler);
  other_flags.options_hash = cache::options_hash({"--gpu-architecture=sm_80", "--use_fast_math"});
  EXPECT_FALSE(c.get_kernel(other_flags));
}

// An interrupted batch keeps what finished: each kernel is in the cache by the time the
// progress callback counts it, not only when the whole batch is done.
TEST(Jit, EachKernelIsStoredAsSoonAsItHasCompiled) {
  TempDir dir;
  cache::Cache c(dir.file("c.sqlite"), cache::Cache::Mode::read_write);
  const Target t = Target::from_arch("sm_80");
  const auto compiler = make_compiler(t);
  std::vector<KernelSpec> specs;
  for (int64_t n : {256, 512, 768}) {
    GemmProblem p;
    p.n = n;
    p.k = 512;
    specs.push_back({p, heuristic_default(p, t, 16, Family::simt_dp4a), t.arch});
  }
  std::vector<std::pair<size_t, size_t>> seen;  // (done, kernels in the cache then)
  const auto out = compile_and_store(c, *compiler, specs, t, 2,
                                     [&](size_t done, size_t) { seen.emplace_back(done, c.list_kernels().size()); });
  for (const JitOutcome& o : out) EXPECT_EQ(o.status, JitOutcome::Status::compiled) << o.error;
  ASSERT_EQ(seen.size(), 4u) << "one call for the cached count (0), then one per kernel";
  for (const auto& [done, stored] : seen) EXPECT_EQ(stored, done) << "after " << done << " done";
}

TEST(Jit, ASourceOverrideIsCompiledUnderItsOwnKeyAndNeverServedAsTheGeneratedKernel) {
  TempDir dir;
  cache::Cache c(dir.file("c.sqlite"), cache::Cache::Mode::read_write);
  const Target t = Target::from_arch("sm_80");
  const auto compiler = make_compiler(t);
  const KernelSpec spec = dp4a_spec(t);
  const std::string name = spec.name();
  const std::string edited = emit(spec).code + "// edited by hand\n";
  ASSERT_EQ(mkdir(dir.file("src").c_str(), 0700), 0);
  write_bytes(dir.file("src/" + name + ".cu"), edited);

  JitOutcome over;
  {
    ScopedOptions scope(with_override_dir(dir.file("src")));
    testing::internal::CaptureStderr();
    over = compile_and_store(c, *compiler, {spec}, t, 1)[0];
    EXPECT_EQ(compile_and_store(c, *compiler, {spec}, t, 1)[0].status, JitOutcome::Status::cached);
    const std::string err = testing::internal::GetCapturedStderr();
    EXPECT_EQ(count(err, name + " is compiled from the source override"), 1u) << "once per kernel:\n" << err;
  }
  ASSERT_EQ(over.status, JitOutcome::Status::compiled) << over.error;
  EXPECT_TRUE(cache::is_override(over.kernel.key.generator_hash)) << over.kernel.key.generator_hash;
  EXPECT_EQ(over.kernel.key.name, name);
  EXPECT_EQ(over.kernel.source, edited);
  const ResourceReport rep = ResourceReport::from_json(nlohmann::json::parse(over.kernel.report_json));
  bool noted = false;
  for (const auto& n : rep.notes) noted |= n.find("source override: compiled from " + dir.file("src/")) == 0;
  EXPECT_TRUE(noted) << over.kernel.report_json;

  // Without the override, the generated kernel's key misses the override's entry.
  EXPECT_FALSE(c.get_kernel(binary_key(spec, *compiler)));
  const JitOutcome generated = compile_and_store(c, *compiler, {spec}, t, 1)[0];
  ASSERT_EQ(generated.status, JitOutcome::Status::compiled) << generated.error;
  EXPECT_EQ(generated.kernel.source, emit(spec).code);
  EXPECT_NE(generated.kernel.id, over.kernel.id);

  // An edited override is another entry again.
  write_bytes(dir.file("src/" + name + ".cu"), edited + "// and again\n");
  ScopedOptions scope(with_override_dir(dir.file("src")));
  EXPECT_EQ(compile_and_store(c, *compiler, {spec}, t, 1)[0].status, JitOutcome::Status::compiled);
  EXPECT_EQ(c.list_kernels().size(), 3u);
}

TEST(Jit, AnOverrideDirectoryWithoutTheKernelLeavesItGenerated) {
  TempDir dir;
  ScopedOptions scope(with_override_dir(dir.path()));
  const KernelSource ks = with_override(emit(dp4a_spec(Target::from_arch("sm_80"))));
  EXPECT_FALSE(ks.overridden());
  EXPECT_EQ(source_origin_hash(ks), generator_hash());
}

TEST(Jit, AnUnreadableOverrideIsAnErrorNotTheGeneratedSource) {
  TempDir dir;
  const Source src = emit(dp4a_spec(Target::from_arch("sm_80")));
  ASSERT_EQ(mkdir(dir.file(src.name + ".cu").c_str(), 0700), 0);  // a directory where the file goes
  ScopedOptions scope(with_override_dir(dir.path()));
  try {
    with_override(src);
    ADD_FAILURE() << "a directory was taken as the override";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::invalid_argument);
    EXPECT_NE(std::string(e.what()).find(src.name + ".cu"), std::string::npos) << e.what();
  }
}

TEST(Jit, TheUtilityModuleIsStoredWithARealReport) {
  TempDir dir;
  cache::Cache c(dir.file("c.sqlite"), cache::Cache::Mode::read_write);
  const Target t = Target::from_arch("sm_80");
  const auto compiler = make_compiler(t);
  const cache::StoredKernel k = fetch_or_compile(&c, *compiler, emit_utility(t.arch), std::nullopt, t);
  EXPECT_EQ(k.family, "utility");
  ASSERT_FALSE(k.report_json.empty());
  const ResourceReport rep = ResourceReport::from_json(nlohmann::json::parse(k.report_json));
  EXPECT_EQ(rep.symbol, "i8g_colsum_nk");
  EXPECT_GT(rep.registers, 0);
  EXPECT_TRUE(rep.consistent) << k.report_json;
  EXPECT_EQ(k.registers, rep.registers);
  EXPECT_GE(k.smem_bytes, 0);
  EXPECT_GT(k.occupancy, 0);
  EXPECT_FALSE(k.key.options_hash.empty());
  const cache::StoredKernel again = fetch_or_compile(&c, *compiler, emit_utility(t.arch), std::nullopt, t);
  EXPECT_EQ(again.id, k.id);
}

// Prepare's cache where this process cannot write it: opened read-only with one warning, its
// kernels served from it, and a kernel it lacks compiled but not stored.
TEST(Jit, AnUnwritableCacheServesItsKernelsReadOnlyAndStoresNothing) {
  TempDir dir;
  const std::string path = dir.file("c.sqlite");
  const Target t = Target::from_arch("sm_80");
  const auto compiler = make_compiler(t);
  int64_t stored_id = 0;
  {
    cache::Cache c(path, cache::Cache::Mode::read_write);
    stored_id = fetch_or_compile(&c, *compiler, emit_utility(t.arch), std::nullopt, t).id;
  }
  const std::string failed = testsupport::as_read_only_user(dir.path(), path, [&]() -> std::string {
    std::string warned;
    const std::unique_ptr<cache::Cache> c = open_cache_or_warn(path, warned);
    if (!c) return "no cache: " + warned;
    if (c->mode() != cache::Cache::Mode::read_only) return "not opened read-only";
    if (warned.find("read-only") == std::string::npos) return "no warning that it is read-only: " + warned;
    if (fetch_or_compile(c.get(), *compiler, emit_utility(t.arch), std::nullopt, t).id != stored_id)
      return "the stored utility module was not served from the cache";
    const Target other = Target::from_arch("sm_75");
    const cache::StoredKernel k = fetch_or_compile(c.get(), *make_compiler(other), emit_utility(other.arch),
                                                   std::nullopt, other);
    if (k.binary.empty()) return "the missing module was not compiled";
    if (c->list_kernels().size() != 1) return "something was stored in a read-only cache";
    return "";
  });
  EXPECT_EQ(failed, "");
}

// A cache other users can write is not served from (its binaries would run in this process),
// unless I8GEMM_ALLOW_SHARED_CACHE=1 says so.
TEST(Jit, ACacheOthersCanWriteIsNotUsedUnlessAllowed) {
  TempDir dir;
  const std::string path = dir.file("c.sqlite");
  { cache::Cache c(path, cache::Cache::Mode::read_write); }
  ASSERT_EQ(chmod(path.c_str(), 0666), 0);
  std::string warned;
  EXPECT_EQ(open_cache_or_warn(path, warned), nullptr);
  EXPECT_NE(warned.find("I8GEMM_ALLOW_SHARED_CACHE"), std::string::npos) << warned;
  Options o = Options::from_environment();
  o.allow_shared_cache = true;
  ScopedOptions allow(o);
  std::string warned_again;
  EXPECT_NE(open_cache_or_warn(path, warned_again), nullptr) << warned_again;
}

}  // namespace
}  // namespace i8g

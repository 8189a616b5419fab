// serving_compiler: strict serving in a process without NVRTC. The stand-in carries the cache's
// compiler version, so the binaries a full toolchain stored are found under their own keys, and
// nothing is compiled; without strict mode, or with no or several versions in the cache, the
// missing compiler is a clear error.
#include <gtest/gtest.h>

#include "cache/cache.hpp"
#include "generator/generator.hpp"
#include "runtime/serve/jit.hpp"
#include "tests/runtime/serve/jit_test_support.hpp"
#include "tests/support/files.hpp"

namespace i8g {
namespace {

using testsupport::TempDir;

// A process whose NVRTC cannot be loaded: make_compiler's, whose first use says so.
class NoNvrtc final : public Compiler {
 public:
  Binary compile(const Source&, const Target&) const override { throw missing(); }
  std::string version() const override { throw missing(); }
  std::vector<std::string> options(const Target& t) const override { return compile_options(t); }

 private:
  static Error missing() { return Error(ErrorKind::unsupported, "nvrtc", "NVRTC not found (tried: nowhere)"); }
};
std::unique_ptr<Compiler> no_nvrtc(const Target&) { return std::make_unique<NoNvrtc>(); }

using test::dp4a_request;

std::string what(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return std::string(to_string(e.kind())) + ": " + e.message();
  }
  return "no error";
}

TEST(ServingCompiler, StrictWithoutNvrtcServesWhatTheCacheHoldsUnderItsOwnKeys) {
  TempDir dir;
  const Target t = Target::from_arch("sm_80");
  cache::Cache c(dir.file("c.sqlite"), cache::Cache::Mode::read_write);
  const std::unique_ptr<Compiler> real = make_compiler(t);
  const JitRequest stored = dp4a_request(t, 256), absent = dp4a_request(t, 384);
  ASSERT_EQ(fetch_or_compile_all(&c, *real, {stored}, t, prepare_policy())[0].status, JitOutcome::Status::compiled);

  const std::unique_ptr<Compiler> standin = serving_compiler(t, /*strict=*/true, &c, no_nvrtc);
  EXPECT_EQ(standin->version(), real->version());
  const std::optional<cache::StoredKernel> hit = fetch_cached(&c, *standin, stored.source, t);
  ASSERT_TRUE(hit) << "the stand-in's key must be the one the binary was stored under";
  EXPECT_EQ(hit->key.compiler_version, real->version());
  EXPECT_FALSE(fetch_cached(&c, *standin, absent.source, t));
  const std::string e = what([&] { standin->compile(absent.source, t); });
  EXPECT_NE(e.find(to_string(ErrorKind::not_in_cache)), std::string::npos) << e;
  EXPECT_NE(e.find(absent.source.name), std::string::npos) << e;
  EXPECT_NE(e.find("NVRTC not found"), std::string::npos) << e;

  // With NVRTC present nothing changes: the real compiler.
  EXPECT_EQ(serving_compiler(t, true, &c)->version(), real->version());

  // Binaries of two compilers for this arch: which one a process without NVRTC would have been
  // tuned with is not knowable, so it is refused, naming both.
  std::optional<cache::StoredKernel> copy = c.get_kernel(hit->key);
  ASSERT_TRUE(copy);
  copy->key.compiler_version = "nvrtc 12.9";
  c.put_kernel(*copy);
  const std::string several = what([&] { serving_compiler(t, true, &c, no_nvrtc); });
  EXPECT_NE(several.find("several compilers"), std::string::npos) << several;
  EXPECT_NE(several.find("nvrtc 12.9"), std::string::npos) << several;
  EXPECT_NE(several.find(real->version()), std::string::npos) << several;
}

TEST(ServingCompiler, WithoutNvrtcEverythingElseIsAClearError) {
  TempDir dir;
  const Target t = Target::from_arch("sm_80");
  cache::Cache c(dir.file("c.sqlite"), cache::Cache::Mode::read_write);
  // Not strict: prepare would compile, so the missing NVRTC is the error.
  std::string e = what([&] { serving_compiler(t, false, &c, no_nvrtc); });
  EXPECT_EQ(e.rfind(std::string(to_string(ErrorKind::unsupported)) + ": NVRTC not found", 0), 0u) << e;
  // Strict, and the cache holds nothing for this arch (nor does a missing cache).
  e = what([&] { serving_compiler(t, true, &c, no_nvrtc); });
  EXPECT_NE(e.find(to_string(ErrorKind::not_in_cache)), std::string::npos) << e;
  EXPECT_NE(e.find("holds no binaries for sm_80"), std::string::npos) << e;
  EXPECT_NE(e.find("NVRTC not found"), std::string::npos) << e;
  e = what([&] { serving_compiler(t, true, nullptr, no_nvrtc); });
  EXPECT_NE(e.find("no cache is open"), std::string::npos) << e;
  // A binary for another arch does not count.
  const Target other = Target::from_arch("sm_86");
  ASSERT_EQ(fetch_or_compile_all(&c, *make_compiler(other), {dp4a_request(other, 256)}, other, prepare_policy())[0].status,
            JitOutcome::Status::compiled);
  e = what([&] { serving_compiler(t, true, &c, no_nvrtc); });
  EXPECT_NE(e.find("holds no binaries for sm_80"), std::string::npos) << e;
}

}  // namespace
}  // namespace i8g

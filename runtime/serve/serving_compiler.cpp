// The compiler prepare keys its cache lookups with and compiles with. Normally the toolkit's
// (NVRTC / hipRTC). In strict mode a serving process may have no NVRTC at all: it compiles
// nothing, but a binary's cache key still holds the compiler version that made it, so a
// stand-in carries the one version the cache's binaries for this arch were made with.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <set>

#include "runtime/serve/jit.hpp"

namespace i8g {
namespace {

class CachedOnlyCompiler final : public Compiler {
 public:
  CachedOnlyCompiler(std::string version, std::string why) : version_(std::move(version)), why_(std::move(why)) {}
  Binary compile(const Source& src, const Target& target) const override {
    throw Error(ErrorKind::not_in_cache, "i8gemm_prepare",
                fmt::format("strict mode without a compiler: {} for {} is not in the cache ({})", src.name,
                            target.arch, why_));
  }
  std::string version() const override { return version_; }
  std::vector<std::string> options(const Target& target) const override { return compile_options(target); }

 private:
  std::string version_, why_;
};

}  // namespace

std::unique_ptr<Compiler> serving_compiler(const Target& target, bool strict, cache::Cache* c,
                                           const CompilerFactory& make) {
  std::unique_ptr<Compiler> compiler = make(target);
  try {
    compiler->version();  // loads NVRTC (hipRTC starts its helper) or says why it cannot
    return compiler;
  } catch (const Error& e) {
    if (!strict || e.kind() != ErrorKind::unsupported) throw;
    std::set<std::string> versions;
    if (c)
      for (const cache::StoredKernel& k : c->list_kernels())
        if (k.key.arch == target.arch) versions.insert(k.key.compiler_version);
    if (versions.size() == 1) return std::make_unique<CachedOnlyCompiler>(*versions.begin(), e.message());
    const std::string held =
        versions.empty() ? fmt::format("{} holds no binaries for {}", c ? c->path() : "no cache is open: it", target.arch)
                         : fmt::format("{} holds {} binaries from several compilers ({}), so which to serve is "
                                       "ambiguous; keep one (i8gemm cache gc with that compiler)",
                                       c->path(), target.arch, fmt::join(versions, ", "));
    throw Error(ErrorKind::not_in_cache, "i8gemm_prepare",
                fmt::format("strict mode: no compiler could be loaded ({}), and the cache {}", e.message(), held));
  }
}

}  // namespace i8g

// Emit -> compile -> report -> store, for a batch of kernels. Used by `i8gemm tune` and by
// prepare (which compiles what the cache lacks). Nothing here touches a GPU.
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cache/cache.hpp"
#include "generator/types.hpp"
#include "runtime/compile/compiler.hpp"
#include "runtime/report/report.hpp"
#include "runtime/serve/source_override.hpp"

namespace i8g {

struct JitOutcome {
  KernelSpec spec;                  // default-constructed for the utility module
  std::string name;                 // the kernel's (Source) name
  enum class Status { compiled, cached, failed } status = Status::failed;
  std::string error;                // compile error (whole log) when failed
  cache::StoredKernel kernel;       // without blobs when cached; id set when stored
};

// One kernel of a batch: its source and its spec (none for the utility module).
struct JitRequest {
  Source source;
  std::optional<KernelSpec> spec;
};
// One request per spec, its generated source.
std::vector<JitRequest> jit_requests(const std::vector<KernelSpec>& specs);

// How a batch treats compile threads, SASS and the cache.
struct JitPolicy {
  int threads = 0;                // parallel compiles; 0: usable_cpus() (cgroup quota included)
  Sass sass = Sass::disassemble;  // prepare: Sass::skip (serving spawns no nvdisasm)
  // Prepare's policy: a cache lookup or store that fails is a warning (the kernel is compiled,
  // or served without being stored), not a failure; each compile is logged at info level.
  bool serving = false;
  std::function<void(size_t done, size_t total)> progress;  // as compile_all calls it
};

const char* to_string(JitOutcome::Status s);

// The binary key of a kernel's source (generated or overridden) under this compiler, its
// options for `target` and this build's templates.
cache::BinaryKey binary_key(const KernelSource& ks, const Compiler& compiler, const Target& target);
// The same for a spec's kernel (its source override applied, when there is one).
cache::BinaryKey binary_key(const KernelSpec& spec, const Compiler& compiler);

// Prepare's policy (Engine::load_all, fetch_or_compile): compiles in usable_cpus() threads, spawns
// no nvdisasm (Sass::skip), and a cache that fails a lookup or a store does not stop serving.
JitPolicy prepare_policy();

// Builds the cache record of one compiled kernel (report, hashes, and SASS unless `sass` says
// skip). `spec` is null for the utility module, whose report describes its entry kernel.
cache::StoredKernel make_stored_kernel(const std::optional<KernelSpec>& spec, const KernelSource& ks,
                                       const Binary& bin, const Target& target, Sass sass);

// Every source below goes through with_override (runtime/serve/source_override.hpp).

// The one path by which kernels reach the cache: each request is looked up in `c` (may be null),
// what is missing is compiled in parallel (compile_all) and each success is stored, in its own
// transaction, as soon as it has compiled, when `c` is writable (an interrupted batch keeps what
// finished). One outcome per request, in request order whatever finished first; a failure is
// that request's outcome, with its own log.
std::vector<JitOutcome> fetch_or_compile_all(cache::Cache* c, const Compiler& compiler,
                                             const std::vector<JitRequest>& requests, const Target& target,
                                             const JitPolicy& policy);

// Tune's batch: fetch_or_compile_all over `specs` with their SASS, where a cache error or a store
// that fails is a failed outcome.
std::vector<JitOutcome> compile_and_store(
    cache::Cache& cache, const Compiler& compiler, const std::vector<KernelSpec>& specs,
    const Target& target, int threads,
    const std::function<void(size_t done, size_t total)>& progress = {});

// Opens the cache for prepare: read-write where this process may write it, else read-only (its
// winners and binaries still serve; what it lacks is compiled and not stored). A cache that
// cannot be opened at all does not stop serving: returns null. Either way the reason is printed
// once (`warned` remembers it).
std::unique_ptr<cache::Cache> open_cache_or_warn(const std::string& path, std::string& warned);
// Why the cache at `path` must not be loaded into this process (other users can write it;
// cache::Cache::shared_write_reason), with the override to name, or "" when it may be, or when
// I8GEMM_ALLOW_SHARED_CACHE=1 allows it anyway.
std::string untrusted_cache_reason(const std::string& path);

// The binary for `src` from the cache (hash-checked; a damaged entry is reported and compiled
// afresh), else compiled now, without SASS (serving spawns no helper), and stored when the cache
// is writable. `spec` is null for the utility module. Throws Error("compile", log) when
// compilation fails. `compiled` (optional) says which of the two happened.
cache::StoredKernel fetch_or_compile(cache::Cache* c, const Compiler& compiler, const Source& src,
                                     const std::optional<KernelSpec>& spec, const Target& target,
                                     bool* compiled = nullptr);
// The compiler prepare uses: make_compiler(target), loaded. In strict mode, when that compiler
// cannot be loaded (no NVRTC in the serving image), a stand-in that compiles nothing and carries
// the one compiler version of the cache's binaries for `target` (the binaries' keys hold it);
// Error(not_in_cache) when the cache has none or several. Otherwise the loader's Error. `make`:
// make_compiler, or a test's stand-in for a process without NVRTC.
using CompilerFactory = std::function<std::unique_ptr<Compiler>(const Target&)>;
std::unique_ptr<Compiler> serving_compiler(const Target& target, bool strict, cache::Cache* c,
                                           const CompilerFactory& make = make_compiler);
// The cache's binary for `src`, or nothing (no cache, not there, or a damaged entry, which is
// reported): what strict mode serves from.
std::optional<cache::StoredKernel> fetch_cached(cache::Cache* c, const Compiler& compiler, const Source& src,
                                                const Target& target);

}  // namespace i8g

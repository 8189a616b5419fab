// i8gemm inspect source NAME: a kernel's source as one file, to recompile or diff outside
// i8gemm, or to start a source override from. From the name alone this build's generator emits
// it (no GPU, no cache); --cached takes the source a cache entry was compiled from instead
// (which may have been an override).
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <memory>

#include "cache/cache.hpp"
#include "core/embedded.hpp"
#include "core/error.hpp"
#include "generator/generator.hpp"
#include "runtime/compile/compiler.hpp"
#include "runtime/compile/full_source.hpp"
#include "tools/cli.hpp"

namespace i8g::cli {
namespace {

struct SourceOptions {
  std::shared_ptr<InspectShared> shared;  // --cache, given before or after `source`
  std::string name, out;
  bool inlined = false, cached = false;
};

struct Dump {
  Source source;
  DumpHeader header;
};

// The utility module is named by arch alone (emit_utility): i8g_<arch without '_'>_utility.
std::optional<std::string> utility_arch(const std::string& name) {
  for (const auto& archs : {Target::supported_archs(), Target::supported_amd_archs()})
    for (const std::string& arch : archs)
      if (emit_utility(arch).name == name) return arch;
  return std::nullopt;
}

Dump from_generator(const std::string& name) {
  Dump d;
  Target t;
  if (const auto arch = utility_arch(name)) {
    t = Target::from_arch(*arch);
    d.source = emit_utility(*arch);
  } else {
    KernelSpec spec;
    try {
      spec = KernelSpec::parse_name(name);
    } catch (const Error& e) {
      throw Error(ErrorKind::invalid_argument, "inspect source",
                  fmt::format("'{}' is not a kernel name this build generates ({}); give --cached to dump a cache "
                              "entry's source",
                              name, e.message()));
    }
    t = Target::from_arch(spec.arch);
    d.source = emit(spec);
  }
  d.header = {t.arch, t.amd ? "hipRTC" : "NVRTC", compile_options(t),
              fmt::format("emitted by this build's generator {}", generator_hash())};
  return d;
}

Dump from_cache(const SourceOptions& o) {
  cache::Cache c(resolve_cache_path(o.shared->cache), cache::Cache::Mode::read_only);
  // Like `inspect show`: the entry this build would use, else the newest.
  std::optional<cache::StoredKernel> pick;
  CurrentBuild build;
  for (auto& k : c.list_kernels({}))
    if (k.key.name == o.name && (!pick || build.status(k) == "ok")) pick = std::move(k);
  if (!pick) throw Error("inspect source", fmt::format("no kernel named '{}' in {}", o.name, c.path()));
  const auto k = c.get_kernel(pick->id);
  if (!k) throw Error("inspect source", "the entry vanished while reading");
  Dump d;
  d.source = {k->key.name, k->source, k->entry};
  const bool override = cache::is_override(k->key.generator_hash);
  d.header = {k->key.arch, k->key.compiler_version, k->options,
              fmt::format("cache entry id {} of {} ({}{})", k->id, c.path(),
                          override ? "compiled from a source override" : "generated",
                          build.stale_reason(*k).empty() ? "" : ", stale")};
  return d;
}

void run_source(const SourceOptions& o) {
  if (!o.shared->filter.empty() || o.shared->json)
    throw Error("inspect source", "--filter and --json do not apply to `inspect source` (it prints one kernel's source)");
  const Dump d = o.cached ? from_cache(o) : from_generator(o.name);
  const std::string text = full_source(d.source, d.header, o.inlined);
  if (o.out.empty()) {
    // Byte for byte into a pipe or file (so it recompiles); on a terminal, nothing the
    // terminal could obey (a cached entry's source is untrusted).
    const std::string shown = isatty(fileno(stdout)) ? terminal_safe(text) : text;
    std::fwrite(shown.data(), 1, shown.size(), stdout);
    return;
  }
  std::ofstream f(o.out, std::ios::binary | std::ios::trunc);
  f.write(text.data(), std::streamsize(text.size()));
  f.close();
  if (!f) throw Error("inspect source", fmt::format("cannot write {}", o.out));
  fmt::print(stderr, "wrote {} ({} bytes{})\n", o.out, text.size(), o.inlined ? ", templates inlined" : "");
}

}  // namespace

void setup_inspect_source(CLI::App& inspect, std::shared_ptr<InspectShared> shared) {
  auto opts = std::make_shared<SourceOptions>();
  opts->shared = std::move(shared);
  CLI::App* cmd = inspect.add_subcommand(
      "source", "a kernel's source with its compile options (from its name alone, or --cached); --inline for one "
                "self-contained file");
  cmd->add_option("name", opts->name, "kernel name")->required();
  cmd->add_flag("--inline", opts->inlined, "inline the templates it includes: compiles with no include path");
  cmd->add_option("-o,--output", opts->out, "write to this file instead of stdout");
  cmd->add_flag("--cached", opts->cached, "the source a cache entry was compiled from, with its stored options");
  add_cache_option(*cmd, opts->shared->cache, "cache file for --cached");
  cmd->callback([opts] { run_source(*opts); });
}

}  // namespace i8g::cli

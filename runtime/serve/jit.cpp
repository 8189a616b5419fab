// Emit (or a source override) -> compile -> report -> store: the one path by which a kernel
// reaches the cache.
#include "runtime/serve/jit.hpp"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <ctime>

#include "core/embedded.hpp"
#include "core/log.hpp"
#include "core/options.hpp"
#include "generator/generator.hpp"
#include "runtime/report/report.hpp"

namespace i8g {

const char* to_string(JitOutcome::Status s) {
  switch (s) {
    case JitOutcome::Status::compiled: return "compiled";
    case JitOutcome::Status::cached: return "cached";
    case JitOutcome::Status::failed: return "failed";
  }
  return "?";
}

cache::BinaryKey binary_key(const KernelSource& ks, const Compiler& compiler, const Target& target) {
  return {ks.source.name, target.arch, compiler.version(), source_origin_hash(ks),
          cache::options_hash(compiler.options(target))};
}

cache::BinaryKey binary_key(const KernelSpec& spec, const Compiler& compiler) {
  return binary_key(with_override(emit(spec)), compiler, Target::from_arch(spec.arch));
}

namespace {

// The utility module's kernels all launch 256-thread blocks without dynamic shared memory
// (runtime/serve/engine.cpp); its report is that of its entry kernel.
constexpr int kUtilityThreads = 256;

// Spill bytes as the list shows them: -1 unknown. AMD counts spilled 32-bit registers: 4
// bytes per lane each.
int spill_bytes(const ResourceReport& rep) {
  if (rep.amd.present)
    return (rep.amd.vgpr_spills < 0 && rep.amd.sgpr_spills < 0)
               ? -1
               : 4 * (std::max(rep.amd.vgpr_spills, 0) + std::max(rep.amd.sgpr_spills, 0));
  return (rep.spill_store_bytes < 0 && rep.spill_load_bytes < 0)
             ? -1
             : std::max(rep.spill_store_bytes, 0) + std::max(rep.spill_load_bytes, 0);
}

}  // namespace

cache::StoredKernel make_stored_kernel(const std::optional<KernelSpec>& spec, const KernelSource& ks,
                                       const Binary& bin, const Target& target, Sass sass) {
  const int threads = spec ? int(launch_shape(*spec, 1).block[0]) : kUtilityThreads;
  const int dynamic_smem = spec ? int(launch_shape(*spec, 1).dynamic_smem) : 0;
  ResourceReport rep = make_report(bin, target, threads, dynamic_smem, sass);
  if (!spec) rep.notes.push_back("utility module: the report is that of its entry kernel " + bin.entry);
  if (ks.overridden())
    rep.notes.push_back("source override: compiled from " + ks.override_path + ", not from the generator");
  cache::StoredKernel k;
  // The key records what was used (bin's compiler and options), so it can only ever match them.
  k.key = {ks.source.name, target.arch, bin.compiler, source_origin_hash(ks), cache::options_hash(bin.options)};
  k.source = ks.source.code;
  k.entry = ks.source.entry;
  k.lowered_name = bin.lowered_name;
  k.options = bin.options;
  k.binary = bin.image;
  k.binary_sha256 = cache::sha256_hex(bin.image.data(), bin.image.size());
  k.ir = bin.ir;
  k.log = bin.log;
  k.compile_ms = bin.compile_ms;
  if (spec) {
    k.family = to_string(spec->config.family);
    k.problem_key = spec->problem.key();
    k.config = spec->config.to_string();
    k.n = spec->problem.n;
    k.k = spec->problem.k;
  } else {
    k.family = "utility";
  }
  k.isa = rep.sass;
  k.report_json = rep.to_json().dump();
  k.registers = rep.registers;
  k.stack_bytes = rep.stack_frame_bytes;
  k.spill_bytes = spill_bytes(rep);
  k.smem_bytes = rep.static_smem_bytes < 0 ? -1 : rep.static_smem_bytes + dynamic_smem;
  k.occupancy = rep.occupancy;
  k.created_at = int64_t(std::time(nullptr));
  return k;
}

namespace {

// The stored binary for `key`, or nothing. A damaged entry is reported and skipped (never
// loaded): the kernel is compiled afresh and storing it repairs the entry. Other cache errors
// are the caller's unless `serving` (prepare compiles instead).
std::optional<cache::StoredKernel> lookup(cache::Cache* c, const cache::BinaryKey& key, bool serving) {
  if (!c) return std::nullopt;
  try {
    return c->get_kernel(key);
  } catch (const Error& e) {
    if (!serving && e.kind() != ErrorKind::corrupt_entry) throw;
    log_warning(fmt::format("{}; compiling {} afresh", e.what(), key.name));
    return std::nullopt;
  }
}

// A disassembling batch (tune) that finds a kernel prepare stored without SASS disassembles it
// now and stores the SASS with its report, when the cache is writable (a read-only cache keeps
// the note; `inspect show` still disassembles on demand).
void fill_in_sass(cache::Cache& c, cache::StoredKernel& k) {
  if (!k.isa.empty() || c.mode() != cache::Cache::Mode::read_write) return;
  ResourceReport r;
  try {
    r = ResourceReport::from_json(nlohmann::json::parse(k.report_json));
  } catch (const std::exception&) {
    return;  // an unreadable report stays as it is; the audit names it
  }
  if (r.sass_note != kSassSkipped || r.amd.present) return;
  add_sass(r, k.binary);
  if (!r.sass_available) return;  // no nvdisasm here either: the note now says why
  const std::string json = r.to_json().dump();
  try {
    if (c.add_sass(k.id, r.sass, json)) {
      k.isa = r.sass;
      k.report_json = json;
    }
  } catch (const Error& e) {  // the kernel itself is fine: only its SASS stays unstored
    log_warning(fmt::format("could not store the SASS of {}: {}", k.key.name, e.what()));
  }
}

}  // namespace

std::vector<JitRequest> jit_requests(const std::vector<KernelSpec>& specs) {
  std::vector<JitRequest> out;
  for (const KernelSpec& spec : specs) out.push_back({emit(spec), spec});
  return out;
}

JitPolicy prepare_policy() {
  JitPolicy p;
  p.threads = 0;
  p.sass = Sass::skip;
  p.serving = true;
  return p;
}

std::vector<JitOutcome> fetch_or_compile_all(cache::Cache* c, const Compiler& compiler,
                                             const std::vector<JitRequest>& requests, const Target& target,
                                             const JitPolicy& policy) {
  std::vector<JitOutcome> out(requests.size());
  std::vector<KernelSource> todo;
  std::vector<size_t> todo_index;
  for (size_t i = 0; i < requests.size(); ++i) {
    if (requests[i].spec) out[i].spec = *requests[i].spec;
    out[i].name = requests[i].source.name;
    KernelSource ks = with_override(requests[i].source);
    if (auto hit = lookup(c, binary_key(ks, compiler, target), policy.serving)) {
      if (policy.sass == Sass::disassemble) fill_in_sass(*c, *hit);
      out[i].status = JitOutcome::Status::cached;
      out[i].kernel = std::move(*hit);
      continue;
    }
    if (policy.serving)
      log_info(fmt::format("compiling {} ({})", ks.source.name, c ? "not in the cache" : "no cache"));
    todo.push_back(std::move(ks));
    todo_index.push_back(i);
  }
  const size_t cached = requests.size() - todo.size();
  if (policy.progress) policy.progress(cached, requests.size());
  std::vector<Source> sources;
  for (const KernelSource& ks : todo) sources.push_back(ks.source);
  const bool writable = c && c->mode() == cache::Cache::Mode::read_write;
  std::vector<std::string> store_warnings;
  compile_all(
      compiler, sources, target, policy.threads,
      [&](size_t done, size_t) { if (policy.progress) policy.progress(cached + done, requests.size()); },
      [&](size_t j, CompileOutcome& built) {
        JitOutcome& o = out[todo_index[j]];
        if (!built.binary) {
          o.error = built.error;
          return;
        }
        try {
          o.kernel = make_stored_kernel(requests[todo_index[j]].spec, todo[j], *built.binary, target, policy.sass);
          o.status = JitOutcome::Status::compiled;
          if (writable) o.kernel.id = c->put_kernel(o.kernel);
        } catch (const Error& e) {
          if (policy.serving && o.status == JitOutcome::Status::compiled) {
            store_warnings.push_back(fmt::format("could not store {}: {}", o.name, e.what()));
          } else {
            o.status = JitOutcome::Status::failed;
            o.error = e.what();
          }
        }
        built.binary.reset();  // the record holds the image: the batch need not hold a second copy
      });
  // Logged from the calling thread: a caller's log sink never runs on a compile worker.
  for (const std::string& w : store_warnings) log_warning(w);
  return out;
}

std::vector<JitOutcome> compile_and_store(
    cache::Cache& cache, const Compiler& compiler, const std::vector<KernelSpec>& specs,
    const Target& target, int threads,
    const std::function<void(size_t done, size_t total)>& progress) {
  const std::vector<JitRequest> requests = jit_requests(specs);
  JitPolicy policy;
  policy.threads = threads;
  policy.progress = progress;
  return fetch_or_compile_all(&cache, compiler, requests, target, policy);
}

// Opens the cache for prepare. A cache that cannot be opened does not stop serving: kernels
// are compiled in memory and the reason is printed once.
std::string untrusted_cache_reason(const std::string& path) {
  if (options().allow_shared_cache) return "";
  const std::string shared = cache::Cache::shared_write_reason(path);
  return shared.empty() ? "" : fmt::format("cache file {} {}; not used (set I8GEMM_ALLOW_SHARED_CACHE=1 to use it "
                                           "anyway)", path, shared);
}

std::unique_ptr<cache::Cache> open_cache_or_warn(const std::string& path, std::string& warned) {
  if (path.empty()) return nullptr;  // no cache location at all (the engine said so once)
  auto warn_once = [&](const std::string& text) {
    if (warned == text) return;
    log_warning(text);
    warned = text;
  };
  std::string why;
  // Its binaries run in this process: a cache others can write is not used unless allowed.
  if (const std::string untrusted = untrusted_cache_reason(path); !untrusted.empty()) {
    warn_once(untrusted + "; compiling without the cache");
    return nullptr;
  }
  try {
    return std::make_unique<cache::Cache>(path, cache::Cache::Mode::read_write);
  } catch (const Error& e) {
    why = e.what();
  }
  // A cache this process cannot write (shipped in a container, another user's, a read-only
  // mount) still serves its winners and binaries; kernels it lacks are compiled, not stored.
  struct stat st;
  if (stat(path.c_str(), &st) == 0) {
    try {
      auto c = std::make_unique<cache::Cache>(path, cache::Cache::Mode::read_only);
      warn_once(fmt::format("{}; using it read-only (kernels it lacks are compiled but not stored)", why));
      return c;
    } catch (const Error& e) {
      why = e.what();
    }
  }
  warn_once(why + "; compiling without the cache");
  return nullptr;
}

// What strict mode serves from: the cache's binary or nothing.
std::optional<cache::StoredKernel> fetch_cached(cache::Cache* c, const Compiler& compiler, const Source& src,
                                                const Target& target) {
  return lookup(c, binary_key(with_override(src), compiler, target), true);
}

cache::StoredKernel fetch_or_compile(cache::Cache* c, const Compiler& compiler, const Source& src,
                                     const std::optional<KernelSpec>& spec, const Target& target, bool* compiled) {
  JitPolicy policy = prepare_policy();
  policy.threads = 1;
  JitOutcome o = std::move(fetch_or_compile_all(c, compiler, {{src, spec}}, target, policy)[0]);
  if (compiled) *compiled = o.status == JitOutcome::Status::compiled;
  if (o.status == JitOutcome::Status::failed) throw Error(ErrorKind::compile, "compile", o.error);
  return std::move(o.kernel);
}

}  // namespace i8g

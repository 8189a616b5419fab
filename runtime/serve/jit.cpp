#include "runtime/serve/jit.hpp"

#include <cstdio>
#include <ctime>

#include "core/embedded.hpp"
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

cache::BinaryKey binary_key(const KernelSpec& spec, const Compiler& compiler) {
  return {spec.name(), spec.arch, compiler.version(), generator_hash()};
}

namespace {

// The record of a binary as compiled: source, options, image and its hash, IR and log.
cache::StoredKernel stored_binary(const cache::BinaryKey& key, const Source& src, const Binary& bin) {
  cache::StoredKernel k;
  k.key = key;
  k.source = src.code;
  k.entry = src.entry;
  k.lowered_name = bin.lowered_name;
  k.options = bin.options;
  k.binary = bin.image;
  k.binary_sha256 = cache::sha256_hex(bin.image.data(), bin.image.size());
  k.ir = bin.ir;
  k.log = bin.log;
  k.compile_ms = bin.compile_ms;
  return k;
}

}  // namespace

cache::StoredKernel make_stored_kernel(const KernelSpec& spec, const Source& src,
                                       const Binary& bin, const Target& target) {
  const LaunchShape shape = launch_shape(spec, 1);
  const ResourceReport rep = make_report(bin, target, int(shape.block[0]), int(shape.dynamic_smem));
  cache::StoredKernel k = stored_binary({spec.name(), spec.arch, bin.compiler, generator_hash()}, src, bin);
  k.family = to_string(spec.config.family);
  k.problem_key = spec.problem.key();
  k.config = spec.config.to_string();
  k.n = spec.problem.n;
  k.k = spec.problem.k;
  k.isa = rep.sass;
  k.report_json = rep.to_json().dump();
  k.registers = rep.registers;
  k.stack_bytes = rep.stack_frame_bytes;
  k.spill_bytes = (rep.spill_store_bytes < 0 && rep.spill_load_bytes < 0)
                      ? -1
                      : std::max(rep.spill_store_bytes, 0) + std::max(rep.spill_load_bytes, 0);
  if (rep.amd.present)  // AMD counts spilled 32-bit registers: 4 bytes per lane each
    k.spill_bytes = (rep.amd.vgpr_spills < 0 && rep.amd.sgpr_spills < 0)
                        ? -1
                        : 4 * (std::max(rep.amd.vgpr_spills, 0) + std::max(rep.amd.sgpr_spills, 0));
  k.smem_bytes = rep.static_smem_bytes < 0 ? -1 : rep.static_smem_bytes + int(shape.dynamic_smem);
  k.occupancy = rep.occupancy;
  k.created_at = int64_t(std::time(nullptr));
  return k;
}

std::vector<JitOutcome> compile_and_store(
    cache::Cache& cache, const Compiler& compiler, const std::vector<KernelSpec>& specs,
    const Target& target, int threads,
    const std::function<void(size_t done, size_t total)>& progress) {
  std::vector<JitOutcome> out(specs.size());
  std::vector<Source> todo;
  std::vector<size_t> todo_index;
  for (size_t i = 0; i < specs.size(); ++i) {
    out[i].spec = specs[i];
    try {
      if (auto hit = cache.get_kernel(binary_key(specs[i], compiler))) {
        out[i].status = JitOutcome::Status::cached;
        out[i].kernel = std::move(*hit);
        continue;
      }
    } catch (const Error& e) {
      // A damaged entry (its binary fails the hash or device-code check) is compiled again;
      // put_kernel repairs it in place. Anything else is the caller's problem.
      if (e.kind() != ErrorKind::corrupt_entry) throw;
      std::fprintf(stderr, "i8gemm: warning: %s; compiling it again\n", e.what());
    }
    todo.push_back(emit(specs[i]));
    todo_index.push_back(i);
  }
  const size_t cached = specs.size() - todo.size();
  if (progress) progress(cached, specs.size());
  std::vector<CompileOutcome> built = compile_all(
      compiler, todo, target, threads,
      [&](size_t done, size_t) { if (progress) progress(cached + done, specs.size()); });
  for (size_t j = 0; j < built.size(); ++j) {
    JitOutcome& o = out[todo_index[j]];
    if (!built[j].binary) {
      o.status = JitOutcome::Status::failed;
      o.error = built[j].error;
      continue;
    }
    try {
      o.kernel = make_stored_kernel(o.spec, todo[j], *built[j].binary, target);
      o.kernel.id = cache.put_kernel(o.kernel);
      o.status = JitOutcome::Status::compiled;
    } catch (const Error& e) {
      o.status = JitOutcome::Status::failed;
      o.error = e.what();
    }
  }
  return out;
}

namespace {

// The stored binary for `key`, or nothing. A damaged entry is reported and skipped (never
// loaded); the kernel is then compiled afresh.
std::optional<cache::StoredKernel> lookup(cache::Cache* c, const cache::BinaryKey& key) {
  if (!c) return std::nullopt;
  try {
    return c->get_kernel(key);
  } catch (const Error& e) {
    std::fprintf(stderr, "i8gemm: warning: %s; compiling %s afresh\n", e.what(), key.name.c_str());
    return std::nullopt;
  }
}

}  // namespace

// Opens the cache for prepare. A cache that cannot be opened does not stop serving: kernels
// are compiled in memory and the reason is printed once.
std::unique_ptr<cache::Cache> open_cache_or_warn(const std::string& path, std::string& warned) {
  try {
    return std::make_unique<cache::Cache>(path, cache::Cache::Mode::read_write);
  } catch (const Error& e) {
    if (warned != e.what()) {
      std::fprintf(stderr, "i8gemm: warning: %s; compiling without the cache\n", e.what());
      warned = e.what();
    }
    return nullptr;
  }
}

// From the cache if there, else compiled now (and stored when a cache is open).
cache::StoredKernel fetch_or_compile(cache::Cache* c, const Compiler& compiler, const Source& src,
                                     const std::optional<KernelSpec>& spec, const Target& target) {
  const cache::BinaryKey key{src.name, target.arch, compiler.version(), generator_hash()};
  if (auto hit = lookup(c, key)) return *hit;
  Binary bin;
  try {
    bin = compiler.compile(src, target);
  } catch (const Error& e) {
    throw Error("compile", e.what());
  }
  cache::StoredKernel k;
  if (spec) {
    k = make_stored_kernel(*spec, src, bin, target);
  } else {
    k = stored_binary(key, src, bin);
    k.family = "utility";
  }
  if (c) {
    try {
      k.id = c->put_kernel(k);
    } catch (const Error& e) {
      std::fprintf(stderr, "i8gemm: warning: could not store %s: %s\n", src.name.c_str(), e.what());
    }
  }
  return k;
}

}  // namespace i8g

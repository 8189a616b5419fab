#include "runtime/jit.hpp"

#include <cstdio>
#include <ctime>

#include "generator/embedded.hpp"
#include "generator/generator.hpp"
#include "runtime/report.hpp"

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

cache::StoredKernel make_stored_kernel(const KernelSpec& spec, const Source& src,
                                       const Binary& bin, const Target& target) {
  const LaunchShape shape = launch_shape(spec, 1);
  const ResourceReport rep = make_report(bin, target, int(shape.block[0]), int(shape.dynamic_smem));
  cache::StoredKernel k;
  k.key = {spec.name(), spec.arch, bin.compiler, generator_hash()};
  k.family = to_string(spec.config.family);
  k.problem_key = spec.problem.key();
  k.config = spec.config.to_string();
  k.n = spec.problem.n;
  k.k = spec.problem.k;
  k.source = src.code;
  k.entry = src.entry;
  k.lowered_name = bin.lowered_name;
  k.options = bin.options;
  k.binary = bin.image;
  k.binary_sha256 = cache::sha256_hex(bin.image.data(), bin.image.size());
  k.ir = bin.ir;
  k.log = bin.log;
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
  k.compile_ms = bin.compile_ms;
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
      // A damaged entry (its binary fails the hash check) is compiled again; put_kernel
      // repairs it in place. Anything else is the caller's problem.
      if (std::string(e.what()).find("sha256") == std::string::npos) throw;
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

}  // namespace i8g

// Fetch, compile and load what prepare needs: one batch per prepare, so that every kernel the
// cache lacks compiles at once (fetch_or_compile_all, in usable_cpus() threads) and none spawns
// nvdisasm (the report is stored without SASS; `i8gemm inspect show` disassembles on demand).
#include <fmt/format.h>

#include <algorithm>

#include "generator/generator.hpp"
#include "runtime/compile/compiler.hpp"
#include "runtime/serve/engine_parts.hpp"
#include "runtime/serve/jit.hpp"

namespace i8g {

void Engine::load_all(const std::vector<KernelSpec>& specs, cache::Cache* c, std::vector<std::string>& missing) {
  std::vector<JitRequest> requests;
  for (const KernelSpec& spec : specs) {
    const std::string name = spec.name();
    const bool queued = std::any_of(requests.begin(), requests.end(),
                                    [&](const JitRequest& r) { return r.source.name == name; });
    if (!queued && !loaded_.count(name)) requests.push_back({emit(spec), spec});
  }
  if (!utility_) requests.push_back({emit_utility(dev_.target.arch), std::nullopt});
  if (requests.empty()) return;
  const std::unique_ptr<Compiler> compiler = serving_compiler(dev_.target, strict_, c);
  std::vector<JitOutcome> got(requests.size());
  if (strict_) {
    for (size_t i = 0; i < requests.size(); ++i) {
      if (std::optional<cache::StoredKernel> hit = fetch_cached(c, *compiler, requests[i].source, dev_.target)) {
        got[i].status = JitOutcome::Status::cached;
        got[i].kernel = std::move(*hit);
      } else {
        missing.push_back(requests[i].spec ? requests[i].spec->name() : "the utility module " + requests[i].source.name);
      }
    }
  } else {
    got = fetch_or_compile_all(c, *compiler, requests, dev_.target, prepare_policy());
    std::string failures;
    size_t failed = 0;
    for (const JitOutcome& o : got)
      if (o.status == JitOutcome::Status::failed) {
        ++failed;
        failures += fmt::format("\n{}:\n{}", o.name, o.error);
      }
    if (failed > 0)
      throw Error(ErrorKind::compile, "i8gemm_prepare",
                  fmt::format("{} of {} kernels failed to compile:{}", failed, requests.size(), failures));
  }
  // Modules load one at a time, in request order: the driver calls are cheap beside compiling.
  for (size_t i = 0; i < requests.size(); ++i) {
    const JitOutcome& o = got[i];
    if (o.status == JitOutcome::Status::failed) continue;  // strict mode: named in `missing`
    if (o.kernel.key.arch != dev_.target.arch)
      throw Error(ErrorKind::internal, "i8gemm_prepare", "binary arch does not match the device");
    if (!requests[i].spec) {
      utility_ = std::make_unique<Module>(o.kernel.binary);
      continue;
    }
    const KernelSpec& spec = *requests[i].spec;
    auto l = std::make_unique<Loaded>();
    l->spec = spec;
    l->module = std::make_unique<Module>(o.kernel.binary);
    l->fn = l->module->function(o.kernel.lowered_name);
    l->compiled = o.status == JitOutcome::Status::compiled;
    const LaunchShape shape = launch_shape(spec, 1);
    if (shape.dynamic_smem > 48 * 1024)
      check_cu(driver().cuFuncSetAttribute(l->fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                           int(shape.dynamic_smem)),
               "cuFuncSetAttribute");
    loaded_.emplace(spec.name(), std::move(l));
  }
}

void Engine::ensure_utility(cache::Cache* c) {
  std::vector<std::string> missing;
  load_all({}, c, missing);
  if (!missing.empty())
    throw Error(ErrorKind::not_in_cache, "i8gemm",
                fmt::format("strict mode: the cache lacks {} (quantize, colsum, the cuBLASLt dequant); `i8gemm "
                            "tune` on this GPU, or tune --compile-only, stores it",
                            missing.front()));
}

CUfunction Engine::utility(const char* name) const { return utility_->function(name); }

}  // namespace i8g

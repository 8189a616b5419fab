// i8gemm tune: enumerate, compile and store every candidate for the target shapes.
#include <fmt/format.h>

#include <memory>
#include <regex>

#include "cache/cache.hpp"
#include "generator/error.hpp"
#include "generator/generator.hpp"
#include "runtime/jit.hpp"
#include "tools/cli.hpp"

namespace i8g::cli {
namespace {

struct TuneOptions {
  ShapeFlags shapes;
  ProblemFlags problem;
  bool compile_only = false;
  std::string arch, cache, filter;
  int jobs = 0;
};

struct ShapeSummary {
  std::string label, key;
  int kernels = 0, compiled = 0, cached = 0, failed = 0, spilling = 0, max_regs = 0;
};

void run_tune(const TuneOptions& o) {
  if (!o.compile_only)
    throw Error("tune", "tuning on a GPU (timing against cuBLASLt) is not built yet; use "
                        "--compile-only --arch ARCH to compile and store every candidate");
  if (o.arch.empty()) throw Error("tune", "--compile-only needs --arch (e.g. --arch sm_90a)");
  const Target target = Target::from_arch(o.arch);
  std::optional<std::regex> filter;
  if (!o.filter.empty()) {
    try {
      filter.emplace(o.filter);
    } catch (const std::regex_error& e) {
      throw Error("--filter", fmt::format("'{}' is not a regular expression: {}", o.filter, e.what()));
    }
  }
  const std::vector<NamedShape> shapes = o.shapes.resolve();
  std::vector<GemmProblem> problems;
  for (const NamedShape& s : shapes) problems.push_back(o.problem.make(s));  // all valid first

  const std::unique_ptr<Compiler> compiler = make_compiler(target);
  cache::Cache cache(resolve_cache_path(o.cache), cache::Cache::Mode::read_write);

  std::vector<KernelSpec> specs;
  std::vector<size_t> owner;
  for (size_t i = 0; i < problems.size(); ++i) {
    for (const KernelConfig& c : candidates(problems[i], target)) {
      KernelSpec spec{problems[i], c, target.arch};
      if (filter && !std::regex_search(spec.name(), *filter)) continue;
      specs.push_back(spec);
      owner.push_back(i);
    }
  }
  Progress bar("compiling");
  const std::vector<JitOutcome> results = compile_and_store(
      cache, *compiler, specs, target, o.jobs, [&](size_t d, size_t t) { bar.update(d, t); });
  bar.finish();

  std::vector<ShapeSummary> rows(problems.size());
  for (size_t i = 0; i < problems.size(); ++i) {
    rows[i].label = shapes[i].name.empty() ? fmt::format("{}x{}", shapes[i].n, shapes[i].k)
                                           : shapes[i].name;
    rows[i].key = problems[i].key();
  }
  int failed = 0;
  for (size_t j = 0; j < results.size(); ++j) {
    ShapeSummary& r = rows[owner[j]];
    const JitOutcome& res = results[j];
    ++r.kernels;
    if (res.status == JitOutcome::Status::failed) {
      ++r.failed;
      ++failed;
      fmt::print(stderr, "i8gemm: {} failed to compile:\n{}\n", res.spec.name(), res.error);
      continue;
    }
    (res.status == JitOutcome::Status::compiled ? r.compiled : r.cached)++;
    if (res.kernel.spill_bytes > 0) ++r.spilling;
    r.max_regs = std::max(r.max_regs, res.kernel.registers);
  }
  fmt::print("{:<14} {:<36} {:>7} {:>8} {:>6} {:>6} {:>8} {:>8}\n", "shape", "problem", "kernels",
             "compiled", "cached", "failed", "spilling", "max regs");
  for (const ShapeSummary& r : rows)
    fmt::print("{:<14} {:<36} {:>7} {:>8} {:>6} {:>6} {:>8} {:>8}\n", r.label, r.key, r.kernels,
               r.compiled, r.cached, r.failed, r.spilling, r.max_regs);
  fmt::print("arch {} ({}), cache {}\n", target.arch, compiler->version(), cache.path());
  if (failed > 0) throw CLI::RuntimeError(1);
}

}  // namespace

void setup_tune(CLI::App& app) {
  auto opts = std::make_shared<TuneOptions>();
  CLI::App* cmd = app.add_subcommand("tune", "compile (and, on a GPU, time) every candidate kernel for the given shapes");
  opts->shapes.add_to(*cmd);
  opts->problem.add_to(*cmd);
  cmd->add_flag("--compile-only", opts->compile_only, "compile and store candidates without a GPU");
  cmd->add_option("--arch", opts->arch, "target arch, e.g. sm_90a, sm_80 (default: the GPU's)");
  cmd->add_option("--cache", opts->cache, "cache file (default: $I8GEMM_CACHE or ~/.cache/i8gemm/cache.sqlite)");
  cmd->add_option("--filter", opts->filter, "only kernels whose name matches this regex");
  cmd->add_option("-j,--jobs", opts->jobs, "parallel compiles (default: all cores)")->check(CLI::Range(0, 256));
  cmd->callback([opts] { run_tune(*opts); });
}

}  // namespace i8g::cli

// i8gemm tune: enumerate, compile and store every candidate for the target shapes.
#include <fmt/format.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <regex>

#include "cache/cache.hpp"
#include "core/cpus.hpp"
#include "core/error.hpp"
#include "generator/families.hpp"
#include "generator/generator.hpp"
#include "runtime/tune/autotune.hpp"
#include "runtime/serve/engine.hpp"
#include "runtime/gpu/device.hpp"
#include "runtime/serve/jit.hpp"
#include "tools/cli.hpp"

namespace i8g::cli {
namespace {

struct TuneFlags {
  ShapeFlags shapes;
  ProblemFlags problem;
  bool compile_only = false;
  bool experimental_wgmma = false, experimental_staged_store = false, experimental_packed_weight = false,
       experimental_tile_order = false, resume = false, no_trigger_twins = false;
  std::string arch, cache, filter, m = "1,16,256,4096", shard, devices;
  std::vector<std::string> argv;  // the whole command line (--devices starts one job per device with it)
  int jobs = 0, device = 0, samples = 50, final_placements = i8g::TuneOptions{}.final_placements;
  double prune_factor = i8g::TuneOptions{}.prune_factor;
  double final_warmup_ms = i8g::TuneOptions{}.final_warmup_ms;
  // `t` with the experimental candidate sets these flags ask for.
  Target with_experiments(Target t) const {
    t.experimental_wgmma = experimental_wgmma;
    t.experimental_staged_store = experimental_staged_store;
    t.experimental_packed_weight = experimental_packed_weight;
    t.experimental_tile_order = experimental_tile_order;
    return t;
  }
};

// The regex of --filter, or none; throws Error for one that does not compile.
std::optional<std::regex> parse_filter(const std::string& text) {
  if (text.empty()) return std::nullopt;
  try {
    return std::regex(text);
  } catch (const std::regex_error& e) {
    throw Error("--filter", fmt::format("'{}' is not a regular expression: {}", text, e.what()));
  }
}

// Every candidate of `problems` on `target` that the filter keeps (with the index of its
// problem); a filter that keeps none is an error, not an empty run that exits 0.
std::vector<std::pair<KernelSpec, size_t>> filtered_specs(const std::vector<GemmProblem>& problems,
                                                          const Target& target, const std::string& filter_text) {
  const std::optional<std::regex> filter = parse_filter(filter_text);
  std::vector<std::pair<KernelSpec, size_t>> out;
  size_t all = 0;
  for (size_t i = 0; i < problems.size(); ++i)
    for (const KernelConfig& c : candidates(problems[i], target)) {
      KernelSpec spec{problems[i], c, target.arch};
      ++all;
      if (!filter || std::regex_search(spec.name(), *filter)) out.emplace_back(spec, i);
    }
  if (filter && out.empty())
    throw Error("--filter", fmt::format("'{}' matches none of the {} candidate kernels of these shapes on {}",
                                        filter_text, all, target.arch));
  return out;
}

// Full tuning on the GPU: every candidate and cuBLASLt, verified then timed, per M bucket.
void run_gpu_tune(const TuneFlags& o, const Shard& shard, const std::vector<NamedShape>& shapes,
                  const std::vector<GemmProblem>& problems) {
  const std::vector<int64_t> ms = parse_m_list(o.m);
  // This job's share of the work list, per shape (worklist.hpp: whole shapes where it can).
  std::vector<std::vector<int64_t>> ms_of(problems.size());
  size_t buckets = 0;
  const auto held = shard_buckets(shard, problems.size(), ms.size());
  for (size_t i = 0; i < problems.size(); ++i)
    for (size_t j : held[i]) ms_of[i].push_back(ms[j]), ++buckets;
  std::unique_ptr<Engine> engine;
  try {
    engine = std::make_unique<Engine>(o.device, resolve_cache_path(o.cache));
  } catch (const Error& e) {
    throw Error("tune", fmt::format("{}; to fill a cache without a GPU use --compile-only --arch ARCH", e.what()));
  }
  const Target& t = engine->device().target;
  if (!o.arch.empty() && Target::from_arch(o.arch).arch != t.arch)
    throw Error("tune", fmt::format("--arch {} does not match the GPU ({} is {})", o.arch, engine->device().name, t.arch));
  filtered_specs(problems, o.with_experiments(t), o.filter);  // a --filter that keeps nothing stops here
  // Tuning runs the cache's binaries on the GPU: as serving does, refuse one others can write.
  if (const std::string untrusted = untrusted_cache_reason(resolve_cache_path(o.cache)); !untrusted.empty())
    throw Error("tune", untrusted);
  cache::Cache cache(resolve_cache_path(o.cache), cache::Cache::Mode::read_write);
  i8g::TuneOptions to;
  to.ms = ms;
  to.filter = o.filter;
  to.jobs = o.jobs;
  to.experimental_wgmma = o.experimental_wgmma;
  to.experimental_staged_store = o.experimental_staged_store;
  to.experimental_packed_weight = o.experimental_packed_weight;
  to.experimental_tile_order = o.experimental_tile_order;
  to.resume = o.resume;
  to.plan.samples = o.samples;
  to.final_placements = o.final_placements;
  to.final_warmup_ms = o.final_warmup_ms;
  to.trigger_twins = !o.no_trigger_twins;
  to.prune_factor = o.prune_factor;
  fmt::print("{} ({} SMs, {}), driver {}, cache {}\n", engine->device().name, t.sm_count, t.arch,
             engine->device().driver_version, cache.path());
  const std::string who = o.shard.empty() ? fmt::format("device {}", o.device)
                                          : fmt::format("device {}, shard {}/{}", o.device, shard.index, shard.count);
  if (!o.shard.empty())
    fmt::print("shard {}/{}: {} of the {} (shape, M) buckets\n", shard.index, shard.count, buckets,
               problems.size() * ms.size());
  const auto began = std::chrono::steady_clock::now();
  size_t buckets_done = 0;
  auto bucket_finished = [&](const std::string& bucket) {
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
    fmt::print(stderr, "{}\n", bucket_line(who, ++buckets_done, buckets, bucket, s));
  };
  // One column per generated family of the device's vendor: its best fully timed graph median.
  std::vector<const FamilyInfo*> columns;
  for (const FamilyInfo* f : families())
    if (f->amd == t.amd) columns.push_back(f);
  std::string family_header;
  for (const FamilyInfo* f : columns) family_header += fmt::format(" {:>12}", fmt::format("{} us", f->name));
  // "untuned": the time of the kernel prepare runs untuned in that bucket (this build's rule,
  // heuristic_default), over the winner's: what the tune bought ("-" where it was not timed).
  fmt::print("{:<14} {:>6} {:<96} {:>10} {:>10} {:>8} {:>8}{} {:>4} {:>4} {:>4}\n", "shape", "M", "winner", "time us",
             "cuBLASLt", "speedup", "untuned", family_header, "ok", "rej", "fail");
  for (size_t i = 0; i < problems.size(); ++i) {
    if (ms_of[i].empty()) continue;  // another shard's
    const std::string label = shapes[i].name.empty() ? fmt::format("{}x{}", shapes[i].n, shapes[i].k) : shapes[i].name;
    to.ms = ms_of[i];
    // One line per stage; on a terminal also a bar that fills as candidates finish.
    std::unique_ptr<Progress> bar;
    std::string stage;
    const auto results = autotune(
        *engine, cache, problems[i], to,
        [&](const std::string& s, size_t done, size_t total) {
          if (s != stage) {
            if (bar) bar->finish();
            stage = s;
            fmt::print(stderr, "  {} ({} candidates)\n", s, total);
            bar = std::make_unique<Progress>("  " + s);
          }
          bar->update(done, total);
        },
        [&](int64_t m) {
          if (bar) bar->finish();
          bar.reset();
          stage.clear();
          bucket_finished(fmt::format("{} M={}", label, m));
        });
    if (bar) bar->finish();
    for (const BucketResult& r : results) {
      if (r.stored) {  // --resume: tuned before, not timed again
        bucket_finished(fmt::format("{} M={} (stored before)", label, r.m));
        fmt::print("{:<14} {:>6} {:<96} {:>10} {:>10} {:>8}  (stored, not re-timed)\n", label, r.m, r.stored->candidate,
                   fmt::format("{:.2f}", r.stored->time_us),
                   r.stored->baseline_us > 0 ? fmt::format("{:.2f}", r.stored->baseline_us) : "n/a",
                   r.stored->speedup > 0 ? fmt::format("{:.2f}x", r.stored->speedup) : "n/a");
        continue;
      }
      int ok = 0, rej = 0, fail = 0;
      // Best fully timed graph median of each generated family (pruned ones have no graph time).
      std::map<Family, double> best;
      for (const CandidateResult& c : r.candidates) {
        if (const KernelSpec* spec = kernel_of(c.candidate); spec && fully_timed(c)) {
          auto [it, fresh] = best.emplace(spec->config.family, c.graph->median_us);
          if (!fresh) it->second = std::min(it->second, c.graph->median_us);
        }
        ok += c.status == cache::CandidateStatus::ok;
        rej += c.status == cache::CandidateStatus::rejected;
        fail += c.status == cache::CandidateStatus::failed;
        if (c.status == cache::CandidateStatus::rejected)
          fmt::print(stderr, "  rejected {}: {}\n", to_string(c.candidate), c.reason);
      }
      const CandidateResult* w = r.winning();
      std::string untuned = "-";
      try {
        const KernelSpec dflt{problems[i], heuristic_default(problems[i], t, r.m), t.arch};
        for (const CandidateResult& c : r.candidates)
          if (const KernelSpec* s = kernel_of(c.candidate); s && w && *s == dflt) {
            if (fully_timed(c))
              untuned = fmt::format("{:.2f}x", c.graph->median_us / w->graph->median_us);
            else if (c.status == cache::CandidateStatus::ok)
              untuned = "pruned";  // its probe was past --prune-factor times the best: not fully timed
          }
      } catch (const Error&) {  // no default for this problem: "-"
      }
      std::string family_cells;
      for (const FamilyInfo* f : columns) {
        auto it = best.find(f->family);
        family_cells += fmt::format(" {:>12}", us_or_dash(it == best.end() ? std::nullopt : std::optional(it->second)));
      }
      fmt::print("{:<14} {:>6} {:<96} {:>10} {:>10} {:>8} {:>8}{} {:>4} {:>4} {:>4}\n", label, r.m,
                 w ? to_string(w->candidate) : "-", us_or_dash(w ? std::optional(w->graph->median_us) : std::nullopt),
                 r.baseline_us ? us_or_dash(r.baseline_us) : "n/a",
                 r.speedup > 0 ? fmt::format("{:.2f}x", r.speedup) : "n/a", untuned, family_cells, ok, rej, fail);
    }
  }
}

struct ShapeSummary {
  std::string label, key;
  int kernels = 0, compiled = 0, cached = 0, failed = 0, spilling = 0, max_regs = 0;
};

// --devices: one `tune --device D --shard I/N` process per device, all writing the one cache
// (WAL: concurrent writers are safe), together covering this job's share of the work list.
void run_device_jobs(const TuneFlags& o, const Shard& outer) {
  std::string why;
  const int available = cuda_device_count(&why);
  if (available == 0 && o.devices == "all") throw Error("tune", fmt::format("--devices all: {}", why));
  const std::vector<int> devices = parse_devices(o.devices, available);
  std::vector<std::pair<int, pid_t>> jobs;
  for (size_t k = 0; k < devices.size(); ++k) {
    const Shard sub = sub_shard(outer, int64_t(k), int64_t(devices.size()));
    std::vector<std::string> args = device_job_args(o.argv, devices[k], sub);
    // The jobs compile at the same time: unless -j was given, they share this process's CPUs.
    const bool jobs_given = std::any_of(o.argv.begin(), o.argv.end(), [](const std::string& a) {
      return a.rfind("-j", 0) == 0 || a.rfind("--jobs", 0) == 0;
    });
    if (!jobs_given) args.insert(args.end(), {"-j", std::to_string(std::max(1, usable_cpus() / int(devices.size())))});
    std::vector<char*> cargs;
    for (std::string& a : args) cargs.push_back(a.data());
    cargs.push_back(nullptr);
    pid_t pid = 0;
    if (const int rc = posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, cargs.data(), environ); rc != 0) {
      fmt::print(stderr, "i8gemm: cannot start the job of device {}: {}\n", devices[k], std::strerror(rc));
      continue;
    }
    fmt::print("device {}: job {} of {} (shard {}/{}), pid {}\n", devices[k], k, devices.size(), sub.index, sub.count,
               pid);
    jobs.emplace_back(devices[k], pid);
  }
  std::fflush(stdout);
  int failed = int(devices.size() - jobs.size());
  for (auto [device, pid] : jobs) {
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    const bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    failed += !ok;
    fmt::print("device {}: {}\n", device,
               ok ? std::string("done") : WIFEXITED(status) ? fmt::format("failed (exit {})", WEXITSTATUS(status))
                                                            : fmt::format("killed (signal {})", WTERMSIG(status)));
  }
  if (failed > 0) throw Error("tune", fmt::format("{} of {} device jobs failed (their messages are above)", failed, devices.size()));
}

void run_tune(const TuneFlags& o) {
  const Shard shard = o.shard.empty() ? Shard{} : parse_shard(o.shard);  // checked before any work
  if (!o.compile_only) {
    const std::vector<NamedShape> shapes = o.shapes.resolve();
    std::vector<GemmProblem> problems;
    for (const NamedShape& s : shapes) problems.push_back(o.problem.make(s));
    parse_m_list(o.m);  // every flag checked before any job starts
    if (!o.devices.empty()) return run_device_jobs(o, shard);
    return run_gpu_tune(o, shard, shapes, problems);
  }
  if (o.arch.empty()) throw Error("tune", "--compile-only needs --arch (e.g. --arch sm_90a)");
  parse_m_list(o.m);  // unused without a GPU, but a malformed list is still an error
  const Target target = o.with_experiments(Target::from_arch(o.arch));
  const std::vector<NamedShape> shapes = o.shapes.resolve();
  std::vector<GemmProblem> problems;
  for (const NamedShape& s : shapes) problems.push_back(o.problem.make(s));  // all valid first
  std::vector<KernelSpec> specs;
  std::vector<size_t> owner;
  const auto all_specs = filtered_specs(problems, target, o.filter);
  for (size_t j = 0; j < all_specs.size(); ++j) {
    if (!shard.holds(j)) continue;  // another shard's
    specs.push_back(all_specs[j].first);
    owner.push_back(all_specs[j].second);
  }
  if (!o.shard.empty())
    fmt::print("shard {}/{}: {} of the {} candidate kernels\n", shard.index, shard.count, specs.size(), all_specs.size());

  const std::unique_ptr<Compiler> compiler = make_compiler(target);
  cache::Cache cache(resolve_cache_path(o.cache), cache::Cache::Mode::read_write);
  std::vector<JitRequest> requests = jit_requests(specs);
  // Serving needs the utility module (quantize, colsum, the cuBLASLt dequant) beside the GEMM
  // kernels: stored here, a pre-tuned cache compiles nothing at prepare. The engine is NVIDIA's.
  if (!target.amd) requests.push_back({emit_utility(target.arch), std::nullopt});
  JitPolicy policy;
  policy.threads = o.jobs;
  Progress bar("compiling");
  policy.progress = [&](size_t d, size_t t) { bar.update(d, t); };
  std::vector<JitOutcome> results = fetch_or_compile_all(&cache, *compiler, requests, target, policy);
  bar.finish();
  std::optional<JitOutcome> utility;
  if (!target.amd) {
    utility = std::move(results.back());
    results.pop_back();
  }

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
      fmt::print(stderr, "i8gemm: {} failed to compile:\n{}\n", res.name, res.error);
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
  if (utility) {
    fmt::print("utility module {}: {}\n", utility->name, to_string(utility->status));
    if (utility->status == JitOutcome::Status::failed) {
      ++failed;
      fmt::print(stderr, "i8gemm: {} failed to compile:\n{}\n", utility->name, utility->error);
    }
  }
  fmt::print("arch {} ({}), cache {}\n", target.arch, compiler->version(), cache.path());
  if (failed > 0) throw CLI::RuntimeError(1);
}

}  // namespace

void setup_tune(CLI::App& app, const std::vector<std::string>& argv) {
  auto opts = std::make_shared<TuneFlags>();
  opts->argv = argv;
  CLI::App* cmd = app.add_subcommand("tune", "tune the given shapes: on a GPU, verify and time every candidate against cuBLASLt; with --compile-only, compile and store them");
  opts->shapes.add_to(*cmd);
  opts->problem.add_to(*cmd);
  CLI::Option* compile_only =
      cmd->add_flag("--compile-only", opts->compile_only, "compile and store candidates without a GPU");
  cmd->add_flag("--resume", opts->resume,
                "skip M buckets whose winner the cache already holds for this GPU, compiler and generator")
      ->excludes(compile_only);
  cmd->add_flag("--experimental-wgmma", opts->experimental_wgmma,
                "also try the experimental cp.async wgmma family (sm_90a; slower than wgmma_tma, which "
                "is always tried there; every candidate is verified bit-exact before it is timed)");
  cmd->add_flag("--experimental-staged-store", opts->experimental_staged_store,
                "also try wgmma_tma's staged-store twins (_es1: the output tile through shared memory and a "
                "TMA store; sm_90a, bf16/f16 outputs) where K is long; where K is short (<= 8 tiles of 128) they are "
                "always tried. Experimental: exact, not faster where K is long; verified bit-exact before timed)");
  cmd->add_flag("--experimental-packed-weight", opts->experimental_packed_weight,
                "also race wgmma_tma's packed-weight twins (_pw1: the weight pre-packed once, a tile's rows of a "
                "ring stage one bulk copy; sm_90a; each verified bit-exact on its pack of the same weights before timed); they "
                "appear in `inspect race` and are never stored as winners: serving passes the plain weight");
  cmd->add_flag("--experimental-tile-order", opts->experimental_tile_order,
                "also race wgmma_tma's tile-order twins of the large-M tiles where their tiles outnumber the SMs "
                "(_rg1 of the cooperative tiles; _lh1/_lh2/_lh3: L2 eviction hints, x evict_last and/or w "
                "evict_first; the ping-pong 128x128 dynamic schedule, _ds1; sm_90a; exact, not faster on the H100)");
  cmd->add_flag("--no-trigger-twins", opts->no_trigger_twins,
                "do not race the programmatic-launch trigger twins (_tr1: launch_dependents after the grid wait, _tr2: "
                "late) of each bucket's finalists, which a tune on sm_90+ compiles after its first round and races "
                "in the final one (decode_mma, wgmma_tma; docs/pdl.md)");
  cmd->add_option("--arch", opts->arch, "target arch, e.g. sm_90a, sm_80 (default: the GPU's)");
  add_cache_option(*cmd, opts->cache, "cache file (default: $I8GEMM_CACHE or ~/.cache/i8gemm/cache.sqlite)");
  cmd->add_option("--filter", opts->filter, "only kernels whose name matches this regex");
  cmd->add_option("-j,--jobs", opts->jobs, "parallel compiles (default: the CPUs this process may use, cgroup quota included)")->check(CLI::Range(0, 256));
  cmd->add_option("--m", opts->m, "M buckets to tune on a GPU, e.g. 1,16,256,4096")->capture_default_str();
  CLI::Option* device = cmd->add_option("--device", opts->device, "CUDA device ordinal")->check(CLI::Range(0, 64));
  cmd->add_option("--devices", opts->devices,
                  "tune on several GPUs of this host at once: 0,1,3 or all; one job per device, each taking a round-robin "
                  "share of the (shape, M) buckets, all writing the one cache")
      ->excludes(device)
      ->excludes(compile_only);
  cmd->add_option("--shard", opts->shard,
                  "I/N: tune only job I's share (from 0) of the work list, dealt round robin to N jobs (on a GPU the "
                  "(shape, M) buckets, with --compile-only the kernels); merge the N caches with `cache merge`");
  cmd->add_option("--samples", opts->samples, "timed samples per candidate (20 launches each)")->check(CLI::Range(3, 1000));
  cmd->add_option("--final-placements", opts->final_placements,
                  "time the final round over this many placements of the operands (moved to fresh memory between "
                  "them); each finalist keeps its median placement")
      ->check(CLI::Range(1, 8))
      ->capture_default_str();
  cmd->add_option("--final-warmup-ms", opts->final_warmup_ms,
                  "before each placement of the final round, replay the finalists for at least this many ms, so that "
                  "they are ranked under sustained load (as `bench --warmup-ms` times them)")
      ->check(CLI::Range(0.0, 10000.0))
      ->capture_default_str();
  cmd->add_option("--prune-factor", opts->prune_factor,
                  "candidates whose short probe is this many times the best probe so far are not fully timed "
                  "(a large value times every candidate)")
      ->capture_default_str()
      ->check(CLI::Range(1.0, 1e9));
  cmd->callback([opts] { run_tune(*opts); });
}

}  // namespace i8g::cli

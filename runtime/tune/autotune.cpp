#include "runtime/tune/autotune.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <random>
#include <regex>

#include "generator/generator.hpp"
#include "generator/packed_weight.hpp"
#include "runtime/compile/compiler.hpp"
#include "runtime/gpu/kernel_instance.hpp"
#include "runtime/gpu/lt_dequant.hpp"
#include "runtime/serve/jit.hpp"
#include "runtime/tune/measure.hpp"
#include "runtime/tune/operands.hpp"

namespace i8g {
namespace {

// Not measured stays NULL in the file (an empty optional), never a time of 0.
cache::Timing to_timing(const CandidateResult& c, const cache::TuneKey& key) {
  cache::Timing t;
  t.key = key;
  t.candidate = to_string(c.candidate);
  t.kernel_id = c.kernel_id;
  t.status = c.status;
  t.reason = c.reason;
  if (c.eager) {
    t.eager_median_us = c.eager->median_us;
    t.eager_p90_us = c.eager->p90_us;
    t.eager_min_us = c.eager->min_us;
  }
  if (c.graph) {
    t.graph_median_us = c.graph->median_us;
    t.graph_p90_us = c.graph->p90_us;
    t.graph_min_us = c.graph->min_us;
  }
  return t;
}

void store(cache::Cache& cache, const cache::TuneKey& key, const BucketResult& r) {
  std::vector<cache::Timing> rows;
  for (const CandidateResult& c : r.candidates) rows.push_back(to_timing(c, key));
  cache.put_timings(rows);
  const CandidateResult* w = r.winning();
  if (!w) return;
  cache::Winner win;
  win.key = key;
  win.candidate = to_string(w->candidate);
  win.kernel_id = w->kernel_id;
  win.time_us = w->graph->median_us;
  win.baseline_us = r.baseline_us.value_or(0);  // the winners table's "no baseline" (inspect: n/a)
  win.speedup = r.speedup;
  cache.put_winner(win);
}

// The final round (policy.hpp, finalists): each finalist's launch (`launch_of` instantiates a
// kernel into `keep`, which outlives the round), all timed again in turn. When that fails the
// first round's times stand and the finalists' reasons say why.
template <class LaunchOf>
void final_round(Measurer& measurer, BucketResult& r, int placements, double warmup_ms, LaunchOf launch_of) {
  const std::vector<size_t> fin = finalists(r.candidates);
  if (fin.empty()) return;
  try {
    std::vector<KernelInstance> keep;
    keep.reserve(fin.size());
    std::vector<Launch> launches;
    for (size_t i : fin) launches.push_back(launch_of(r.candidates[i].candidate, keep));
    measurer.final_round(r.candidates, fin, launches, placements, warmup_ms);
  } catch (const Error& e) {
    const std::string why = e.what();
    for (size_t i : fin) r.candidates[i].reason = "final round failed, the first round's times stand: " + why.substr(0, 500);
  }
}

// The programmatic-launch trigger twins (generator: trigger_twins) of the first round's
// finalists, or of its winner where too few are near it for a final round.
std::vector<KernelSpec> trigger_specs(const GemmProblem& p, const Target& t, const BucketResult& r) {
  std::vector<size_t> from = finalists(r.candidates);
  if (from.empty()) {
    const size_t w = pick_winner(r.candidates);
    if (w < r.candidates.size()) from.push_back(w);
  }
  std::vector<KernelSpec> out;
  for (size_t i : from)
    if (const KernelSpec* s = kernel_of(r.candidates[i].candidate))
      for (const KernelConfig& c : trigger_twins(p, s->config, t)) out.push_back({p, c, t.arch});
  return out;
}

}  // namespace

std::vector<BucketResult> autotune(Engine& engine, cache::Cache& cache, const GemmProblem& p,
                                   const TuneOptions& opt,
                                   const AutotuneProgress& progress, const BucketDone& bucket_done) {
  auto say = [&](const std::string& stage, size_t done, size_t total) {
    if (progress) progress(stage, done, total);
  };
  I8G_CU(cuCtxSetCurrent(engine.context()));
  Target t = engine.device().target;
  t.experimental_wgmma = opt.experimental_wgmma;  // changes the candidates, not any cache key
  t.experimental_staged_store = opt.experimental_staged_store;
  t.experimental_packed_weight = opt.experimental_packed_weight;
  t.experimental_tile_order = opt.experimental_tile_order;
  const std::unique_ptr<Compiler> compiler = make_compiler(t);
  std::vector<BucketResult> results;
  std::vector<int64_t> ms;
  for (int64_t m : opt.ms) {
    std::optional<cache::Winner> w;
    if (opt.resume) w = cache.get_winner(tune_key(engine.device(), compiler->version(), p, m));
    if (w) {
      BucketResult r;
      r.m = m;
      r.stored = std::move(w);
      results.push_back(std::move(r));
    } else {
      ms.push_back(m);
    }
  }
  if (ms.empty()) return results;
  std::vector<KernelSpec> specs;
  std::optional<std::regex> filter;
  if (!opt.filter.empty()) filter.emplace(opt.filter);
  for (const KernelConfig& c : candidates(p, t)) {
    KernelSpec s{p, c, t.arch};
    if (!filter || std::regex_search(s.name(), *filter)) specs.push_back(s);
  }
  const std::string compiling = fmt::format("{}: compiling", p.key());
  say(compiling, 0, specs.size());
  const std::vector<JitOutcome> built = compile_and_store(
      cache, *compiler, specs, t, opt.jobs, [&](size_t done, size_t total) { say(compiling, done, total); });

  // The packed layouts the candidates read (one per kp), made with each bucket's weight sets.
  std::vector<PackedWeightLayout> packs;
  for (const KernelSpec& s : specs)
    if (s.config.packed_weight) {
      const PackedWeightLayout l = packed_weight_layout(s);
      if (std::none_of(packs.begin(), packs.end(), [&](const PackedWeightLayout& q) { return q.name() == l.name(); }))
        packs.push_back(l);
    }
  Stream stream;
  std::mt19937_64 rng(std::random_device{}());
  for (int64_t m : ms) {
    BucketResult r;
    r.m = m;
    Operands ops(engine, p, m, rng, stream.s, packs);
    const std::unique_ptr<LtDequant> lt = engine.lt_dequant(p, m);
    int lt_algos = 0;
    try {
      lt_algos = lt->algo_count(m);
    } catch (const Error& e) {
      r.baseline_note = e.what();
    }
    auto run_lt = [&](int algo) -> Launch { return [&, algo](int call) { lt->run(algo, ops.args(call), stream.s); }; };
    // Each kernel gets an instance of its own: a fresh zeroed split-K workspace per candidate.
    // One that reads a packed weight gets the packs of the same weight sets.
    auto run_kernel = [&](const KernelInstance& k) -> Launch {
      const std::vector<DeviceBuffer>* packed =
          k.spec().config.packed_weight ? &ops.packed(packed_weight_layout(k.spec())) : nullptr;
      return [&, packed](int call) { k.launch(ops.args(call, packed), stream.s); };
    };
    Measurer measurer(ops, stream.s, opt.plan, opt.prune_factor);
    // Reference output of set 0: cuBLASLt + dequant where cuBLASLt runs, else the reference
    // family's default kernel; either way spot-checked against the CPU before use.
    if (lt_algos > 0) {
      measurer.take_reference(run_lt(0));
    } else {
      const KernelInstance d = engine.instantiate({p, heuristic_default(p, t, m), t.arch}, m);
      measurer.take_reference(run_kernel(d));
    }

    for (int algo = 0; algo < lt_algos; ++algo) {
      CandidateResult c;
      c.candidate = LtAlgo{algo};
      measurer.measure(c, run_lt(algo));
      r.candidates.push_back(c);
    }
    const std::string timing = fmt::format("{} M={}: timing", p.key(), m);
    const size_t to_time =
        r.candidates.size() + size_t(std::count_if(built.begin(), built.end(), [&](const JitOutcome& b) { return raced_at(b.spec, m); }));
    say(timing, r.candidates.size(), to_time);
    auto time_built = [&](const JitOutcome& b) {
      CandidateResult c;
      c.candidate = b.spec;
      c.kernel_id = b.kernel.id;
      if (b.status == JitOutcome::Status::failed) {
        c.status = cache::CandidateStatus::failed;
        c.reason = b.error.substr(0, 2000);
      } else {
        try {
          const KernelInstance k = engine.instantiate(b.spec, m);
          measurer.measure(c, run_kernel(k));
        } catch (const Error& e) {
          c.status = cache::CandidateStatus::failed;
          c.reason = e.what();
        }
      }
      r.candidates.push_back(c);
    };
    for (const JitOutcome& b : built) {
      if (!raced_at(b.spec, m)) continue;  // built for other M (decode_mma: one row tile per bucket)
      time_built(b);
      say(timing, r.candidates.size(), to_time);
    }
    // The trigger twins, compiled now (their count is known only after the first round).
    if (opt.trigger_twins)
      for (const JitOutcome& b : compile_and_store(cache, *compiler, trigger_specs(p, t, r), t, opt.jobs, {}))
        time_built(b);
    final_round(measurer, r, opt.final_placements, opt.final_warmup_ms, [&](const Candidate& c, std::vector<KernelInstance>& keep) -> Launch {
      if (const LtAlgo* a = lt_algo_of(c)) return run_lt(a->index);
      keep.push_back(engine.instantiate(*kernel_of(c), m));
      return run_kernel(keep.back());
    });
    decide(r);
    store(cache, tune_key(engine.device(), compiler->version(), p, m), r);
    if (bucket_done) bucket_done(m);
    results.push_back(std::move(r));
  }
  auto rank = [&](int64_t m) { return std::find(opt.ms.begin(), opt.ms.end(), m) - opt.ms.begin(); };
  std::stable_sort(results.begin(), results.end(),
                   [&](const BucketResult& a, const BucketResult& b) { return rank(a.m) < rank(b.m); });  // as asked
  return results;
}

}  // namespace i8g

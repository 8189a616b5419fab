#include "runtime/tune/autotune.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <regex>

#include "generator/generator.hpp"
#include "runtime/compile/compiler.hpp"
#include "runtime/gpu/cublaslt.hpp"
#include "runtime/gpu/device_buffer.hpp"
#include "runtime/serve/jit.hpp"
#include "runtime/tune/operands.hpp"
#include "runtime/tune/reference.hpp"

namespace i8g {
namespace {

// The CPU reference for a few whole rows of the output, compared with `got` (bytes of set 0).
std::string spot_check(const Operands& ops, const std::vector<uint8_t>& got) {
  const GemmProblem& p = ops.p;
  const size_t es = out_element_size(p.out);
  for (int64_t row : {int64_t(0), ops.m / 2, ops.m - 1}) {
    HostOperands one = ops.host;
    one.m = 1;
    one.x.assign(ops.host.x.begin() + row * p.k, ops.host.x.begin() + (row + 1) * p.k);
    if (p.act_scale == ActScale::per_token) one.x_scale = {ops.host.x_scale[size_t(row)]};
    if (p.asymmetric && p.act_scale == ActScale::per_token) one.x_zero_point = {ops.host.x_zero_point[size_t(row)]};
    const std::vector<uint8_t> want = reference_output(p, one);
    if (std::memcmp(want.data(), got.data() + size_t(row * p.n) * es, want.size()) != 0)
      return fmt::format("row {} differs from the CPU reference", row);
  }
  return {};
}

std::string compare(const std::vector<uint8_t>& want, const std::vector<uint8_t>& got, const GemmProblem& p) {
  if (want == got) return {};
  const size_t es = out_element_size(p.out);
  for (size_t i = 0; i < want.size(); i += es)
    if (std::memcmp(&want[i], &got[i], es) != 0)
      return fmt::format("output differs from the reference first at (m={}, n={})", int64_t(i / es) / p.n,
                         int64_t(i / es) % p.n);
  return "output differs";
}

}  // namespace

size_t pick_winner(const std::vector<CandidateResult>& c) {
  size_t best = c.size();
  for (size_t i = 0; i < c.size(); ++i)
    if (c[i].status == "ok" && c[i].graph.median_us > 0 &&
        (best == c.size() || c[i].graph.median_us < c[best].graph.median_us))
      best = i;
  if (best == c.size()) return best;
  size_t pick = best;
  for (size_t i = 0; i < c.size(); ++i)
    if (c[i].status == "ok" && c[i].graph.median_us > 0 &&
        c[i].graph.median_us <= 1.01 * c[best].graph.median_us && c[i].candidate < c[pick].candidate)
      pick = i;
  return pick;
}

std::vector<BucketResult> autotune(Engine& engine, cache::Cache& cache, const GemmProblem& p,
                                   const TuneOptions& opt,
                                   const AutotuneProgress& progress) {
  auto say = [&](const std::string& stage, size_t done, size_t total) {
    if (progress) progress(stage, done, total);
  };
  I8G_CU(cuCtxSetCurrent(engine.context()));
  Target t = engine.device().target;
  t.experimental_wgmma = opt.experimental_wgmma;  // changes the candidates, not any cache key
  const std::unique_ptr<Compiler> compiler = make_compiler(t);
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

  Stream stream;
  std::mt19937_64 rng(std::random_device{}());
  std::vector<BucketResult> results;
  for (int64_t m : opt.ms) {
    BucketResult r;
    r.m = m;
    Operands ops(engine, p, m, rng, stream.s);
    std::unique_ptr<LtGemm> lt;
    DeviceBuffer acc(size_t(m * p.n) * 4), ws(LtGemm::kWorkspaceBytes);
    // One split-K workspace, cleared before each kernel that uses it (a kernel leaves its own
    // counters at zero, but its partials would be another kernel's counters: mma_frag.h).
    size_t split_bytes = workspace_bytes({p, heuristic_default(p, t, m), t.arch}, m);
    for (const JitOutcome& b : built) split_bytes = std::max(split_bytes, workspace_bytes(b.spec, m));
    DeviceBuffer split_ws = zeroed_device_buffer(split_bytes);
    auto clear_workspace = [&](const KernelSpec& s) {
      if (s.config.split_k <= 1) return;
      split_ws.fill(0);
      I8G_CU(cuCtxSynchronize());
    };
    auto kernel_args = [&](int call) {
      I8gArgs a = ops.args(call);
      a.workspace = split_ws.get<int>();
      return a;
    };
    try {
      lt = std::make_unique<LtGemm>(LtGemm::Kind::i8_i32, m, p.n, p.k, p.layout);
    } catch (const Error& e) {
      r.baseline_note = e.what();
    }
    auto run_lt = [&](int algo, int call) {
      const I8gArgs a = ops.args(call);
      lt->run(algo, a.x, a.w, acc.get(), ws.get(), stream.s);
      engine.dequant(acc.get<int32_t>(), p, a, stream.s);
    };
    // Reference output of set 0: cuBLASLt + dequant where cuBLASLt runs, else the reference
    // family's default kernel; either way spot-checked against the CPU before use.
    std::vector<uint8_t> ref(ops.out_bytes), got(ops.out_bytes);
    ops.out[0].fill(0xff);
    if (lt) {
      run_lt(0, 0);
    } else {
      KernelConfig d = heuristic_default(p, t, m);
      clear_workspace({p, d, t.arch});
      engine.launch(engine.acquire({p, d, t.arch}), kernel_args(0), stream.s);
    }
    I8G_CU(cuStreamSynchronize(stream.s));
    ops.out[0].download(ref.data(), ref.size());
    if (std::string why = spot_check(ops, ref); !why.empty())
      throw Error("autotune", fmt::format("{} M={}: the reference itself is wrong: {}", p.key(), m, why));

    double best_probe = std::numeric_limits<double>::infinity();
    auto measure = [&](CandidateResult& c, const std::function<void(int)>& launch) {
      try {
        ops.out[0].fill(0xff);
        launch(0);
        I8G_CU(cuStreamSynchronize(stream.s));
        ops.out[0].download(got.data(), got.size());
        if (std::string why = compare(ref, got, p); !why.empty()) {
          c.status = "rejected";
          c.reason = why;
          return;
        }
        const Stats probe = time_eager(launch, stream.s, TimingPlan{3, 3, 5});
        if (probe.median_us > opt.prune_factor * best_probe) {
          c.status = "ok";
          c.eager = probe;
          c.reason = fmt::format("pruned: probe {:.1f} us > {}x the best probe ({:.1f} us)", probe.median_us,
                                 opt.prune_factor, best_probe);
          return;
        }
        best_probe = std::min(best_probe, probe.median_us);
        c.eager = time_eager(launch, stream.s, opt.plan);
        c.graph = time_graph(launch, stream.s, opt.plan);
        c.status = "ok";
      } catch (const Error& e) {
        c.status = "failed";
        c.reason = e.what();
        driver().cuStreamSynchronize(stream.s);
      }
    };
    if (lt) {
      for (int algo = 0; algo < lt->algo_count(); ++algo) {
        CandidateResult c;
        c.candidate = fmt::format("cublaslt:algo={}", algo);
        measure(c, [&](int call) { run_lt(algo, call); });
        r.candidates.push_back(c);
      }
    }
    const std::string timing = fmt::format("{} M={}: timing", p.key(), m);
    const size_t to_time = r.candidates.size() + built.size();
    say(timing, r.candidates.size(), to_time);
    for (const JitOutcome& b : built) {
      CandidateResult c;
      c.candidate = b.spec.name();
      c.kernel_id = b.kernel.id;
      if (b.status == JitOutcome::Status::failed) {
        c.status = "failed";
        c.reason = b.error.substr(0, 2000);
      } else {
        try {
          const Engine::KernelHandle h = engine.acquire(b.spec);
          clear_workspace(b.spec);
          measure(c, [&](int call) { engine.launch(h, kernel_args(call), stream.s); });
        } catch (const Error& e) {
          c.status = "failed";
          c.reason = e.what();
        }
      }
      r.candidates.push_back(c);
      say(timing, r.candidates.size(), to_time);
    }
    // Winner and baseline (graph medians).
    const size_t w = pick_winner(r.candidates);
    for (const CandidateResult& c : r.candidates)
      if (c.candidate.rfind("cublaslt:", 0) == 0 && c.status == "ok" && c.graph.median_us > 0 &&
          (r.baseline_us == 0 || c.graph.median_us < r.baseline_us))
        r.baseline_us = c.graph.median_us;
    const cache::TuneKey key = tune_key(engine.device(), compiler->version(), p, m);
    std::vector<cache::Timing> rows;
    for (const CandidateResult& c : r.candidates) {
      cache::Timing tm;
      tm.key = key;
      tm.candidate = c.candidate;
      tm.kernel_id = c.kernel_id;
      tm.status = c.status;
      tm.reason = c.reason;
      tm.eager_median_us = c.eager.median_us;
      tm.eager_p90_us = c.eager.p90_us;
      tm.eager_min_us = c.eager.min_us;
      tm.graph_median_us = c.graph.median_us;
      tm.graph_p90_us = c.graph.p90_us;
      tm.graph_min_us = c.graph.min_us;
      rows.push_back(tm);
    }
    cache.put_timings(rows);
    if (w < r.candidates.size()) {
      r.winner = r.candidates[w].candidate;
      r.winner_us = r.candidates[w].graph.median_us;
      r.speedup = r.baseline_us > 0 ? r.baseline_us / r.winner_us : 0;
      cache::Winner win;
      win.key = key;
      win.candidate = r.winner;
      win.kernel_id = r.candidates[w].kernel_id;
      win.time_us = r.winner_us;
      win.baseline_us = r.baseline_us;
      win.speedup = r.speedup;
      cache.put_winner(win);
    }
    results.push_back(std::move(r));
  }
  return results;
}

}  // namespace i8g

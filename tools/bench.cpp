// i8gemm bench: the kernel prepare chooses (tuned winner or default) against the tuner's own
// cuBLASLt int8 -> int32 + dequant candidate (and its two halves apart) and cuBLASLt bf16 (and,
// with --experimental-packed-weight, the fastest packed-weight twin the tune raced), in one run, graph-replayed (every row, first) and eager (every row, after), over rotating
// buffers (> 256 MB) with random data, the SM clock sampled. Prints a table; --csv / --json
// write one row per contender (the schema bench/report.py merges with the peers' rows).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>

#include "cache/cache.hpp"
#include "core/error.hpp"
#include "generator/generator.hpp"
#include "generator/packed_weight.hpp"
#include "runtime/gpu/clock_sampler.hpp"
#include "runtime/gpu/cublaslt.hpp"
#include "runtime/gpu/device_buffer.hpp"
#include "runtime/gpu/kernel_instance.hpp"
#include "runtime/gpu/lt_dequant.hpp"
#include "runtime/serve/candidate.hpp"
#include "runtime/serve/engine.hpp"
#include "runtime/tune/operands.hpp"
#include "runtime/gpu/timing.hpp"
#include "tools/cli.hpp"

namespace i8g::cli {
namespace {

struct BenchFlags {
  ShapeFlags shapes;
  ProblemFlags problem;
  std::string cache, m = "1,16,256,4096", csv, json;
  int device = 0, samples = 50;
  double warmup_ms = 0;     // --warmup-ms: each timing's warm-up lasts at least this long
  bool packed = false;      // --experimental-packed-weight
  bool graph_only = false;  // --graph-only: no eager pass (no eager or host times)
};

// One contender's timings in one row; status "ok" or why it has none.
struct Measured {
  Stats eager, graph;
  ClockReading clock;
  std::string status = "not run", note;
  int algo = 0;  // for best(): the variant whose times these are
};

// Contenders, in the table's column order. cublaslt_i8 is int8 -> int32 alone (no dequant):
// the line a fused kernel has to beat, not a peer of the fused operator; dequant is the
// baseline's second kernel alone (so the two halves of cublaslt_i8_dq_tuner are visible).
// i8gemm_packed (--experimental-packed-weight): the fastest packed-weight twin of the bucket's race,
// on packs of the same weights; not what serving runs (it passes the plain weight).
const std::vector<std::string> kContenders = {"i8gemm", "i8gemm_packed", "cublaslt_i8_dq_tuner", "cublaslt_i8",
                                              "dequant", "cublaslt_bf16"};

struct Row {
  std::string shape, kernel;
  int64_t m = 0, n = 0, k = 0;
  std::map<std::string, Measured> by;
  double host_run_us = 0, host_launch_us = 0;  // host time per call (0: not measured)
  bool verified = false;
};

// Host time of one call: the median over 20 batches of 100 eager calls, timed without their
// completion (a batch is short enough that the launch queue never fills and blocks), with a
// synchronize between batches.
double host_us_per_call(const std::function<void(int)>& call, CUstream s) {
  std::vector<double> per;
  for (int b = 0; b < 21; ++b) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < 100; ++i) call(i);
    const auto t1 = std::chrono::steady_clock::now();
    I8G_CU(cuStreamSynchronize(s));
    if (b > 0) per.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / 100);
  }
  std::nth_element(per.begin(), per.begin() + per.size() / 2, per.end());
  return per[per.size() / 2];
}

// Graph replay first, eager after: every row's graph times are taken before any eager launch in
// the process. On the H200 (2026-12-01), after one row's eager and host timings every later
// graph-replayed kernel of the process (cuBLASLt's, the dequant, i8gemm's) took ~0.3 us longer
// at small M; without them a three-row run stayed clean. A 20-row run still drifts the same
// way on later rows, cause not found (docs/performance.md, "process-state effect").
enum class Pass { graph, eager };

struct Timer {
  CUstream s;
  TimingPlan plan;
  ClockSampler& clock;
  Pass pass;
  // Graph replay with the clock sampled (graph pass), or eager into `into` (eager pass).
  void operator()(Measured& into, const std::function<void(int)>& launch, const std::string& note = {}) const {
    if (pass == Pass::eager) {
      if (into.status == "ok") into.eager = time_eager(launch, s, plan);
      return;
    }
    clock.start();
    into.graph = time_graph(launch, s, plan);
    into.clock = clock.stop();
    into.status = "ok";
    into.note = note;
  }
  // The best of `count` variants (cuBLASLt's heuristic algorithms) by graph median; the eager
  // pass times that one.
  void best(Measured& into, int count, const std::function<void(int, int)>& launch, const std::string& what) const {
    if (pass == Pass::eager) {
      const int at = into.algo;
      (*this)(into, [&](int call) { launch(at, call); });
      return;
    }
    for (int a = 0; a < count; ++a) {
      Measured m;
      (*this)(m, [&](int call) { launch(a, call); }, fmt::format("{} algo {} of {}", what, a, count));
      m.algo = a;
      if (a == 0 || m.graph.median_us < into.graph.median_us) into = m;
    }
  }
};

// The fastest fully timed packed-weight twin (_pw1) that a tune on this GPU and arch raced for p at
// M bucket m (tune --experimental-packed-weight), by graph median over every such row the cache
// holds; nullopt when none.
std::optional<KernelSpec> fastest_packed(const std::vector<cache::Timing>& timings, const DeviceInfo& dev,
                                         const GemmProblem& p, int64_t m) {
  const cache::Timing* best = nullptr;
  for (const cache::Timing& t : timings) {
    if (t.key.problem_key != p.key() || t.key.m_bucket != m || t.key.arch != dev.target.arch ||
        t.key.gpu_name != dev.name || t.status != cache::CandidateStatus::ok || !t.graph_median_us)
      continue;
    std::optional<Candidate> c;
    try {
      c = parse_candidate(t.candidate);
    } catch (const Error&) {
      continue;
    }
    const KernelSpec* k = kernel_of(*c);
    if (k && k->config.packed_weight && (!best || *t.graph_median_us < *best->graph_median_us)) best = &t;
  }
  if (!best) return std::nullopt;
  return *kernel_of(parse_candidate(best->candidate));
}

// One row's pass: the graph pass fills r (prepare, times, verification), the eager pass adds
// eager and host times to it. `packed`: the packed-weight twin to time beside prepare's kernel.
void bench_one(Engine& e, const GemmProblem& p, int64_t m, const TimingPlan& base, ClockSampler& clock,
               std::mt19937_64& rng, Pass pass, const std::optional<KernelSpec>& packed, Row& r) {
  I8G_CU(cuCtxSetCurrent(e.context()));
  Stream st;
  e.prepare(p, m);
  std::vector<PackedWeightLayout> packs;  // the packed twin's layout, made with the weight sets
  if (packed) packs.push_back(packed_weight_layout(*packed));
  Operands ops(e, p, m, rng, st.s, packs);
  TimingPlan plan = base;
  plan.rotation = ops.sets();
  const Timer time{st.s, plan, clock, pass};
  const bool graph_pass = pass == Pass::graph;
  r.m = m;
  r.n = p.n;
  r.k = p.k;
  const std::optional<Candidate> chosen = e.kernel_for(p, m);
  r.kernel = chosen ? to_string(*chosen) : std::string();
  auto ours = [&](int call) {
    const I8gArgs a = ops.args(call);
    e.run(p, a, st.s);
  };
  time(r.by["i8gemm"], ours, r.kernel);
  // What the run path adds on the host: i8gemm_run's checks and lookup against a bare launch
  // of the same kernel (KernelInstance::launch). Kernels only: a cuBLASLt bucket has no bare
  // twin.
  if (const KernelSpec* spec = chosen && !graph_pass ? kernel_of(*chosen) : nullptr) {
    const KernelInstance bare = e.instantiate(*spec, m);
    r.host_run_us = host_us_per_call(ours, st.s);
    r.host_launch_us = host_us_per_call([&](int call) { bare.launch(ops.args(call), st.s); }, st.s);
  }
  // The graph pass checks what it times on set 0: the output of `run` over a poisoned buffer.
  auto output_of = [&](const std::function<void()>& run) {
    std::vector<uint8_t> v(ops.out_bytes);
    ops.out[0].fill(0xff);
    I8G_CU(cuCtxSynchronize());  // the fill runs on the legacy stream
    run();
    I8G_CU(cuStreamSynchronize(st.s));
    ops.out[0].download(v.data(), v.size());
    return v;
  };
  // prepare's output on set 0, downloaded once for both checks below (packed twin, cuBLASLt)
  const std::vector<uint8_t> ours_out = graph_pass ? output_of([&] { ours(0); }) : std::vector<uint8_t>();
  if (packed) {
    // Its output on set 0 must be prepare's kernel's (verified against cuBLASLt below) before it
    // is timed; the eager pass times it only where the graph pass did.
    Measured& into = r.by["i8gemm_packed"];
    try {
      const KernelInstance k = e.instantiate(*packed, m);
      const std::vector<DeviceBuffer>* w = &ops.packed(packs.front());
      auto launch = [&](int call) { k.launch(ops.args(call, w), st.s); };
      bool same = true;
      if (graph_pass) {
        same = output_of([&] { launch(0); }) == ours_out;
        if (!same) into.status = "output differs from prepare's kernel's: " + packed->name();
      }
      if (same) time(into, launch, packed->name());
    } catch (const Error& err) {
      into.status = err.what();
    }
  }

  try {
    const std::unique_ptr<LtDequant> lt = e.lt_dequant(p, m);
    const int algos = lt->algo_count(m);
    time.best(r.by["cublaslt_i8_dq_tuner"], algos, [&](int algo, int call) { lt->run(algo, ops.args(call), st.s); },
              "cuBLASLt i8 + dequant");
    time.best(r.by["cublaslt_i8"], algos, [&](int algo, int call) { lt->run_gemm(algo, ops.args(call), st.s); },
              "cuBLASLt i8 -> i32");
    time(r.by["dequant"], [&](int call) { lt->run_dequant(ops.args(call), st.s); }, "the library's dequant of the accumulator");
    if (graph_pass) {
      // Same bytes from both paths on set 0: a cheap end-to-end check of what was timed.
      r.verified = output_of([&] { lt->run(0, ops.args(0), st.s); }) == ours_out;
    }
  } catch (const Error& err) {
    for (const char* c : {"cublaslt_i8_dq_tuner", "cublaslt_i8", "dequant"}) r.by[c].status = err.what();
  }
  try {  // bf16 peer: same shape, bf16 operands, rotated the same way
    const size_t xb = size_t(m * p.k) * 2, wb = size_t(p.n * p.k) * 2, ob = size_t(m * p.n) * 2;
    const int sets = int(std::clamp<size_t>(kRotationBytes / (xb + wb + ob) + 1, 1, kMaxSets));
    std::vector<DeviceBuffer> x, w, o;
    std::vector<uint16_t> host(std::max(xb, wb) / 2);
    std::uniform_real_distribution<float> d(-1.0f, 1.0f);
    for (uint16_t& v : host) v = f32_to_bf16_rne(d(rng));
    for (int i = 0; i < sets; ++i) {
      x.emplace_back(xb).upload(host.data(), xb);
      w.emplace_back(wb).upload(host.data(), wb);
      o.emplace_back(ob);
    }
    const DeviceBuffer bf16_ws(LtGemm::kWorkspaceBytes);
    LtGemm bf(LtGemm::Kind::bf16_bf16, m, p.n, p.k, WeightLayout::nk);
    Timer bf_time = time;
    bf_time.plan.rotation = sets;
    bf_time.best(
        r.by["cublaslt_bf16"], bf.algo_count(),
        [&](int algo, int call) {
          const size_t i = size_t(call % sets);
          bf.run(algo, x[i].get(), w[i].get(), o[i].get(), bf16_ws.get(), st.s);
        },
        "cuBLASLt bf16");
  } catch (const Error& err) {
    r.by["cublaslt_bf16"].status = err.what();
  }
}

// An eager time exists only where the eager pass ran (not with --graph-only).
bool has_eager(const Measured& m) { return m.eager.median_us > 0; }

std::string cell(const Measured& m) {
  if (m.status != "ok") return "n/a";
  return has_eager(m) ? fmt::format("{:.2f} ({:.2f})", m.graph.median_us, m.eager.median_us)
                               : fmt::format("{:.2f} (-)", m.graph.median_us);  // --graph-only
}

void run_bench(const BenchFlags& o) {
  const std::vector<NamedShape> shapes = o.shapes.resolve();
  const std::vector<int64_t> ms = parse_m_list(o.m);
  std::vector<GemmProblem> problems;
  for (const NamedShape& s : shapes) problems.push_back(o.problem.make(s));
  std::unique_ptr<Engine> e;
  try {
    e = std::make_unique<Engine>(o.device, resolve_cache_path(o.cache));
  } catch (const Error& err) {
    throw Error("bench", fmt::format("{} (bench needs a GPU)", err.what()));
  }
  TimingPlan plan;
  plan.samples = o.samples;
  plan.warmup_ms = o.warmup_ms;
  ClockSampler clock(e->device().pci_bus_id);
  if (!clock.available()) fmt::print(stderr, "i8gemm: no SM clock readings: {}\n", clock.why());
  std::mt19937_64 rng(std::random_device{}());
  // --experimental-packed-weight: the race the tune stored (read once; a missing cache is an error).
  std::vector<cache::Timing> timings;
  if (o.packed) timings = cache::Cache(resolve_cache_path(o.cache), cache::Cache::Mode::read_only).all_timings();
  std::vector<Row> rows;
  const std::vector<Pass> passes = o.graph_only ? std::vector<Pass>{Pass::graph} : std::vector<Pass>{Pass::graph, Pass::eager};
  for (Pass pass : passes) {
    size_t at = 0;
    for (size_t i = 0; i < problems.size(); ++i)
      for (int64_t m : ms) {
        if (pass == Pass::graph) {
          rows.emplace_back();
          rows.back().shape = shapes[i].name.empty() ? fmt::format("{}x{}", shapes[i].n, shapes[i].k) : shapes[i].name;
        }
        Row& r = rows[at++];
        fmt::print(stderr, "  bench {} M={} ({})\n", r.shape, m, pass == Pass::graph ? "graph replay" : "eager");
        bench_one(*e, problems[i], m, plan, clock, rng, pass,
                  o.packed ? fastest_packed(timings, e->device(), problems[i], m) : std::nullopt, r);
      }
  }
  const int sms = e->device().target.sm_count;
  fmt::print("{} ({} SMs), driver {}; graph-replay medians in us (eager in parentheses); random data, rotated buffers\n",
             e->device().name, sms, e->device().driver_version);
  fmt::print("{:<14} {:>5} {:>16} {:>16} {:>16} {:>16} {:>16} {:>8} {:>6} {:>8} {:>4}  {}\n", "shape", "M", "i8gemm",
             "cuBLASLt i8+dq", "cuBLASLt i8", "dequant", "cuBLASLt bf16", "TOPS", "MHz", "vs i8+dq", "ok", "kernel");
  nlohmann::json js_rows = nlohmann::json::array();
  std::string csv = "shape,m,n,k,contender,status,graph_median_us,graph_p90_us,graph_min_us,eager_median_us,sm_mhz,power_w,note\n";
  for (const Row& r : rows) {
    const Measured& ours = r.by.at("i8gemm");
    const double t = ours.graph.median_us;
    const double tops = 2.0 * double(r.m) * double(r.n) * double(r.k) / (t * 1e6);
    auto get = [&](const std::string& c) { auto it = r.by.find(c); return it == r.by.end() ? Measured{} : it->second; };
    const Measured lt = get("cublaslt_i8_dq_tuner");
    fmt::print("{:<14} {:>5} {:>16} {:>16} {:>16} {:>16} {:>16} {:>8.1f} {:>6.0f} {:>8} {:>4}  {}\n", r.shape, r.m,
               cell(ours), cell(lt), cell(get("cublaslt_i8")), cell(get("dequant")), cell(get("cublaslt_bf16")), tops,
               ours.clock.sm_mhz, lt.status == "ok" ? fmt::format("{:.2f}x", lt.graph.median_us / t) : "n/a",
               r.verified ? "yes" : "NO", r.kernel);
    for (const std::string& c : kContenders) {
      if (!r.by.count(c)) continue;  // not asked for (i8gemm_packed without the flag)
      const Measured x = get(c);
      const bool ok = x.status == "ok";
      auto num = [&](double v) { return ok ? nlohmann::json(v) : nlohmann::json(nullptr); };
      auto eager = [&](double v) { return has_eager(x) ? num(v) : nlohmann::json(nullptr); };
      nlohmann::json row = {{"contender", c}, {"shape", r.shape}, {"n", r.n}, {"k", r.k}, {"m", r.m},
                            {"status", x.status}, {"graph_median_us", num(x.graph.median_us)},
                            {"graph_p90_us", num(x.graph.p90_us)}, {"graph_min_us", num(x.graph.min_us)},
                            {"eager_median_us", eager(x.eager.median_us)}, {"eager_p90_us", eager(x.eager.p90_us)},
                            {"sm_mhz", x.clock.samples ? nlohmann::json(x.clock.sm_mhz) : nlohmann::json(nullptr)},
                            {"power_w", x.clock.samples ? nlohmann::json(x.clock.power_w) : nlohmann::json(nullptr)},
                            {"mem_mhz", x.clock.samples ? nlohmann::json(x.clock.mem_mhz) : nlohmann::json(nullptr)},
                            {"note", x.note}};
      if (c == "i8gemm") {
        row["verified"] = r.verified;
        row["host_run_us"] = r.host_run_us;
        row["host_launch_us"] = r.host_launch_us;
      }
      js_rows.push_back(row);
      csv += fmt::format("{},{},{},{},{},\"{}\",{:.3f},{:.3f},{:.3f},{:.3f},{:.0f},{:.1f},\"{}\"\n", r.shape, r.m, r.n, r.k,
                         c, x.status, x.graph.median_us, x.graph.p90_us, x.graph.min_us, x.eager.median_us,
                         x.clock.sm_mhz, x.clock.power_w, x.note);
    }
  }
  if (!o.graph_only)
    fmt::print("\nhost time per call (us; median of 20 batches of 100 eager calls): i8gemm_run against a bare "
               "launch of the same kernel\n{:<14} {:>5} {:>10} {:>12} {:>10}\n", "shape", "M", "i8gemm_run",
               "bare launch", "run adds");
  for (const Row& r : rows)
    if (r.host_run_us > 0)
      fmt::print("{:<14} {:>5} {:>10.2f} {:>12.2f} {:>10.2f}\n", r.shape, r.m, r.host_run_us, r.host_launch_us,
                 r.host_run_us - r.host_launch_us);
  if (o.packed) {
    fmt::print("\nthe fastest packed-weight twin of each bucket's race (graph-replay medians, us), against "
               "prepare's kernel\n{:<14} {:>5} {:>10} {:>14} {:>8}  {}\n", "shape", "M", "i8gemm", "i8gemm_packed",
               "ratio", "packed twin");
    for (const Row& r : rows) {
      const Measured& ours = r.by.at("i8gemm");
      const auto it = r.by.find("i8gemm_packed");
      if (it == r.by.end()) {
        fmt::print("{:<14} {:>5} {:>10.2f} {:>14} {:>8}  (none raced for this bucket)\n", r.shape, r.m,
                   ours.graph.median_us, "n/a", "");
        continue;
      }
      const Measured& pk = it->second;
      if (pk.status != "ok") {
        fmt::print("{:<14} {:>5} {:>10.2f} {:>14} {:>8}  {}\n", r.shape, r.m, ours.graph.median_us, "n/a", "", pk.status);
        continue;
      }
      fmt::print("{:<14} {:>5} {:>10.2f} {:>14.2f} {:>7.3f}x  {}\n", r.shape, r.m, ours.graph.median_us,
                 pk.graph.median_us, pk.graph.median_us / ours.graph.median_us, pk.note);
    }
  }
  if (!o.csv.empty()) std::ofstream(o.csv) << csv;
  if (!o.json.empty()) {
    nlohmann::json js = json_document("bench");
    js.update(nlohmann::json{{"tool", "i8gemm bench"}, {"device", e->device().name}, {"sm_count", sms},
                             {"driver", e->device().driver_version}, {"rows", js_rows}});
    std::ofstream(o.json) << js.dump(2) << "\n";
  }
}

}  // namespace

void setup_bench(CLI::App& app) {
  auto opts = std::make_shared<BenchFlags>();
  CLI::App* cmd = app.add_subcommand("bench", "time the chosen kernel against cuBLASLt i8+dequant and bf16 (GPU)");
  opts->shapes.add_to(*cmd);
  opts->problem.add_to(*cmd);
  cmd->add_option("--m", opts->m, "M values, e.g. 1,16,256,4096")->capture_default_str();
  add_cache_option(*cmd, opts->cache, "cache file (default: $I8GEMM_CACHE or ~/.cache/i8gemm/cache.sqlite)");
  cmd->add_option("--device", opts->device, "CUDA device ordinal")->check(CLI::Range(0, 64));
  cmd->add_option("--samples", opts->samples, "timed samples (20 launches each)")->check(CLI::Range(3, 1000));
  cmd->add_option("--warmup-ms", opts->warmup_ms,
                  "warm each timing up for at least this many ms of its own launches (after an idle GPU some kernels "
                  "run slower at first)")
      ->check(CLI::Range(0.0, 10000.0));
  cmd->add_option("--csv", opts->csv, "also write the table as CSV to this file");
  cmd->add_option("--json", opts->json, "also write the results as JSON to this file");
  cmd->add_flag("--experimental-packed-weight", opts->packed,
                "also time, per row, the fastest packed-weight twin (_pw1) that `tune --experimental-packed-weight` "
                "raced for that M bucket in the cache (contender i8gemm_packed, on a pack of the same weights, its "
                "output checked against prepare's kernel's first)");
  cmd->add_flag("--graph-only", opts->graph_only,
                "time graph replays only: no eager pass, so no eager or host times (about half the run)");
  cmd->callback([opts] { run_bench(*opts); });
}

}  // namespace i8g::cli

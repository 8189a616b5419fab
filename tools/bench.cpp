// i8gemm bench: the kernel prepare chooses (tuned winner or default) against cuBLASLt
// int8 -> int32 + dequant and cuBLASLt bf16, in one run, eager and graph-replayed, over
// rotating buffers (> 256 MB) with random data. Prints a table; --csv / --json write files.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>

#include "core/error.hpp"
#include "generator/generator.hpp"
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
};

struct Row {
  std::string shape, kernel;
  int64_t m = 0, n = 0, k = 0;
  Stats ours_eager, ours_graph, lt_eager, lt_graph, bf16_eager, bf16_graph;
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

// The best of cuBLASLt's heuristic algorithms by graph median (each one timed the same way).
std::pair<Stats, Stats> best_lt(int algo_count, const std::function<void(int, int)>& launch, CUstream s,
                                const TimingPlan& plan) {
  std::pair<Stats, Stats> best{};
  for (int a = 0; a < algo_count; ++a) {
    auto l = [&](int call) { launch(a, call); };
    const Stats graph = time_graph(l, s, plan);
    if (a == 0 || graph.median_us < best.second.median_us) best = {time_eager(l, s, plan), graph};
  }
  return best;
}

Row bench_one(Engine& e, const GemmProblem& p, const std::string& label, int64_t m, const TimingPlan& plan,
              std::mt19937_64& rng) {
  I8G_CU(cuCtxSetCurrent(e.context()));
  Stream st;
  e.prepare(p, m);
  Operands ops(e, p, m, rng, st.s);
  Row r;
  r.shape = label;
  r.m = m;
  r.n = p.n;
  r.k = p.k;
  const std::optional<Candidate> chosen = e.kernel_for(p, m);
  r.kernel = chosen ? to_string(*chosen) : std::string();
  auto ours = [&](int call) {
    const I8gArgs a = ops.args(call);
    e.run(p, a, st.s);
  };
  r.ours_eager = time_eager(ours, st.s, plan);
  r.ours_graph = time_graph(ours, st.s, plan);
  // What the run path adds on the host: i8gemm_run's checks and lookup against a bare launch
  // of the same kernel (KernelInstance::launch). Kernels only: a cuBLASLt bucket has no bare
  // twin.
  if (const KernelSpec* spec = chosen ? kernel_of(*chosen) : nullptr) {
    const KernelInstance bare = e.instantiate(*spec, m);
    r.host_run_us = host_us_per_call(ours, st.s);
    r.host_launch_us = host_us_per_call([&](int call) { bare.launch(ops.args(call), st.s); }, st.s);
  }

  const std::unique_ptr<LtDequant> lt = e.lt_dequant(p, m);
  const DeviceBuffer bf16_ws(LtGemm::kWorkspaceBytes);
  try {
    auto run_lt = [&](int algo, int call) { lt->run(algo, ops.args(call), st.s); };
    std::tie(r.lt_eager, r.lt_graph) = best_lt(lt->algo_count(m), run_lt, st.s, plan);
    // Same bytes from both paths on set 0: a cheap end-to-end check of what was timed.
    std::vector<uint8_t> a(ops.out_bytes), b(ops.out_bytes);
    ours(0);
    I8G_CU(cuStreamSynchronize(st.s));
    ops.out[0].download(a.data(), a.size());
    run_lt(0, 0);
    I8G_CU(cuStreamSynchronize(st.s));
    ops.out[0].download(b.data(), b.size());
    r.verified = a == b;
  } catch (const Error& err) {
    fmt::print(stderr, "i8gemm: cuBLASLt int8 unavailable for {} M={}: {}\n", label, m, err.what());
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
    LtGemm bf(LtGemm::Kind::bf16_bf16, m, p.n, p.k, WeightLayout::nk);
    auto run_bf = [&](int algo, int call) {
      const size_t i = size_t(call % sets);
      bf.run(algo, x[i].get(), w[i].get(), o[i].get(), bf16_ws.get(), st.s);
    };
    std::tie(r.bf16_eager, r.bf16_graph) = best_lt(bf.algo_count(), run_bf, st.s, plan);
  } catch (const Error& err) {
    fmt::print(stderr, "i8gemm: cuBLASLt bf16 unavailable for {} M={}: {}\n", label, m, err.what());
  }
  return r;
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
  std::mt19937_64 rng(std::random_device{}());
  std::vector<Row> rows;
  for (size_t i = 0; i < problems.size(); ++i)
    for (int64_t m : ms) {
      const std::string label = shapes[i].name.empty() ? fmt::format("{}x{}", shapes[i].n, shapes[i].k) : shapes[i].name;
      fmt::print(stderr, "  bench {} M={}\n", label, m);
      rows.push_back(bench_one(*e, problems[i], label, m, plan, rng));
    }
  const size_t es = problems.empty() ? 2 : out_element_size(problems[0].out);
  fmt::print("{} ({} SMs), driver {}; graph-replay medians in us (eager in parentheses); random data, rotated buffers\n",
             e->device().name, e->device().target.sm_count, e->device().driver_version);
  fmt::print("{:<14} {:>5} {:>16} {:>16} {:>16} {:>8} {:>7} {:>8} {:>8} {:>4}  {}\n", "shape", "M", "i8gemm",
             "cuBLASLt i8+dq", "cuBLASLt bf16", "TOPS", "TB/s", "vs i8+dq", "vs bf16", "ok", "kernel");
  nlohmann::json js = nlohmann::json::array();
  std::string csv = "shape,m,n,k,kernel,ours_graph_us,ours_graph_p90_us,ours_eager_us,lt_graph_us,lt_eager_us,bf16_graph_us,bf16_eager_us,tops,tbps,verified\n";
  for (const Row& r : rows) {
    const double t = r.ours_graph.median_us;
    const double tops = 2.0 * double(r.m) * double(r.n) * double(r.k) / (t * 1e6);
    const double bytes = double(r.m * r.k + r.n * r.k) + double(r.m * r.n) * double(es);
    const double tbps = bytes / (t * 1e6);
    auto ratio = [&](double peer) { return peer > 0 ? fmt::format("{:.2f}x", peer / t) : std::string("n/a"); };
    fmt::print("{:<14} {:>5} {:>7.2f} ({:>6.2f}) {:>7.2f} ({:>6.2f}) {:>7.2f} ({:>6.2f}) {:>8.1f} {:>7.2f} {:>8} {:>8} {:>4}  {}\n",
               r.shape, r.m, t, r.ours_eager.median_us, r.lt_graph.median_us, r.lt_eager.median_us,
               r.bf16_graph.median_us, r.bf16_eager.median_us, tops, tbps, ratio(r.lt_graph.median_us),
               ratio(r.bf16_graph.median_us), r.verified ? "yes" : "NO", r.kernel);
    csv += fmt::format("{},{},{},{},{},{:.3f},{:.3f},{:.3f},{:.3f},{:.3f},{:.3f},{:.3f},{:.1f},{:.3f},{}\n", r.shape, r.m,
                       r.n, r.k, r.kernel, t, r.ours_graph.p90_us, r.ours_eager.median_us, r.lt_graph.median_us,
                       r.lt_eager.median_us, r.bf16_graph.median_us, r.bf16_eager.median_us, tops, tbps, r.verified);
    js.push_back({{"shape", r.shape}, {"m", r.m}, {"n", r.n}, {"k", r.k}, {"kernel", r.kernel},
                  {"ours", {{"graph_median_us", t}, {"graph_p90_us", r.ours_graph.p90_us}, {"graph_min_us", r.ours_graph.min_us},
                            {"eager_median_us", r.ours_eager.median_us}, {"eager_p90_us", r.ours_eager.p90_us}}},
                  {"cublaslt_i8_dequant", {{"graph_median_us", r.lt_graph.median_us}, {"eager_median_us", r.lt_eager.median_us}}},
                  {"cublaslt_bf16", {{"graph_median_us", r.bf16_graph.median_us}, {"eager_median_us", r.bf16_eager.median_us}}},
                  {"tops", tops}, {"tbps", tbps}, {"verified", r.verified},
                  {"host_run_us", r.host_run_us}, {"host_launch_us", r.host_launch_us}});
  }
  fmt::print("\nhost time per call (us; median of 20 batches of 100 eager calls): i8gemm_run against a bare "
             "launch of the same kernel\n{:<14} {:>5} {:>10} {:>12} {:>10}\n", "shape", "M", "i8gemm_run",
             "bare launch", "run adds");
  for (const Row& r : rows)
    if (r.host_run_us > 0)
      fmt::print("{:<14} {:>5} {:>10.2f} {:>12.2f} {:>10.2f}\n", r.shape, r.m, r.host_run_us, r.host_launch_us,
                 r.host_run_us - r.host_launch_us);
  if (!o.csv.empty()) std::ofstream(o.csv) << csv;
  if (!o.json.empty()) std::ofstream(o.json) << js.dump(2) << "\n";
}

}  // namespace

void setup_bench(CLI::App& app) {
  auto opts = std::make_shared<BenchFlags>();
  CLI::App* cmd = app.add_subcommand("bench", "time the chosen kernel against cuBLASLt i8+dequant and bf16 (GPU)");
  opts->shapes.add_to(*cmd);
  opts->problem.add_to(*cmd);
  cmd->add_option("--m", opts->m, "M values, e.g. 1,16,256,4096")->capture_default_str();
  cmd->add_option("--cache", opts->cache, "cache file (default: $I8GEMM_CACHE or ~/.cache/i8gemm/cache.sqlite)");
  cmd->add_option("--device", opts->device, "CUDA device ordinal")->check(CLI::Range(0, 64));
  cmd->add_option("--samples", opts->samples, "timed samples (20 launches each)")->check(CLI::Range(3, 1000));
  cmd->add_option("--csv", opts->csv, "also write the table as CSV to this file");
  cmd->add_option("--json", opts->json, "also write the results as JSON to this file");
  cmd->callback([opts] { run_bench(*opts); });
}

}  // namespace i8g::cli

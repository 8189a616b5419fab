// i8gemm_peers: the peers of the fused int8 operator, timed by the protocol i8gemm's own bench
// uses (runtime/gpu/timing: graph replay of >= 20 calls over rotated buffer sets past L2, warm
// up, 50 samples, median/p90/min), with the SM clock and power sampled (NVML) during each:
//   cublaslt_i8_dq_plain  cuBLASLt int8 -> int32 (best of 16 heuristics, 64 MB workspace)
//                         + a vectorized dequant, the way cuBLASLt's users call it
//   cublaslt_i8_plain     the same GEMM without the dequant (the line a fused kernel must beat)
//   cublaslt_i8_dq_rt     i8gemm's own cuBLASLt baseline (runtime/gpu/lt_dequant with the
//                         library's dequant: what `tune` races and `bench` shows), built through
//                         the Engine in this process and timed algorithm by algorithm with its
//                         samples interleaved with the plain one's, on the same buffers (same
//                         clock and power history); cublaslt_i8_rt and dequant_rt are its halves,
//                         dequant_plain the plain dequant alone
//   cublaslt_fp8          cuBLASLt e4m3 -> bf16, per-tensor scales, fast accumulation
//   cutlass_best          the fastest of CUTLASS's sm90 int8 configurations of vLLM and SGLang
//   cutlass_vllm_pick     the one vLLM's dispatch picks
//   cutlass_*_pdl         (--cutlass-pdl) the same, every launch a programmatic dependent launch
//   read_ceiling          streaming the weight's bytes once
//   i8gemm_rt             i8gemm itself, what `prepare` picks from --cache (tuned buckets, else the
//                         untuned default) run through the Engine in this process: the same
//                         process, buffers and protocol as the peers (bench/report.py shows it as
//                         a variant column beside bench's i8gemm); its output must be the plain
//                         composite's bytes
// and, once per run, the int8 compute ceiling: wgmma on random operands in shared memory over
// every SM. Writes the rows as JSON (the schema bench/report.py merges).
#include <CLI/CLI.hpp>
#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <vector>

#include "bench/peers_kernels.hpp"
#include "bench/plain_cublaslt.hpp"
#include "runtime/gpu/clock_sampler.hpp"
#include "runtime/gpu/timing.hpp"
#include "runtime/serve/candidate.hpp"
#include "runtime/serve/engine.hpp"
#ifdef I8G_HAVE_CUTLASS
#include "cutlass_i8.hpp"
#endif

namespace i8g::peers {
namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(fmt::format("{}: {}", what, cudaGetErrorString(e)));
}

struct Buffer {
  void* p = nullptr;
  explicit Buffer(size_t bytes) { check(cudaMalloc(&p, std::max<size_t>(bytes, 16)), "cudaMalloc"); }
  ~Buffer() { cudaFree(p); }
  Buffer(Buffer&& o) noexcept : p(o.p) { o.p = nullptr; }
  Buffer(const Buffer&) = delete;
  template <class T = void>
  T* get() const { return static_cast<T*>(p); }
};

struct Shape {
  std::string name;
  int64_t n = 0, k = 0;
};

Shape parse_shape(const std::string& s) {
  static const std::regex re(R"(^(?:([A-Za-z0-9_.-]+)=)?(\d+)x(\d+)$)");
  std::smatch mt;
  if (!std::regex_match(s, mt, re)) throw CLI::ValidationError("--shape", "expected [NAME=]NxK, got '" + s + "'");
  Shape sh{mt[1].str(), std::stoll(mt[2].str()), std::stoll(mt[3].str())};
  if (sh.name.empty()) sh.name = fmt::format("{}x{}", sh.n, sh.k);
  if (sh.n <= 0 || sh.k <= 0 || sh.n % 8 || sh.k % 16)
    throw CLI::ValidationError("--shape", "N must be a positive multiple of 8 and K of 16: '" + s + "'");
  return sh;
}

struct Row {
  std::string contender, status = "ok", note;
  Stats graph;
  ClockReading clock;
  std::optional<bool> verified;
};

Row failed(const std::string& contender, const std::string& why) {
  Row r;
  r.contender = contender;
  r.status = why;
  return r;
}

nlohmann::json to_json(const Row& r, const Shape& s, int64_t m) {
  const bool ok = r.status == "ok";
  auto num = [&](double v) { return ok ? nlohmann::json(v) : nlohmann::json(nullptr); };
  return {{"contender", r.contender}, {"shape", s.name}, {"n", s.n}, {"k", s.k}, {"m", m}, {"status", r.status},
          {"graph_median_us", num(r.graph.median_us)}, {"graph_p90_us", num(r.graph.p90_us)},
          {"graph_min_us", num(r.graph.min_us)},
          {"sm_mhz", r.clock.samples ? nlohmann::json(r.clock.sm_mhz) : nlohmann::json(nullptr)},
          {"power_w", r.clock.samples ? nlohmann::json(r.clock.power_w) : nlohmann::json(nullptr)},
          {"mem_mhz", r.clock.samples ? nlohmann::json(r.clock.mem_mhz) : nlohmann::json(nullptr)},
          {"verified", r.verified ? nlohmann::json(*r.verified) : nlohmann::json(nullptr)}, {"note", r.note}};
}

// Rotated operand sets of one (shape, M): int8 x, w and int32 accumulators; fp8 x and w; bf16 out.
struct Sets {
  int count = 1;
  std::vector<Buffer> x, w, out, x8, w8;
  Buffer acc, xs, ws, scale1;
  Sets(const Shape& s, int64_t m, cudaStream_t st)
      : acc(size_t(m * s.n) * 4), xs(size_t(m) * 4), ws(size_t(s.n) * 4), scale1(4) {
    const size_t xb = size_t(m * s.k), wb = size_t(s.n * s.k), ob = size_t(m * s.n) * 2;
    count = int(std::clamp<size_t>((size_t(256) << 20) / (xb + wb + ob) + 1, 1, 64));
    for (int i = 0; i < count; ++i) {
      x.emplace_back(xb), w.emplace_back(wb), out.emplace_back(ob), x8.emplace_back(xb), w8.emplace_back(wb);
      fill_random_bytes(x[i].p, xb, 11 + 2 * i, st);
      fill_random_bytes(w[i].p, wb, 12 + 2 * i, st);
      fill_random_fp8(x8[i].p, xb, 13 + 2 * i, st);
      fill_random_fp8(w8[i].p, wb, 14 + 2 * i, st);
    }
    fill_random_floats(xs.get<float>(), size_t(m), 0.5f / 127, 2.0f / 127, 5, st);
    fill_random_floats(ws.get<float>(), size_t(s.n), 0.5f / 127, 2.0f / 127, 6, st);
    fill_random_floats(scale1.get<float>(), 1, 0.5f, 1.0f, 7, st);
    check(cudaStreamSynchronize(st), "fill");
  }
};

struct Bench {
  cudaStream_t st;
  TimingPlan plan;
  ClockSampler& clock;
  Engine* engine = nullptr;  // i8gemm's runtime, for its cuBLASLt baseline; null: rows say why
  std::string no_engine;
  Row time(const std::string& contender, const std::function<void(int)>& launch, const std::string& note = {}) const {
    Row r;
    r.contender = contender;
    r.note = note;
    clock.start();
    try {
      r.graph = time_graph(launch, reinterpret_cast<CUstream>(st), plan);
    } catch (const std::exception& e) {
      r.status = e.what();
    }
    r.clock = clock.stop();
    cudaGetLastError();
    return r;
  }
  // Contenders doing the same work two ways, their samples taken in turn so that they share
  // the clock and power history (runtime/gpu/timing); one clock reading for the group.
  std::vector<Row> interleaved(const std::vector<std::string>& contenders,
                               const std::vector<std::function<void(int)>>& launches, const std::string& note) const {
    std::vector<Row> rows(contenders.size());
    for (size_t i = 0; i < rows.size(); ++i) {
      rows[i].contender = contenders[i];
      rows[i].note = note;
    }
    clock.start();
    try {
      const std::vector<Stats> st = time_graphs_interleaved(launches, reinterpret_cast<CUstream>(this->st), plan);
      for (size_t i = 0; i < rows.size(); ++i) rows[i].graph = st[i];
    } catch (const std::exception& e) {
      for (Row& r : rows) r.status = e.what();
    }
    const ClockReading c = clock.stop();
    for (Row& r : rows) r.clock = c;
    cudaGetLastError();
    return rows;
  }
};

std::vector<uint16_t> download_bf16(const Buffer& b, size_t count) {
  std::vector<uint16_t> h(count);
  check(cudaMemcpy(h.data(), b.p, count * 2, cudaMemcpyDeviceToHost), "download");
  return h;
}

// Two bf16 results of the same products in another order: within 2 ulp (2^-6 relative).
bool close_bf16(const std::vector<uint16_t>& a, const std::vector<uint16_t>& b) {
  auto f = [](uint16_t v) { uint32_t u = uint32_t(v) << 16; float x; std::memcpy(&x, &u, 4); return x; };
  for (size_t i = 0; i < a.size(); ++i) {
    const float x = f(a[i]), y = f(b[i]);
    if (!(std::fabs(x - y) <= std::ldexp(std::max(std::fabs(x), std::fabs(y)), -6) + 1e-30f)) return false;
  }
  return true;
}

std::vector<Row> bench_one(const Bench& b, const Shape& s, int64_t m, int sms, bool with_cutlass,
                          const std::regex& cutlass_only, bool cutlass_pdl) {
  const Sets d(s, m, b.st);
  Bench bb = b;
  bb.plan.rotation = d.count;
  std::vector<Row> rows;
  const Buffer ws(PlainLt::kWorkspaceBytes);
  uint32_t* sink = d.xs.get<uint32_t>();  // read_once never writes in practice
  std::vector<uint16_t> ref;
  // cuBLASLt int8 alone and + dequant, each algorithm timed, the best kept; i8gemm's runtime
  // composite (same buffers) timed right after each plain algorithm, so that the two are
  // compared under the same clock and power state.
  std::unique_ptr<LtDequant> rt;
  std::string rt_why = b.no_engine;
  if (b.engine) {
    try {
      GemmProblem p;
      p.n = s.n;
      p.k = s.k;
      rt = b.engine->lt_dequant(p, m);
    } catch (const std::exception& e) {
      rt_why = e.what();
    }
  }
  auto rt_args = [&](int c) {
    const int j = c % d.count;
    I8gArgs a{};
    a.x = d.x[j].get<signed char>();
    a.w = d.w[j].get<signed char>();
    a.x_scale = d.xs.get<float>();
    a.w_scale = d.ws.get<float>();
    a.out = d.out[j].p;
    a.m = m;
    a.n = s.n;
    a.k = s.k;
    return a;
  };
  auto keep_best = [](Row& best, const Row& r) {
    if (best.status != "ok" || (r.status == "ok" && r.graph.median_us < best.graph.median_us)) best = r;
  };
  try {
    const PlainLt lt(PlainLt::Kind::i8_i32, m, s.n, s.k);
    const int rt_algos = rt ? rt->algo_count(m) : 0;
    Row best_dq = failed("cublaslt_i8_dq_plain", "no algorithm ran"), best_gemm = failed("cublaslt_i8_plain", "no algorithm ran");
    Row rt_dq = failed("cublaslt_i8_dq_rt", rt_why.empty() ? "no algorithm ran" : rt_why);
    Row rt_gemm = failed("cublaslt_i8_rt", rt_dq.status);
    // Per algorithm, the plain GEMM, the plain GEMM + dequant and the runtime's two, in turn.
    for (int a = 0; a < std::max(lt.algo_count(), rt_algos); ++a) {
      std::vector<std::string> names;
      std::vector<std::function<void(int)>> launches;
      if (a < lt.algo_count()) {
        names.insert(names.end(), {"cublaslt_i8_plain", "cublaslt_i8_dq_plain"});
        launches.push_back([&, a](int c) { lt.run(a, d.x[c % d.count].p, d.w[c % d.count].p, d.acc.p, ws.p, b.st); });
        launches.push_back([&, a](int c) {
          lt.run(a, d.x[c % d.count].p, d.w[c % d.count].p, d.acc.p, ws.p, b.st);
          plain_dequant(d.acc.get<int32_t>(), d.xs.get<float>(), d.ws.get<float>(), d.out[c % d.count].p, m, s.n, b.st);
        });
      }
      if (a < rt_algos) {
        names.insert(names.end(), {"cublaslt_i8_rt", "cublaslt_i8_dq_rt"});
        launches.push_back([&, a](int c) { rt->run_gemm(a, rt_args(c), reinterpret_cast<CUstream>(b.st)); });
        launches.push_back([&, a](int c) { rt->run(a, rt_args(c), reinterpret_cast<CUstream>(b.st)); });
      }
      const std::vector<Row> got = bb.interleaved(
          names, launches,
          fmt::format("algo {} of {} (runtime: of {}), cublasLt {}, samples interleaved", a, lt.algo_count(), rt_algos,
                      PlainLt::version()));
      for (const Row& r : got) {
        Row& best = r.contender == "cublaslt_i8_plain" ? best_gemm
                    : r.contender == "cublaslt_i8_dq_plain" ? best_dq
                    : r.contender == "cublaslt_i8_rt" ? rt_gemm
                                                      : rt_dq;
        keep_best(best, r);
      }
    }
    rows.push_back(best_gemm);
    rows.push_back(best_dq);
    rows.push_back(rt_gemm);
    rows.push_back(rt_dq);
    std::vector<std::function<void(int)>> dq = {[&](int c) {
      plain_dequant(d.acc.get<int32_t>(), d.xs.get<float>(), d.ws.get<float>(), d.out[c % d.count].p, m, s.n, b.st);
    }};
    if (rt) dq.push_back([&](int c) { rt->run_dequant(rt_args(c), reinterpret_cast<CUstream>(b.st)); });
    std::vector<Row> dq_rows = bb.interleaved(rt ? std::vector<std::string>{"dequant_plain", "dequant_rt"}
                                                 : std::vector<std::string>{"dequant_plain"},
                                              dq, "the dequant alone (plain; the library's), samples interleaved");
    if (!rt) dq_rows.push_back(failed("dequant_rt", rt_dq.status));
    rows.insert(rows.end(), dq_rows.begin(), dq_rows.end());
    lt.run(0, d.x[0].p, d.w[0].p, d.acc.p, ws.p, b.st);
    plain_dequant(d.acc.get<int32_t>(), d.xs.get<float>(), d.ws.get<float>(), d.out[0].p, m, s.n, b.st);
    check(cudaStreamSynchronize(b.st), "reference");
    ref = download_bf16(d.out[0], size_t(m * s.n));
    if (rt) {  // the runtime composite gives the plain one's bytes (same products, same rounding)
      rt->run(0, rt_args(0), reinterpret_cast<CUstream>(b.st));
      check(cudaStreamSynchronize(b.st), "runtime composite");
      rows[rows.size() - 3].verified = download_bf16(d.out[0], size_t(m * s.n)) == ref;
    }
  } catch (const std::exception& e) {
    for (const char* c : {"cublaslt_i8_plain", "cublaslt_i8_dq_plain", "cublaslt_i8_rt", "cublaslt_i8_dq_rt",
                          "dequant_plain", "dequant_rt"})
      rows.push_back(failed(c, e.what()));
  }
  try {
    const PlainLt lt(PlainLt::Kind::fp8_bf16, m, s.n, s.k, d.scale1.get<float>(), d.scale1.get<float>());
    Row best;
    for (int a = 0; a < lt.algo_count(); ++a) {
      Row r = bb.time("cublaslt_fp8", [&](int c) {
        lt.run(a, d.x8[c % d.count].p, d.w8[c % d.count].p, d.out[c % d.count].p, ws.p, b.st);
      }, fmt::format("e4m3, per-tensor scales, fast accumulation; algo {} of {}", a, lt.algo_count()));
      if (a == 0 || (r.status == "ok" && r.graph.median_us < best.graph.median_us)) best = r;
    }
    rows.push_back(best);
  } catch (const std::exception& e) {
    rows.push_back(failed("cublaslt_fp8", e.what()));
  }
#ifdef I8G_HAVE_CUTLASS
  // pdl: every launch programmatic (named *_pdl), as i8gemm's own launches on sm_90.
  auto time_cutlass = [&](bool pdl) {
    const std::string sfx = pdl ? "_pdl" : "";
    const std::string pick = cutlass_vllm_pick(m, s.n, s.k);
    Row best = failed("cutlass_best" + sfx, "no configuration ran"),
        picked = failed("cutlass_vllm_pick" + sfx, "vLLM's pick did not run");
    std::string all;
    for (size_t i = 0; i < cutlass_configs().size(); ++i) {
      const std::string name = cutlass_configs()[i].name;
      if (!std::regex_search(name, cutlass_only)) continue;
      try {
        const CutlassGemm g(i, m, s.n, s.k);
        auto launch = [&](int c) {
          const int j = c % d.count;
          const std::string err = g.run(d.x[j].get<int8_t>(), d.w[j].get<int8_t>(), d.xs.get<float>(), d.ws.get<float>(),
                                        d.out[j].p, nullptr, b.st, pdl);
          if (!err.empty()) throw std::runtime_error(err);
        };
        // Timed first, checked after: the check's download and host comparison leave the GPU idle,
        // and after an idle GPU some kernels run slower at first (docs/performance.md, session 46).
        // Set 0's output then holds the timed launches' bytes (the same inputs, every launch).
        Row r = bb.time("cutlass_best" + sfx, launch, name);
        if (r.status != "ok") throw std::runtime_error(r.status);  // "NAME=n/a" below, as a failed launch
        check(cudaStreamSynchronize(b.st), "cutlass");
        const bool ok = !ref.empty() && close_bf16(ref, download_bf16(d.out[0], size_t(m * s.n)));
        r.verified = ok;
        all += fmt::format("{}{}={:.2f}", all.empty() ? "" : " ", name, r.graph.median_us);
        if (ok && (best.status != "ok" || r.graph.median_us < best.graph.median_us)) best = r;  // r ran: a failed one threw
        if (name == pick) {
          picked = r;
          picked.contender = "cutlass_vllm_pick" + sfx;
        }
      } catch (const std::exception& e) {
        all += fmt::format("{}{}=n/a", all.empty() ? "" : " ", name);
        if (name == pick) picked.status = e.what();
      }
    }
    if (best.status == "ok") best.note += " (all: " + all + ")";
    rows.push_back(best);
    rows.push_back(picked);
  };
  if (with_cutlass) time_cutlass(false);
  if (with_cutlass && cutlass_pdl) time_cutlass(true);
#else
  (void)with_cutlass;
  (void)cutlass_only;
  (void)cutlass_pdl;
  for (const char* c : {"cutlass_best", "cutlass_vllm_pick"}) rows.push_back(failed(c, I8G_CUTLASS_WHY));
#endif
  // i8gemm through its runtime, beside the peers in this process (`i8gemm bench` times it in its
  // own process, where small kernels have run slower than here: docs/performance.md).
  if (b.engine) {
    try {
      GemmProblem p;
      p.n = s.n;
      p.k = s.k;
      b.engine->prepare(p, m);
      const std::optional<Candidate> chosen = b.engine->kernel_for(p, m);
      auto launch = [&](int c) { b.engine->run(p, rt_args(c), reinterpret_cast<CUstream>(b.st)); };
      // Timed first, checked after (as CUTLASS above).
      Row r = bb.time("i8gemm_rt", launch, chosen ? to_string(*chosen) : "cuBLASLt + dequant (no kernel chosen)");
      check(cudaStreamSynchronize(b.st), "i8gemm");
      const bool ok = !ref.empty() && download_bf16(d.out[0], size_t(m * s.n)) == ref;
      r.verified = ok;
      rows.push_back(r);
    } catch (const std::exception& e) {
      rows.push_back(failed("i8gemm_rt", e.what()));
    }
  } else {
    rows.push_back(failed("i8gemm_rt", b.no_engine));
  }
  const size_t bytes = size_t(s.n * s.k) / 16 * 16;
  rows.push_back(bb.time("read_ceiling", [&](int c) { read_once(d.w[c % d.count].p, bytes, sink, sms, b.st); },
                         fmt::format("{:.1f} MB of weight read once", bytes / 1e6)));
  return rows;
}

// The int8 compute ceiling: about `seconds` of wgmma issue, clock and power sampled.
nlohmann::json ceiling(const Bench& b, int sms, double seconds) {
  Buffer check_sum(4);
  wgmma_issue(64, sms, check_sum.get<uint32_t>(), b.st);  // warm up, size one launch
  check(cudaStreamSynchronize(b.st), "wgmma warm-up");
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  auto timed = [&](int iters, double* ops) {
    cudaEventRecord(e0, b.st);
    *ops = wgmma_issue(iters, sms, check_sum.get<uint32_t>(), b.st);
    cudaEventRecord(e1, b.st);
    check(cudaEventSynchronize(e1), "wgmma");
    float ms = 0;
    cudaEventElapsedTime(&ms, e0, e1);
    return double(ms) / 1e3;
  };
  double ops = 0;
  const double t1 = timed(4096, &ops);
  const int iters = int(std::clamp(4096 * 0.2 / std::max(t1, 1e-6), 64.0, 1e8));  // ~200 ms a launch
  const int launches = std::max(1, int(seconds / 0.2));
  b.clock.start();
  double total_s = 0, total_ops = 0;
  for (int i = 0; i < launches; ++i) {
    total_s += timed(iters, &ops);
    total_ops += ops;
  }
  const ClockReading c = b.clock.stop();
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  const double tops = total_ops / total_s / 1e12;
  nlohmann::json j = {{"tops", tops}, {"seconds", total_s}, {"what", "wgmma m64n256k32 s8, 2 warpgroups per SM, random smem operands"}};
  if (c.samples) {
    j["sm_mhz"] = c.sm_mhz;
    j["power_w"] = c.power_w;
    j["ops_per_clock_per_sm"] = total_ops / total_s / (c.sm_mhz * 1e6) / sms;
  }
  return j;
}

int run(int argc, char** argv) {
  CLI::App app{"i8gemm_peers: the fused int8 operator's peers, timed by i8gemm's protocol (GPU)"};
  std::vector<std::string> shape_args;
  std::string m_list = "1,16,128,1024,4096", json_path;
  int samples = 50;
  double ceiling_s = 3, warmup_ms = 0;
  bool no_cutlass = false, cutlass_pdl = false;
  std::string cache, cutlass_filter = ".*";
  app.add_option("--shape", shape_args, "[NAME=]NxK (repeatable)")->required();
  app.add_option("--m", m_list, "M values")->capture_default_str();
  app.add_option("--samples", samples, "timed samples")->check(CLI::Range(3, 1000))->capture_default_str();
  app.add_option("--warmup-ms", warmup_ms, "warm each timing up for at least this many ms of its own launches")
      ->check(CLI::Range(0.0, 10000.0))
      ->capture_default_str();
  app.add_option("--json", json_path, "write the rows here")->required();
  app.add_option("--ceiling-seconds", ceiling_s, "wgmma ceiling duration (0: skip)")->capture_default_str();
  app.add_flag("--no-cutlass", no_cutlass, "skip the CUTLASS configurations");
  app.add_flag("--cutlass-pdl", cutlass_pdl,
               "also time every CUTLASS configuration launched with PDL (rows cutlass_best_pdl, cutlass_vllm_pick_pdl)");
  app.add_option("--cutlass", cutlass_filter, "only the CUTLASS configurations whose name matches this regex (for profiling one)");
  app.add_option("--cache", cache, "i8gemm cache: the runtime's utility module and i8gemm_rt's tuned winners (default: i8gemm's default)");
  CLI11_PARSE(app, argc, argv);
  std::vector<Shape> shapes;
  std::vector<int64_t> ms;
  std::regex cutlass_only;
  try {
    try {
      cutlass_only = std::regex(cutlass_filter);
    } catch (const std::regex_error&) {
      fmt::print(stderr, "i8gemm_peers: --cutlass is not a valid regex: '{}'\n", cutlass_filter);
      return 2;
    }
    for (const std::string& a : shape_args) shapes.push_back(parse_shape(a));
    std::stringstream ss(m_list);
    for (std::string t; std::getline(ss, t, ',');) {
      const long long v = std::stoll(t);
      if (v <= 0) throw std::invalid_argument(t);
      ms.push_back(v);
    }
  } catch (const CLI::Error& e) {
    return app.exit(e);
  } catch (const std::exception&) {
    fmt::print(stderr, "i8gemm_peers: --m must be a comma list of positive integers, got '{}'\n", m_list);
    return 2;
  }
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    fmt::print(stderr, "i8gemm_peers: no CUDA device\n");
    return 3;
  }
  check(cudaSetDevice(0), "cudaSetDevice");
  check(cudaFree(nullptr), "context");
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "properties");
  char bus[32] = {};
  cudaDeviceGetPCIBusId(bus, sizeof(bus) - 1, 0);
  ClockSampler clock(bus);
  if (!clock.available()) fmt::print(stderr, "i8gemm_peers: no clock readings: {}\n", clock.why());
  cudaStream_t st;
  check(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking), "stream");
  TimingPlan plan;
  plan.samples = samples;
  plan.warmup_ms = warmup_ms;
  Bench b{st, plan, clock, nullptr, {}};
  std::unique_ptr<Engine> engine;
  try {
    engine = std::make_unique<Engine>(0, cache);
    b.engine = engine.get();
  } catch (const std::exception& e) {
    b.no_engine = fmt::format("i8gemm's runtime is unavailable: {}", e.what());
    fmt::print(stderr, "i8gemm_peers: {}\n", b.no_engine);
  }
  nlohmann::json out = {{"tool", "i8gemm_peers"}, {"device", prop.name}, {"sm_count", prop.multiProcessorCount},
                        {"cublaslt", PlainLt::version()}, {"rows", nlohmann::json::array()}};
  if (ceiling_s > 0) {
    out["ceilings"]["wgmma"] = ceiling(b, prop.multiProcessorCount, ceiling_s);
    fmt::print(stderr, "wgmma ceiling: {}\n", out["ceilings"]["wgmma"].dump());
  }
  for (const Shape& s : shapes)
    for (int64_t m : ms) {
      fmt::print(stderr, "  peers {} M={}\n", s.name, m);
      for (const Row& r : bench_one(b, s, m, prop.multiProcessorCount, !no_cutlass, cutlass_only, cutlass_pdl)) {
        out["rows"].push_back(to_json(r, s, m));
        fmt::print("{:<12} {:>5} {:<22} {:>10} {:>6}  {}\n", s.name, m, r.contender,
                   r.status == "ok" ? fmt::format("{:.2f}", r.graph.median_us) : "n/a",
                   r.clock.samples ? fmt::format("{:.0f}", r.clock.sm_mhz) : "-", r.status == "ok" ? r.note : r.status);
      }
      std::ofstream(json_path) << out.dump(2) << "\n";  // after every row: a cut-off run keeps what it measured
    }
  return 0;
}

}  // namespace
}  // namespace i8g::peers

int main(int argc, char** argv) {
  try {
    return i8g::peers::run(argc, argv);
  } catch (const std::exception& e) {
    fmt::print(stderr, "i8gemm_peers: {}\n", e.what());
    return 1;
  }
}

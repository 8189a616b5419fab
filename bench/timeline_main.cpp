// i8gemm_timeline: where one wgmma_tma kernel's launch spends its time, unit by unit and SM by SM
// (a diagnostic, not a benchmark); any other kernel gets the same launches timed by events. The kernel must be one stamped by
// `scripts/timeline_probe.py instrument-tiles` and loaded through I8GEMM_SOURCE_OVERRIDE_DIR: its
// consumers write their units' clock64 stamps and their SM and %globaltimer into the global
// `i8g_probe` (layout in timeline_probe.py). For each of --rows rows (each its own operands,
// allocated while the earlier rows' are still held, so no row reuses another's memory) and each
// of --launches launches: --warm launches back to back over the row's rotating sets, then the
// probe cleared and one more launch (back to back with the warm ones, or with --isolated after a
// synchronize and a 256 MB write that pushes the operands out of L2), timed by events; its
// stamps are read back and written as `tile` and `cons` lines (timeline_probe.py report-tiles).
// A kernel without the probe gets the same launches and only their `launch` lines (event times).
// With --placements, instead: per row, the buffers' addresses (`place` lines) and the steps of
// --sequence on the row's fresh operands (`times` lines), timed by the tuner's protocol: graph
// replays (what bench does first), eager launches (what the tuner does before its graph timing),
// Operands::move (the tuner's later final-round placements: every x, then every w, then every out).
// --warmup-ms T warms each of those timings for T ms of its own launches first (the protocol of
// scripts/gpu_bench.sh: kernels compared under sustained load).
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <chrono>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "core/error.hpp"
#include "runtime/gpu/clock_sampler.hpp"
#include "runtime/gpu/cuda_driver.hpp"
#include "runtime/gpu/device_buffer.hpp"
#include "runtime/gpu/kernel_instance.hpp"
#include "runtime/gpu/timing.hpp"
#include "runtime/serve/engine.hpp"
#include "runtime/tune/operands.hpp"

namespace {

constexpr int kUnits = 16, kWords = 8, kRow = (kUnits + 1) * kWords;  // timeline_probe.py's PROBE_*

int run(int argc, char** argv) {
  CLI::App app{"i8gemm_timeline: one stamped kernel's units and SMs over fresh operands (GPU)"};
  std::string kernel, cache, out_path;
  int64_t m = 0;
  int rows = 6, launches = 4, warm = 40;
  bool isolated = false, placements = false;
  int samples = 15;
  double warmup_ms = 0;
  std::string sequence = "gegmgg";  // session 45, call 5
  app.add_option("--kernel", kernel, "the kernel's name (stamped, through I8GEMM_SOURCE_OVERRIDE_DIR)")->required();
  app.add_option("--m", m, "rows of x")->required()->check(CLI::Range(int64_t(1), int64_t(1) << 20));
  app.add_option("--cache", cache, "i8gemm cache (the kernel is compiled into it when missing)")->required();
  app.add_option("--rows", rows, "operand allocations")->check(CLI::Range(1, 64))->capture_default_str();
  app.add_option("--launches", launches, "stamped launches per row")->check(CLI::Range(1, 100))->capture_default_str();
  app.add_option("--warm", warm, "launches before each stamped one")->check(CLI::Range(0, 10000))->capture_default_str();
  app.add_flag("--isolated", isolated, "each stamped launch alone, after a synchronize and an L2 flush");
  app.add_option("-o,--output", out_path, "write the lines here")->required();
  app.add_flag("--placements", placements, "per row: the buffers' addresses, then the timings of --sequence");
  app.add_option("--sequence", sequence,
                 "the steps per row (--placements): g graph, e eager, 1 one launch per set, m move, z zero outputs, "
                 "q 10 ms pause, p 100 ms pause, P 2 s pause, w 100 ms of device copies")
      ->capture_default_str();
  app.add_option("--samples", samples, "samples per timing (--placements)")->check(CLI::Range(3, 1000))->capture_default_str();
  app.add_option("--warmup-ms", warmup_ms,
                 "--placements: warm each g/e timing up for at least this many ms of its own launches first")
      ->check(CLI::Range(0.0, 10000.0))
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  if (const size_t bad = sequence.find_first_not_of("ge1mzqpPw"); bad != std::string::npos)
    throw i8g::Error(i8g::ErrorKind::invalid_argument, "i8gemm_timeline",
                     fmt::format("--sequence: '{}' is not a step (g graph, e eager, 1 one launch per set, m move, "
                                 "z zero outputs, q 10 ms pause, p 100 ms pause, P 2 s pause, w 100 ms of device copies)", sequence[bad]));
  const i8g::KernelSpec spec = i8g::KernelSpec::parse_name(kernel);  // any family; only wgmma_tma's are stamped
  i8g::Engine e(0, cache);
  i8g::ClockSampler clock(e.device().pci_bus_id);  // --placements: each timing's clock and power
  const i8g::KernelInstance inst = e.instantiate(spec, m);
  CUmodule mod = nullptr;
  I8G_CU(cuFuncGetModule(&mod, inst.function()));
  CUdeviceptr probe = 0;
  size_t probe_bytes = 0;
  // A kernel without the probe (not stamped) is timed by its events alone.
  if (i8g::driver().cuModuleGetGlobal(&probe, &probe_bytes, mod, "i8g_probe") != CUDA_SUCCESS) {
    probe = 0;
    probe_bytes = 0;
    std::fprintf(stderr, "i8gemm_timeline: %s has no i8g_probe (not stamped): events only\n", kernel.c_str());
  }
  FILE* out = std::fopen(out_path.c_str(), "w");
  if (!out) throw i8g::Error(i8g::ErrorKind::invalid_argument, "i8gemm_timeline", "cannot write " + out_path);
  std::unique_ptr<FILE, int (*)(FILE*)> closer(out, std::fclose);

  i8g::Stream st;
  i8g::Event e0, e1;
  i8g::DeviceBuffer flush(isolated ? size_t(256) << 20 : 0);
  std::vector<long long> host(probe_bytes / sizeof(long long));
  std::mt19937_64 rng(20261206);
  std::unique_ptr<i8g::DeviceBuffer> copy_a, copy_b;  // --sequence w
  std::vector<std::unique_ptr<i8g::Operands>> held;  // every row's operands, so none is reused
  int launch = 0;
  for (int r = 0; r < rows; ++r) {
    held.push_back(std::make_unique<i8g::Operands>(e, spec.problem, m, rng, st.s));
    i8g::Operands& ops = *held.back();
    if (placements) {
      i8g::TimingPlan plan;
      plan.samples = samples;
      plan.rotation = ops.sets();
      plan.warmup_ms = warmup_ms;
      auto where = [&](const char* when) {
        for (int i = 0; i < ops.sets(); ++i)
          fmt::print(out, "place row={} {} set={} x={:#x} w={:#x} out={:#x}\n", r, when, i,
                     reinterpret_cast<uintptr_t>(ops.x[size_t(i)].get()), reinterpret_cast<uintptr_t>(ops.w[size_t(i)].get()),
                     reinterpret_cast<uintptr_t>(ops.out[size_t(i)].get()));
      };
      where("first");
      auto run_kernel = [&](int c) { inst.launch(ops.args(c), st.s); };
      // The clock and power at the row's start (after its operands were made: seconds of host work).
      const i8g::ClockReading idle = clock.now();
      std::string line = fmt::format("times row={} idle@{:.0f}/{:.0f}/{:.0f}", r, idle.sm_mhz, idle.mem_mhz, idle.power_w);
      // --sequence: g a graph timing, e an eager timing, 1 one eager launch per set, m Operands::move,
      // z every output zeroed, q/p/P a 10 ms/100 ms/2 s pause, w 100 ms of device copies (all printed in
      // order, times in us).
      // A timing prints as g=US@SM/MEM/W (the SM and memory clocks in MHz and the board power sampled while it
      // ran; 0 without NVML).
      auto timed = [&](char what, auto&& time) {
        clock.start();
        const double us = time().median_us;
        const i8g::ClockReading c = clock.stop();
        line += fmt::format(" {}={:.2f}@{:.0f}/{:.0f}/{:.0f}", what, us, c.sm_mhz, c.mem_mhz, c.power_w);
      };
      for (char step : sequence) {
        if (step == 'g') {
          timed('g', [&] { return i8g::time_graph(run_kernel, st.s, plan); });
        } else if (step == 'e') {
          timed('e', [&] { return i8g::time_eager(run_kernel, st.s, plan); });
        } else if (step == '1') {
          for (int c = 0; c < ops.sets(); ++c) run_kernel(c);
          I8G_CU(cuStreamSynchronize(st.s));
          line += " 1";
        } else if (step == 'm') {
          ops.move(st.s);
          where("moved");
          line += " m";
        } else if (step == 'z') {
          for (const i8g::DeviceBuffer& o : ops.out)
            I8G_CU(cuMemsetD8Async(reinterpret_cast<CUdeviceptr>(o.get()), 0, o.bytes(), st.s));
          I8G_CU(cuStreamSynchronize(st.s));
          line += " z";
        } else if (step == 'q' || step == 'p' || step == 'P') {
          std::this_thread::sleep_for(std::chrono::milliseconds(step == 'q' ? 10 : step == 'p' ? 100 : 2000));
          line += fmt::format(" {}", step);
        } else if (step == 'w') {  // other work: 256 MB copies back and forth for 100 ms (DRAM and L2 busy)
          if (!copy_a) {
            copy_a = std::make_unique<i8g::DeviceBuffer>(size_t(256) << 20);
            copy_b = std::make_unique<i8g::DeviceBuffer>(size_t(256) << 20);
          }
          const auto t0 = std::chrono::steady_clock::now();
          while (std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(100)) {
            for (int i = 0; i < 8; ++i)
              I8G_CU(cuMemcpyDtoDAsync(reinterpret_cast<CUdeviceptr>((i % 2 ? copy_a : copy_b)->get()),
                                       reinterpret_cast<CUdeviceptr>((i % 2 ? copy_b : copy_a)->get()), copy_a->bytes(), st.s));
            I8G_CU(cuStreamSynchronize(st.s));
          }
          line += " w";
        }
      }
      fmt::print(out, "{}\n", line);
      std::fflush(out);
      continue;
    }
    int call = 0;
    for (int l = 0; l < launches; ++l, ++launch) {
      for (int i = 0; i < warm; ++i) inst.launch(ops.args(call++), st.s);
      if (isolated) {
        I8G_CU(cuStreamSynchronize(st.s));
        I8G_CU(cuMemsetD8Async(reinterpret_cast<CUdeviceptr>(flush.get()), uint8_t(launch), flush.bytes(), st.s));
      }
      if (probe) I8G_CU(cuMemsetD8Async(probe, 0, probe_bytes, st.s));
      I8G_CU(cuEventRecord(e0.e, st.s));
      inst.launch(ops.args(call++), st.s);
      I8G_CU(cuEventRecord(e1.e, st.s));
      I8G_CU(cuStreamSynchronize(st.s));
      float ms = 0;
      I8G_CU(cuEventElapsedTime(&ms, e0.e, e1.e));
      if (probe) I8G_CU(cuMemcpyDtoH(host.data(), probe, probe_bytes));
      fmt::print(out, "launch L={} row={} event_us={:.2f}\n", launch, r, ms * 1e3);
      for (size_t c = 0; (c + 1) * kRow <= host.size(); ++c) {
        const long long* q = host.data() + c * kRow;
        const long long* h = q + kUnits * kWords;
        if (h[2] == 0) continue;  // a consumer this launch did not have
        const long long units = std::min<long long>(h[0], kUnits);
        for (long long j = 0; j < units; ++j) {
          const long long* u = q + j * kWords;
          fmt::print(out, "tile L={} b={} c={} sm={} j={} tm={} tn={} s={} w={} f={} kw={} m={} e={}\n", launch, c / 2,
                     c % 2, h[1], j, u[1], u[2], u[0], u[3], u[4], u[5], u[6], u[7]);
        }
        fmt::print(out, "cons L={} b={} c={} sm={} n={} g0={} g1={} clk={}\n", launch, c / 2, c % 2, h[1], h[0], h[2],
                   h[3], h[4]);
      }
    }
    fmt::print("row {}: {} stamped launches\n", r, launches);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& ex) {
    std::fprintf(stderr, "i8gemm_timeline: %s\n", ex.what());
    return 1;
  }
}

// TimingPlan::warmup_ms (runtime/gpu/timing): each timing's warm-up lasts at least that long of the
// contender's own launches (eager and graph replay), beyond the launch count; 0 keeps the count
// alone. Session 46 measured why: after the GPU idles for 100 ms, some kernels run 10-25%
// slower for their first ~30-90 ms of work.
#include <chrono>

#include "runtime/gpu/cuda_driver.hpp"
#include "runtime/gpu/timing.hpp"
#include "tests/gpu/gpu_support.hpp"

namespace i8g::gputest {
namespace {

class TimingWarmup : public GpuTest {};

double wall_ms(const std::function<void()>& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

TEST_F(TimingWarmup, EagerAndGraphWarmForTheAskedTime) {
  Stream stream;  // gpu_support.hpp's
  DevBuf buf(size_t(1) << 20);  // gpu_support.hpp's
  int calls = 0;
  auto launch = [&](int i) {
    ++calls;
    I8G_CU(cuMemsetD8Async(buf.ptr(), uint8_t(i), buf.bytes(), stream.get()));
  };
  TimingPlan plan;
  plan.warmup = 5;
  plan.samples = 3;
  plan.launches_per_sample = 4;
  Stats s;
  // Without warmup_ms: the count alone (5 warm-up + 3 x 4 timed launches), well under 40 ms.
  calls = 0;
  s = time_eager(launch, stream.get(), plan);
  EXPECT_EQ(calls, 5 + 3 * 4);
  EXPECT_GT(s.median_us, 0.0);

  plan.warmup_ms = 40;
  calls = 0;
  const double eager_ms = wall_ms([&] { s = time_eager(launch, stream.get(), plan); });
  EXPECT_GE(eager_ms, 40.0) << "the eager warm-up ended early";
  EXPECT_GT(calls, 5 + 3 * 4 + 4) << "no launch was added to warm up";
  EXPECT_GT(s.median_us, 0.0);

  const double graph_ms = wall_ms([&] { s = time_graph(launch, stream.get(), plan); });
  EXPECT_GE(graph_ms, 40.0) << "the graph warm-up ended early";
  EXPECT_GT(s.median_us, 0.0);

  const double both_ms =
      wall_ms([&] { EXPECT_EQ(time_graphs_interleaved({launch, launch}, stream.get(), plan).size(), 2u); });
  EXPECT_GE(both_ms, 40.0) << "the interleaved warm-up ended early";
}

}  // namespace
}  // namespace i8g::gputest

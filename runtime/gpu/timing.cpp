#include "runtime/gpu/timing.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <vector>

#include "runtime/gpu/cuda_driver.hpp"

namespace i8g {

Event::Event() { I8G_CU(cuEventCreate(&e, CU_EVENT_DEFAULT)); }
Event::~Event() { driver().cuEventDestroy(e); }

namespace {

Stats summarize(std::vector<double> us) {
  std::sort(us.begin(), us.end());
  Stats s;
  s.min_us = us.front();
  s.median_us = us[us.size() / 2];
  s.p90_us = us[std::min(us.size() - 1, size_t(std::ceil(0.9 * double(us.size()))) - 1)];
  return s;
}

// One sample: the time of whatever `enqueue` puts on the stream, per launch.
template <class Enqueue>
double timed_us(const Event& start, const Event& stop, Enqueue&& enqueue, CUstream stream, int per_sample) {
  I8G_CU(cuEventRecord(start.e, stream));
  enqueue();
  I8G_CU(cuEventRecord(stop.e, stream));
  I8G_CU(cuEventSynchronize(stop.e));
  float ms = 0;
  I8G_CU(cuEventElapsedTime(&ms, start.e, stop.e));
  return 1000.0 * double(ms) / per_sample;
}

template <class Enqueue>
Stats sample(Enqueue&& enqueue, CUstream stream, int samples, int per_sample) {
  Event start, stop;
  std::vector<double> us;
  for (int s = 0; s < samples; ++s) us.push_back(timed_us(start, stop, enqueue, stream, per_sample));
  return summarize(us);
}

// Runs `batch` (some launches) until at least `ms` have passed on the host clock, synchronizing
// after each batch so that the time is the GPU's, not the launch queue's.
template <class Batch>
void warm_for(double ms, CUstream stream, Batch&& batch) {
  if (ms <= 0) return;
  const auto t0 = std::chrono::steady_clock::now();
  do {
    batch();
    I8G_CU(cuStreamSynchronize(stream));
  } while (std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() < ms);
}

}  // namespace

Stats time_eager(const std::function<void(int)>& launch, CUstream stream, const TimingPlan& plan) {
  int call = 0;
  for (int i = 0; i < plan.warmup; ++i) launch(call++);
  I8G_CU(cuStreamSynchronize(stream));
  auto batch = [&] { for (int i = 0; i < plan.launches_per_sample; ++i) launch(call++); };
  warm_for(plan.warmup_ms, stream, batch);
  return sample(batch, stream, plan.samples, plan.launches_per_sample);
}

namespace {

// `calls` launches captured into one graph, instantiated and warmed up.
class CapturedCalls {
 public:
  CapturedCalls(const std::function<void(int)>& launch, CUstream stream, int calls, int warmup) {
    I8G_CU(cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    try {
      for (int i = 0; i < calls; ++i) launch(i);
    } catch (...) {
      driver().cuStreamEndCapture(stream, &graph_);
      throw;
    }
    I8G_CU(cuStreamEndCapture(stream, &graph_));
    I8G_CU(cuGraphInstantiateWithFlags(&exec_, graph_, 0));
    const int warm = std::max(3, warmup / std::max(1, calls));
    for (int i = 0; i < warm; ++i) replay(stream);
    I8G_CU(cuStreamSynchronize(stream));
  }
  ~CapturedCalls() {
    if (exec_) driver().cuGraphExecDestroy(exec_);
    if (graph_) driver().cuGraphDestroy(graph_);
  }
  CapturedCalls(const CapturedCalls&) = delete;
  CapturedCalls& operator=(const CapturedCalls&) = delete;
  void replay(CUstream stream) const { I8G_CU(cuGraphLaunch(exec_, stream)); }

 private:
  CUgraph graph_ = nullptr;
  CUgraphExec exec_ = nullptr;
};

}  // namespace

Stats time_graph(const std::function<void(int)>& launch, CUstream stream, const TimingPlan& plan) {
  const int calls = std::max(plan.launches_per_sample, plan.rotation);
  const CapturedCalls g(launch, stream, calls, plan.warmup);
  auto replay = [&] { g.replay(stream); };
  warm_for(plan.warmup_ms, stream, replay);
  return sample(replay, stream, plan.samples, calls);
}

std::vector<Stats> time_graphs_interleaved(const std::vector<std::function<void(int)>>& launches, CUstream stream,
                                           const TimingPlan& plan) {
  const int calls = std::max(plan.launches_per_sample, plan.rotation);
  std::vector<std::unique_ptr<CapturedCalls>> graphs;
  for (const auto& l : launches) graphs.push_back(std::make_unique<CapturedCalls>(l, stream, calls, plan.warmup));
  warm_for(plan.warmup_ms, stream, [&] {
    for (const auto& g : graphs) g->replay(stream);
  });
  Event start, stop;
  std::vector<std::vector<double>> us(graphs.size());
  for (int s = 0; s < plan.samples; ++s)
    for (size_t i = 0; i < graphs.size(); ++i)
      us[i].push_back(timed_us(start, stop, [&] { graphs[i]->replay(stream); }, stream, calls));
  std::vector<Stats> out;
  for (auto& u : us) out.push_back(summarize(std::move(u)));
  return out;
}

}  // namespace i8g

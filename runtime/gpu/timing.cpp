#include "runtime/gpu/timing.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "runtime/gpu/cuda_driver.hpp"

namespace i8g {
namespace {

struct Event {
  CUevent e = nullptr;
  Event() { I8G_CU(cuEventCreate(&e, CU_EVENT_DEFAULT)); }
  ~Event() { driver().cuEventDestroy(e); }
};

Stats summarize(std::vector<double> us) {
  std::sort(us.begin(), us.end());
  Stats s;
  s.min_us = us.front();
  s.median_us = us[us.size() / 2];
  s.p90_us = us[std::min(us.size() - 1, size_t(std::ceil(0.9 * double(us.size()))) - 1)];
  return s;
}

template <class Enqueue>
Stats sample(Enqueue&& enqueue, CUstream stream, int samples, int per_sample) {
  Event start, stop;
  std::vector<double> us;
  for (int s = 0; s < samples; ++s) {
    I8G_CU(cuEventRecord(start.e, stream));
    enqueue(s);
    I8G_CU(cuEventRecord(stop.e, stream));
    I8G_CU(cuEventSynchronize(stop.e));
    float ms = 0;
    I8G_CU(cuEventElapsedTime(&ms, start.e, stop.e));
    us.push_back(1000.0 * double(ms) / per_sample);
  }
  return summarize(us);
}

}  // namespace

Stats time_eager(const std::function<void(int)>& launch, CUstream stream, const TimingPlan& plan) {
  int call = 0;
  for (int i = 0; i < plan.warmup; ++i) launch(call++);
  I8G_CU(cuStreamSynchronize(stream));
  return sample([&](int) { for (int i = 0; i < plan.launches_per_sample; ++i) launch(call++); },
                stream, plan.samples, plan.launches_per_sample);
}

Stats time_graph(const std::function<void(int)>& launch, CUstream stream, const TimingPlan& plan) {
  const int calls = std::max(plan.launches_per_sample, plan.rotation);
  CUgraph graph = nullptr;
  CUgraphExec exec = nullptr;
  I8G_CU(cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
  try {
    for (int i = 0; i < calls; ++i) launch(i);
  } catch (...) {
    driver().cuStreamEndCapture(stream, &graph);
    if (graph) driver().cuGraphDestroy(graph);
    throw;
  }
  I8G_CU(cuStreamEndCapture(stream, &graph));
  struct Cleanup {
    CUgraph& g;
    CUgraphExec& x;
    ~Cleanup() {
      if (x) driver().cuGraphExecDestroy(x);
      if (g) driver().cuGraphDestroy(g);
    }
  } cleanup{graph, exec};
  I8G_CU(cuGraphInstantiateWithFlags(&exec, graph, 0));
  const int warm = std::max(3, plan.warmup / std::max(1, calls));
  for (int i = 0; i < warm; ++i) I8G_CU(cuGraphLaunch(exec, stream));
  I8G_CU(cuStreamSynchronize(stream));
  return sample([&](int) { I8G_CU(cuGraphLaunch(exec, stream)); }, stream, plan.samples, calls);
}

}  // namespace i8g

// Fair timing (ANCHORS.md, seed 002 §6): warm-up, then samples of several launches timed with
// device events; median, p90 and min per launch. Eager and graph-replayed timings are kept
// apart and never mixed. `launch(i)` enqueues call number i on the stream; callers rotate
// their buffers by i so that weights are not served from L2.
#pragma once
#include <cuda.h>

#include <functional>
#include <vector>

namespace i8g {

struct TimingPlan {
  int warmup = 50;               // launches before the first sample
  // And at least this long of them (ms; 0: the launch count alone). After the SMs idle for 100 ms
  // or more (seconds of host work, a verification's download) some kernels run 10-25% slower for
  // their first ~30-90 ms of work (docs/performance.md, session 46), so a fair comparison warms every
  // contender by time, not by a count that a 10 us kernel and a 150 us one spend differently.
  double warmup_ms = 0;
  int samples = 50;
  int launches_per_sample = 20;
  // The caller's number of rotated buffer sets: a graph captures at least this many calls, so
  // that each replay touches every set and L2 cannot serve the weights.
  int rotation = 1;
};

struct Stats {
  double median_us = 0, p90_us = 0, min_us = 0;
};

// A timing event (CU_EVENT_DEFAULT), destroyed with the object.
struct Event {
  CUevent e = nullptr;
  Event();
  ~Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
};

Stats time_eager(const std::function<void(int)>& launch, CUstream stream, const TimingPlan& plan);
// Captures max(launches_per_sample, rotation) calls into one graph and times its replays.
Stats time_graph(const std::function<void(int)>& launch, CUstream stream, const TimingPlan& plan);
// The same for several contenders, one graph each, their samples taken in turn (A B C A B C
// ...), so that all of them see the same clock and power history: the fair way to compare
// two configurations of the same work on a GPU whose clock the power cap moves.
std::vector<Stats> time_graphs_interleaved(const std::vector<std::function<void(int)>>& launches, CUstream stream,
                                           const TimingPlan& plan);

}  // namespace i8g

// Orders the plain runs (i8gemm_run, no caller workspace) of one prepared problem whose kernel
// uses the problem's own scratch memory — split-K partials and counters, cuBLASLt's int32
// accumulator and workspace — so that two of them on two streams never overlap on it.
//
// Each such run records an event on its stream after its launches. A run on another stream than
// the last one first makes its stream wait on that event: the two runs then execute one after
// the other on the GPU (the host never waits). Only runs issued eagerly are ordered: a run
// being captured into a graph executes nothing yet, and a graph's replays are not calls into
// the library, so a graph captured with the problem's own scratch must not be replayed while
// another run of the problem is in flight on another stream (give each stream its own
// workspace with i8gemm_run_with_workspace for that). The caller holds `mu` across before(),
// the launches and after(), so runs from several threads are ordered too.
#pragma once
#include <cuda.h>

#include <mutex>

namespace i8g {

class StreamOrder {
 public:
  StreamOrder();  // creates the event: at prepare, with the engine's context current
  ~StreamOrder();
  StreamOrder(const StreamOrder&) = delete;
  StreamOrder& operator=(const StreamOrder&) = delete;

  std::mutex mu;
  // Before the launches on `stream` (the engine's context current): waits on the last run's
  // event when that run was eager on another stream and `stream` is not capturing.
  void before(CUstream stream);
  // After them: records the event on `stream`.
  void after(CUstream stream);

 private:
  CUevent done_ = nullptr;
  CUstream last_ = nullptr;
  bool used_ = false;      // a run has recorded done_
  bool captured_ = false;  // ... inside a capture: done_ then stands for graph work
};

}  // namespace i8g

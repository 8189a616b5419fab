// The tuner's measurement on the GPU: a reference output spot-checked against the CPU, then
// per candidate a bit-exact check against that reference, a short probe, and (unless the
// policy prunes it) eager and graph-replayed timings over the rotating operands. What to do
// with the numbers is policy.hpp's business.
#pragma once
#include <cuda.h>

#include <functional>
#include <limits>
#include <vector>

#include "runtime/gpu/timing.hpp"
#include "runtime/tune/operands.hpp"
#include "runtime/tune/policy.hpp"

namespace i8g {

// Enqueues call number i of a candidate on the measurer's stream (operand set i % sets).
using Launch = std::function<void(int call)>;

class Measurer {
 public:
  Measurer(Operands& ops, CUstream stream, const TimingPlan& plan, double prune_factor);

  // Runs `launch` once on set 0 and keeps its output as the reference, after checking a few
  // rows against the CPU reference; throws Error when they differ.
  void take_reference(const Launch& launch);
  // Fills c's status, reason and times. Wrong output is `rejected` and a CUDA error `failed`
  // (neither timed); a probe the policy prunes keeps only the probe as its eager time.
  void measure(CandidateResult& c, const Launch& launch);
  // The final round (policy.hpp, finalists): times launches[i], the candidate cs[which[i]], again
  // with every finalist's samples interleaved, and replaces their graph times with these; each
  // reason then says so. With `placements` > 1 the round is timed that many times, the operands
  // moved to fresh memory between them (Operands::move), and each finalist keeps its median
  // placement (policy.hpp, median_placement). Each placement's timing is first warmed for
  // `warmup_ms` of the finalists' replays (TimingPlan::warmup_ms). On a CUDA error nothing is
  // replaced and the Error is thrown on.
  void final_round(std::vector<CandidateResult>& cs, const std::vector<size_t>& which,
                   const std::vector<Launch>& launches, int placements = 1, double warmup_ms = 0);

 private:
  Operands& ops_;
  CUstream stream_;
  TimingPlan plan_;
  double prune_factor_;
  std::vector<uint8_t> ref_, got_;
  double best_probe_ = std::numeric_limits<double>::infinity();
};

}  // namespace i8g

// The autotuner: for a problem and each M bucket, every candidate kernel (and every cuBLASLt
// heuristic algorithm + dequant, the baseline) is checked against the reference before it is
// timed; wrong ones are rejected with the reason; survivors are timed eagerly and in graph
// replay over rotating buffers larger than L2 (docs/tuning.md). Every timing is kept in the
// cache; the winner (graph median; a tie within 1% goes to the finalist whose slowest placement is
// fastest, then to the lexicographically first name: policy.hpp, pick_winner) is
// stored with its speedup over the best cuBLASLt algorithm. The rules are in policy.hpp, the
// measuring in measure.hpp; this file runs them over the buckets and stores the results.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "cache/cache.hpp"
#include "generator/types.hpp"
#include "runtime/gpu/timing.hpp"
#include "runtime/serve/engine.hpp"
#include "runtime/tune/policy.hpp"

namespace i8g {

struct TuneOptions {
  std::vector<int64_t> ms = {1, 16, 256, 4096};
  std::string filter;         // regex on kernel names; empty: all candidates
  TimingPlan plan;
  // A candidate whose probe (eager median of 5 launches) is this much slower than the best probe
  // so far is not fully timed. 2: over session 32's H200 tune (64 buckets, 6285 candidates fully
  // timed at the old 4), no candidate within 3% of its bucket's fastest graph median had an eager
  // median above 1.28x the bucket's fastest eager one, while at M >= 1024 27-71 candidates a bucket
  // (the slowest, so the longest to time) ran above 2x the winner. The cuBLASLt algorithms are timed
  // first, so the baseline (the fastest of them) is always fully timed.
  double prune_factor = 2.0;
  int jobs = 0;               // parallel compiles
  bool experimental_wgmma = false;  // also race the wgmma family (sm_90a; Target::experimental_wgmma)
  bool experimental_staged_store = false;  // also race wgmma_tma's staged-store twins (Target's flag)
  // Also race wgmma_tma's packed-weight twins (Target's flag), each timed and verified on its
  // pack of the same weights; never stored as a winner (policy.hpp, servable).
  bool experimental_packed_weight = false;
  bool experimental_tile_order = false;  // also race wgmma_tma's tile-order twins (Target's flag)
  // The final round timed over this many placements of the operands (fresh allocations between
  // them; Measurer::final_round), each finalist keeping its median placement. 1: one placement,
  // the operands the first round used. 5 since session 37: over two tunes on an H100, the
  // placement-0 pick cost 3-12% in 4 of 46 buckets where the median placement's pick cost none
  // (docs/tuning.md, step 6).
  int final_placements = 5;
  // Each placement of the final round first replays every finalist in turn for at least this many
  // ms, then times them (TimingPlan::warmup_ms): the round that decides then ranks them under
  // sustained load, the power-capped state a busy server runs in and scripts/gpu_bench.sh times
  // every contender in (session 46: warmed for 100 ms, CUTLASS and cuBLASLt fp8 ran 4-9% slower
  // at 4096 x 4096 M = 4096 on an H100, and our cluster twin 6%). 0: the round starts timing after
  // the graphs' few warm replays, as before.
  double final_warmup_ms = 0;
  // Also race the programmatic-launch trigger twins (generator: trigger_twins; docs/pdl.md) of the
  // first round's finalists, compiled after that round, so that they take part in the final one.
  // On since session 41 (H200: 0.95-0.99x the plain winner's graph median at six tuned points).
  bool trigger_twins = true;
  // Skip the M buckets whose winner the cache already holds for this device, compiler and
  // generator (an interrupted tune carries on where it stopped); their results carry `stored`.
  bool resume = false;
};

// Progress: (stage, done, total); called with done = 0 when a stage starts ("<problem>:
// compiling", "<problem> M=<m>: timing"), then after each candidate.
using AutotuneProgress = std::function<void(const std::string& stage, size_t done, size_t total)>;
// Called with the bucket's M once its winner is stored (not for --resume's stored buckets).
using BucketDone = std::function<void(int64_t m)>;

std::vector<BucketResult> autotune(Engine& engine, cache::Cache& cache, const GemmProblem& p,
                                   const TuneOptions& opt,
                                   const AutotuneProgress& progress = {}, const BucketDone& bucket_done = {});

}  // namespace i8g

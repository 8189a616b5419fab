// The tuner's rules, apart from any GPU: which probe is pruned, which candidate wins, what the
// cuBLASLt baseline is, and the speedup. Pure functions of the measurements, so every rule is
// pinned by CPU tests (tests/runtime/tune/policy_test.cpp); measure.hpp produces the inputs.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cache/cache.hpp"
#include "cache/merge.hpp"
#include "runtime/gpu/timing.hpp"
#include "runtime/serve/candidate.hpp"

namespace i8g {

struct CandidateResult {
  Candidate candidate;
  int64_t kernel_id = 0;  // the kernel's cache id; 0 for cuBLASLt
  cache::CandidateStatus status = cache::CandidateStatus::ok;
  std::string reason;     // why rejected or failed; for an ok candidate pruned after its probe, that
  // Empty: not measured. A pruned candidate has only its probe (eager); a rejected or failed
  // one has neither.
  std::optional<Stats> eager, graph;
  // Timed again in the final round (graph holds that round's time); see finalists().
  bool finalist = false;
  // The final round's graph median at each placement of the operands, in the order timed (empty
  // without a final round): what breaks a tie (pick_winner).
  std::vector<double> placement_us;
};

struct BucketResult {
  int64_t m = 0;
  std::vector<CandidateResult> candidates;
  std::optional<size_t> winner;       // index into candidates
  std::optional<double> baseline_us;  // best cuBLASLt i8 + dequant graph median
  std::string baseline_note;          // why cuBLASLt offered no algorithm, if it did not
  double speedup = 0;                 // baseline_us / the winner's graph median; 0 without either
  // Set when the bucket was not timed because the cache already held its winner (--resume);
  // candidates is then empty.
  std::optional<cache::Winner> stored;

  const CandidateResult* winning() const { return winner ? &candidates[*winner] : nullptr; }
};

// Candidates within this fraction of the fastest graph median tie: the rule a cache merge
// applies to two stored winners too (cache/merge.hpp).
inline constexpr double kTieFraction = cache::kWinnerTieFraction;

// Ok and graph-timed: the only candidates that can win or be the baseline.
bool fully_timed(const CandidateResult& c);

// A probe this much slower than the best probe so far is not fully timed (best: infinity
// before the first).
bool pruned(double probe_us, double best_probe_us, double prune_factor);
std::string prune_reason(double probe_us, double best_probe_us, double prune_factor);

// Whether serving could run the candidate: not a kernel that reads a packed weight (raced under
// `tune --experimental-packed-weight` for its times; serving hands kernels the plain weight).
bool servable(const CandidateResult& c);
// The reason decide() adds to a fully timed candidate that is not servable.
inline constexpr const char* kNotServableReason =
    "never the winner: reads a packed weight (tune --experimental-packed-weight), serving passes the plain one";

// Deterministic winner among fully timed, servable candidates: lowest graph median; among those
// within kTieFraction of it, the one whose slowest final-round placement (worst_placement_us) is
// fastest, then the candidate's text. Why the slowest placement: a tie is noise by the median, and our kernels'
// slow modes follow where the operands sit (docs/tuning.md, step 7). Session 45 (H100): at
// 4096x4096 and 2560x4096 M = 4096 the cluster's raster twins were fastest by the median and at 9
// of 10 placements, and the name order kept the plain ping-pong tile within 1% of them, which then
// ran 0.80x and 0.86x of CUTLASS as i8gemm_rt. Where a final round ran, only its finalists
// can win: their times are the round's (several placements, in turn), which a first-round time
// from one placement, timed alone, does not compare with; and every other candidate was behind
// each of them in the first round. c.size() when none is.
size_t pick_winner(const std::vector<CandidateResult>& c);
// A candidate's slowest final-round placement; 0 with fewer than two (no final round, or
// --final-placements 1): then the name alone breaks a tie, as before session 45.
double worst_placement_us(const CandidateResult& c);

// The best fully timed cuBLASLt graph median; none when no cuBLASLt algorithm was timed.
std::optional<double> baseline_us(const std::vector<CandidateResult>& c);

double speedup(std::optional<double> baseline_us, double winner_us);

// The final round: the fully timed candidates whose graph median is within kFinalFraction of the
// fastest, at most kMaxFinalists of them and at most kMaxPerFamily of one family (a kernel and
// its programmatic-launch trigger twins, `_tr1` `_tr2`: the same kernel but for where it signals
// the next launch), fastest first (equal medians in candidate order), are timed again together
// with their samples interleaved (A B C A B C ...), so that a drift of the clock or the power
// state between their first timings cannot decide the winner. Empty when fewer than two qualify
// (no final round). Six and two since session 44: with four, a kernel and its twins held two or
// three places in 54 of 64 buckets of session 42's H200 tune (docs/tuning.md, step 6),
// and on an H100 at 2560x4096 M = 4096 the first round ranked fifth (1.05x) the kernel that ran
// fastest as i8gemm_rt (docs/results/h100_2026-12-07_s43_calls.md).
inline constexpr double kFinalFraction = 0.10;
inline constexpr size_t kMaxFinalists = 6;
inline constexpr size_t kMaxPerFamily = 2;
// The family's text: a kernel's name with no trigger (pdl_trigger 0); cuBLASLt's algorithm's own.
std::string trigger_family(const Candidate& c);
std::vector<size_t> finalists(const std::vector<CandidateResult>& c);
// What a finalist's reason says: its first-round graph median, the round's size and, where the
// round was timed over several placements of the operands, how many and the median at each, in
// the order timed (`per_placement`: the finalist's times at each placement; one or none: a single one).
std::string final_round_reason(double first_round_us, size_t finalists, const std::vector<Stats>& per_placement = {});
// A finalist's graph times over several placements of the operands (fresh allocations of the same
// sets): the placement whose median is the median of them (the upper one of an even count), so
// the time stored is one that was measured. Session 36 (H100): our ping-pong 128x128 ran 93-118 us
// over 30 allocations of 4096x4096 M = 4096 where CUTLASS ran 96-98, and one race's placements
// put it 10% ahead of a twin that was 10% faster by the median over them (docs/wgmma_tma.md).
Stats median_placement(std::vector<Stats> per_placement);

// Fills r's winner, baseline_us and speedup from r.candidates, and gives every fully timed
// candidate that is not servable kNotServableReason.
void decide(BucketResult& r);

}  // namespace i8g

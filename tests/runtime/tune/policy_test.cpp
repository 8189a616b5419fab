// The tuner's rules on made-up measurements: who wins, what ties, what is pruned, what the
// baseline and the speedup are. No GPU: the numbers stand in for graph and eager medians.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <optional>

#include "core/error.hpp"
#include "generator/generator.hpp"
#include "runtime/tune/policy.hpp"

namespace i8g {
namespace {

using cache::CandidateStatus;

// Kernels of one real problem, so their names are real names (whatever the generator calls them).
GemmProblem problem() {
  GemmProblem p;
  p.n = 2560;
  p.k = 4096;
  return p;
}

KernelSpec kernel(size_t i) {
  const GemmProblem p = problem();
  const Target t = Target::from_arch("sm_90a");
  const std::vector<KernelConfig> cs = candidates(p, t);
  EXPECT_GT(cs.size(), i);
  return {p, cs.at(i), t.arch};
}

Stats stats(double median_us) { return {median_us, median_us * 1.1, median_us * 0.9}; }

CandidateResult timed(Candidate c, double graph_us, CandidateStatus status = CandidateStatus::ok) {
  CandidateResult r;
  r.candidate = std::move(c);
  r.status = status;
  r.eager = stats(graph_us * 1.2);
  r.graph = stats(graph_us);
  return r;
}

CandidateResult pruned_after_probe(Candidate c, double probe_us) {
  CandidateResult r;
  r.candidate = std::move(c);
  r.eager = stats(probe_us);
  r.reason = prune_reason(probe_us, 1.0, 4.0);
  return r;
}

CandidateResult not_timed(Candidate c, CandidateStatus status) {
  CandidateResult r;
  r.candidate = std::move(c);
  r.status = status;
  r.reason = "output differs";
  return r;
}

TEST(TunePolicy, LowestGraphMedianWins) {
  const std::vector<CandidateResult> c = {timed(kernel(0), 12.0), timed(kernel(1), 9.0), timed(LtAlgo{0}, 11.0)};
  EXPECT_EQ(pick_winner(c), 1u);
}

// A kernel that reads a packed weight (tune --experimental-packed-weight) is timed and kept in the
// race, never the winner: serving hands kernels the plain weight. The fastest servable one wins.
TEST(TunePolicy, APackedWeightKernelNeverWins) {
  KernelSpec packed = kernel(0);
  packed.config.packed_weight = 1;
  const std::vector<CandidateResult> c = {timed(packed, 5.0), timed(kernel(1), 9.0), timed(LtAlgo{0}, 11.0)};
  EXPECT_FALSE(servable(c[0]));
  EXPECT_TRUE(servable(c[1]));
  EXPECT_TRUE(servable(c[2]));
  EXPECT_EQ(pick_winner(c), 1u);
  EXPECT_EQ(pick_winner({timed(packed, 5.0)}), 1u) << "none servable: no winner";
  BucketResult r;
  r.candidates = c;
  decide(r);
  ASSERT_TRUE(r.winner.has_value());
  EXPECT_EQ(*r.winner, 1u);
  EXPECT_DOUBLE_EQ(r.speedup, 11.0 / 9.0);
  EXPECT_EQ(r.candidates[0].reason, kNotServableReason) << "inspect race says why the fastest did not win";
  EXPECT_EQ(r.candidates[1].reason, "");
}

TEST(TunePolicy, TiesWithinOnePercentGoToTheFirstText) {
  std::vector<Candidate> names = {kernel(0), kernel(1), kernel(2)};
  std::sort(names.begin(), names.end(),
            [](const Candidate& a, const Candidate& b) { return to_string(a) < to_string(b); });
  // The last by text is fastest; the first by text is within 1%, the middle one just outside.
  const std::vector<CandidateResult> c = {timed(names[2], 10.0), timed(names[1], 10.11), timed(names[0], 10.09)};
  EXPECT_EQ(pick_winner(c), 2u);
  // Order of measurement does not matter.
  const std::vector<CandidateResult> reversed(c.rbegin(), c.rend());
  EXPECT_EQ(to_string(reversed[pick_winner(reversed)].candidate), to_string(names[0]));
  // Outside 1% there is no tie: the fastest keeps it.
  const std::vector<CandidateResult> apart = {timed(names[2], 10.0), timed(names[0], 10.2)};
  EXPECT_EQ(pick_winner(apart), 0u);
}

TEST(TunePolicy, TieBreakComparesCublasLtAndKernelsByTheirText) {
  const std::vector<CandidateResult> c = {timed(kernel(0), 10.0), timed(LtAlgo{3}, 10.05)};
  const size_t w = pick_winner(c);
  EXPECT_EQ(w, to_string(c[1].candidate) < to_string(c[0].candidate) ? 1u : 0u);
}

TEST(TunePolicy, FailedRejectedAndPrunedNeverWin) {
  CandidateResult rejected = timed(kernel(0), 1.0, CandidateStatus::rejected);  // even with a time
  CandidateResult failed = timed(kernel(1), 1.0, CandidateStatus::failed);
  const std::vector<CandidateResult> c = {rejected, failed, pruned_after_probe(kernel(2), 0.5),
                                          not_timed(kernel(3), CandidateStatus::failed), timed(kernel(4), 20.0)};
  EXPECT_FALSE(fully_timed(c[0]));
  EXPECT_FALSE(fully_timed(c[2]));
  EXPECT_EQ(pick_winner(c), 4u);
}

TEST(TunePolicy, NoFullyTimedCandidateMeansNoWinner) {
  EXPECT_EQ(pick_winner({}), 0u);
  const std::vector<CandidateResult> c = {not_timed(kernel(0), CandidateStatus::rejected),
                                          not_timed(LtAlgo{0}, CandidateStatus::failed),
                                          pruned_after_probe(kernel(1), 3.0)};
  EXPECT_EQ(pick_winner(c), c.size());
  BucketResult r;
  r.candidates = c;
  decide(r);
  EXPECT_FALSE(r.winner);
  EXPECT_EQ(r.winning(), nullptr);
  EXPECT_FALSE(r.baseline_us);
  EXPECT_EQ(r.speedup, 0);
}

TEST(TunePolicy, BaselineIsTheBestFullyTimedCublasLtAlgorithmOnly) {
  const std::vector<CandidateResult> c = {
      timed(kernel(0), 5.0),                                    // faster, but not cuBLASLt
      timed(LtAlgo{0}, 12.0), timed(LtAlgo{1}, 11.0),
      timed(LtAlgo{2}, 3.0, CandidateStatus::rejected),         // wrong output is no baseline
      pruned_after_probe(LtAlgo{3}, 2.0),                       // nor is a probe
  };
  ASSERT_TRUE(baseline_us(c));
  EXPECT_DOUBLE_EQ(*baseline_us(c), 11.0);
  EXPECT_FALSE(baseline_us({timed(kernel(0), 5.0), timed(kernel(1), 6.0)}));
}

TEST(TunePolicy, SpeedupIsBaselineOverWinnerAndZeroWithoutABaseline) {
  EXPECT_DOUBLE_EQ(speedup(11.0, 5.5), 2.0);
  EXPECT_EQ(speedup(std::nullopt, 5.5), 0);
  BucketResult r;
  r.candidates = {timed(kernel(0), 8.0), timed(kernel(1), 9.0)};
  decide(r);
  ASSERT_TRUE(r.winner);
  EXPECT_EQ(*r.winner, 0u);
  EXPECT_FALSE(r.baseline_us);
  EXPECT_EQ(r.speedup, 0);
  r.candidates.push_back(timed(LtAlgo{0}, 12.0));
  decide(r);
  EXPECT_EQ(*r.winner, 0u);
  EXPECT_DOUBLE_EQ(r.baseline_us.value(), 12.0);
  EXPECT_DOUBLE_EQ(r.speedup, 1.5);
}

TEST(TunePolicy, CublasLtCanWinItsOwnRace) {
  BucketResult r;
  r.candidates = {timed(LtAlgo{0}, 7.0), timed(kernel(0), 9.0)};
  decide(r);
  ASSERT_TRUE(r.winning());
  EXPECT_EQ(to_string(r.winning()->candidate), "cublaslt:algo=0");
  EXPECT_DOUBLE_EQ(r.speedup, 1.0);
}

TEST(TunePolicy, AProbeMoreThanPruneFactorTimesTheBestIsPruned) {
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_FALSE(pruned(1000.0, inf, 4.0)) << "the first probe is never pruned";
  EXPECT_FALSE(pruned(40.0, 10.0, 4.0)) << "exactly the factor is still timed";
  EXPECT_TRUE(pruned(40.1, 10.0, 4.0));
  EXPECT_FALSE(pruned(39.0, 10.0, 4.0));
  EXPECT_EQ(prune_reason(41.26, 10.0, 4.0), "pruned: probe 41.3 us > 4x the best probe (10.0 us)");
}

// The final round takes the fully timed candidates within 10% of the fastest, at most six,
// fastest first (equal medians in candidate order), cuBLASLt's among them; none when fewer than
// two qualify.
TEST(TunePolicy, FinalistsAreTheFullyTimedWithinTenPercentAtMostSix) {
  const std::vector<CandidateResult> c = {
      timed(kernel(0), 10.5),                                  // in
      timed(kernel(1), 11.01),                                 // past 10% of 10.0
      timed(LtAlgo{0}, 10.0),                                  // the fastest
      timed(kernel(2), 1.0, CandidateStatus::rejected),        // never
      pruned_after_probe(kernel(3), 10.2),                     // no graph time: never
      timed(kernel(4), 10.5),                                  // ties 10.5: after kernel(0)
      timed(kernel(5), 11.0),                                  // exactly 10%: in
  };
  EXPECT_EQ(finalists(c), (std::vector<size_t>{2, 0, 5, 6}));
  std::vector<CandidateResult> seven = c;
  seven.push_back(timed(kernel(6), 10.1));
  seven.push_back(timed(kernel(7), 10.6));
  seven.push_back(timed(kernel(8), 10.05));
  EXPECT_EQ(finalists(seven), (std::vector<size_t>{2, 9, 7, 0, 5, 8})) << "at most six, the fastest";
  EXPECT_TRUE(finalists({timed(kernel(0), 10.0), timed(kernel(1), 12.0)}).empty()) << "one within 10%: no round";
  EXPECT_TRUE(finalists({timed(kernel(0), 10.0)}).empty());
  EXPECT_TRUE(finalists({}).empty());
  EXPECT_EQ(final_round_reason(12.345, 3), "final round: graph median of 3 finalists timed in turn (first round 12.35 us)");
}

// A kernel and its trigger twins are one family: at most two of them reach the final round, so
// the places left go to other kernels (session 42's H200 tune gave three of four to one family).
TEST(TunePolicy, AtMostTwoFinalistsOfOneTriggerFamily) {
  const GemmProblem p = problem();
  const Target t = Target::from_arch("sm_90a");
  std::optional<KernelSpec> with_twins;  // the first candidate with trigger twins
  for (const KernelConfig& k : candidates(p, t))
    if (!with_twins && !trigger_twins(p, k, t).empty()) with_twins = KernelSpec{p, k, t.arch};
  ASSERT_TRUE(with_twins);
  const KernelSpec base = *with_twins;
  const std::vector<KernelConfig> twins = trigger_twins(p, base.config, t);
  ASSERT_EQ(twins.size(), 2u) << base.name();
  const KernelSpec tr1{p, twins[0], t.arch}, tr2{p, twins[1], t.arch};
  EXPECT_EQ(trigger_family(tr1), base.name());
  EXPECT_EQ(trigger_family(tr2), base.name());
  EXPECT_EQ(trigger_family(LtAlgo{3}), "cublaslt:algo=3");
  EXPECT_NE(trigger_family(kernel(1)), base.name());
  const std::vector<CandidateResult> c = {timed(base, 10.0), timed(tr1, 9.9), timed(tr2, 9.8), timed(kernel(1), 10.7),
                                          timed(LtAlgo{0}, 12.0)};
  EXPECT_EQ(finalists(c), (std::vector<size_t>{2, 1, 3})) << "the family's third waits; the next kernel comes in";
}

// Once a final round ran, its finalists' times are the round's; a candidate left out of it keeps
// a first-round time, from one placement and timed alone, that does not compare with them.
TEST(TunePolicy, AfterAFinalRoundOnlyAFinalistWins) {
  BucketResult r;
  r.candidates = {timed(kernel(0), 9.0), timed(kernel(1), 10.2), timed(kernel(2), 10.0), timed(LtAlgo{0}, 12.0)};
  r.candidates[1].finalist = r.candidates[2].finalist = true;
  decide(r);
  EXPECT_EQ(*r.winner, 2u) << "kernel 0's 9.0 is a first-round time";
  EXPECT_DOUBLE_EQ(r.speedup, 1.2);
  r.candidates[1].finalist = r.candidates[2].finalist = false;
  decide(r);
  EXPECT_EQ(*r.winner, 0u) << "no final round (or it failed): the first round's times decide";
}

// A tie within 1% by the median goes to the finalist whose slowest placement is fastest, and only
// then to the name. Session 45 (H100), 4096x4096 M = 4096, the final round's placements in turn:
// the plain ping-pong tile (the first name) was within 1% of its cluster twins and slower at every
// placement; it then ran 0.80x of CUTLASS as i8gemm_rt.
TEST(TunePolicy, ATieGoesToTheFastestSlowestPlacement) {
  std::vector<Candidate> names = {kernel(0), kernel(1), kernel(2)};
  std::sort(names.begin(), names.end(),
            [](const Candidate& a, const Candidate& b) { return to_string(a) < to_string(b); });
  auto finalist = [&](const Candidate& n, std::vector<double> at) {
    std::vector<double> sorted = at;
    std::sort(sorted.begin(), sorted.end());
    CandidateResult r = timed(n, sorted[sorted.size() / 2]);
    r.finalist = true;
    r.placement_us = std::move(at);
    return r;
  };
  BucketResult r;
  r.candidates = {finalist(names[0], {94.80, 97.05, 102.10, 95.19, 95.18}),
                  finalist(names[1], {94.23, 96.34, 100.83, 94.63, 94.46}),
                  finalist(names[2], {94.45, 96.54, 100.66, 94.79, 94.41})};
  EXPECT_DOUBLE_EQ(worst_placement_us(r.candidates[2]), 100.66);
  decide(r);
  EXPECT_EQ(*r.winner, 2u) << "not the first name (its worst placement 102.10), nor the fastest median (100.83)";
  // Outside 1% by the median the fastest median wins, however its placements spread.
  r.candidates[0] = finalist(names[0], {93.0, 93.1, 120.0, 93.2, 93.0});
  decide(r);
  EXPECT_EQ(*r.winner, 0u);
  // Equal slowest placements, or fewer than two placements: the name decides.
  r.candidates = {finalist(names[1], {10.0, 10.05}), finalist(names[0], {10.05, 10.0})};
  decide(r);
  EXPECT_EQ(*r.winner, 1u);
  r.candidates = {finalist(names[2], {10.0}), finalist(names[0], {10.05}), finalist(names[1], {10.02})};
  EXPECT_DOUBLE_EQ(worst_placement_us(r.candidates[0]), 0.0);
  decide(r);
  EXPECT_EQ(*r.winner, 1u) << "one placement (--final-placements 1): the first name within 1%";
}

// Over several placements of the operands a finalist keeps the placement whose median is the
// median (the upper one of an even count): a time that was measured, whole (its p90 and min too).
TEST(TunePolicy, FinalRoundKeepsTheMedianPlacement) {
  const Stats a{101.0, 103.0, 99.0}, b{94.0, 95.0, 93.0}, c{117.0, 118.0, 115.0}, d{106.0, 107.0, 105.0};
  auto same = [](const Stats& x, const Stats& y) {
    return x.median_us == y.median_us && x.p90_us == y.p90_us && x.min_us == y.min_us;
  };
  EXPECT_TRUE(same(median_placement({a}), a)) << "one placement: its own times";
  EXPECT_TRUE(same(median_placement({a, b, c}), a));
  EXPECT_TRUE(same(median_placement({c, b, a}), a)) << "whatever the order they were timed in";
  EXPECT_TRUE(same(median_placement({a, b, c, d}), d)) << "even count: the upper median";
  EXPECT_TRUE(same(median_placement({b, b}), b));
  EXPECT_THROW(median_placement({}), Error);
  EXPECT_EQ(final_round_reason(12.345, 3, {a}), final_round_reason(12.345, 3));
  EXPECT_EQ(final_round_reason(12.345, 2, {a, c, b}),
            "final round: graph median of 2 finalists timed in turn over 3 placements of the operands (101.00 "
            "117.00 94.00 us in turn), the median placement (first round 12.35 us)");
}

}  // namespace
}  // namespace i8g

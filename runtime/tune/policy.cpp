#include "runtime/tune/policy.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <string>
#include <utility>

#include "core/error.hpp"

namespace i8g {

bool fully_timed(const CandidateResult& c) {
  return c.status == cache::CandidateStatus::ok && c.graph && c.graph->median_us > 0;
}

bool pruned(double probe_us, double best_probe_us, double prune_factor) {
  return probe_us > prune_factor * best_probe_us;
}

std::string prune_reason(double probe_us, double best_probe_us, double prune_factor) {
  return fmt::format("pruned: probe {:.1f} us > {}x the best probe ({:.1f} us)", probe_us, prune_factor,
                     best_probe_us);
}

bool servable(const CandidateResult& c) {
  const KernelSpec* k = kernel_of(c.candidate);
  return k == nullptr || k->config.packed_weight == 0;
}

double worst_placement_us(const CandidateResult& c) {
  if (c.placement_us.size() < 2) return 0;
  return *std::max_element(c.placement_us.begin(), c.placement_us.end());
}

size_t pick_winner(const std::vector<CandidateResult>& c) {
  const bool final_ran = std::any_of(c.begin(), c.end(), [](const CandidateResult& r) { return r.finalist; });
  auto eligible = [&](size_t i) { return fully_timed(c[i]) && servable(c[i]) && (c[i].finalist || !final_ran); };
  size_t best = c.size();
  for (size_t i = 0; i < c.size(); ++i)
    if (eligible(i) && (best == c.size() || c[i].graph->median_us < c[best].graph->median_us)) best = i;
  if (best == c.size()) return best;
  // The tie's order: the slowest placement, then the text.
  size_t pick = best;
  std::pair<double, std::string> pick_key{worst_placement_us(c[best]), to_string(c[best].candidate)};
  for (size_t i = 0; i < c.size(); ++i) {
    if (!eligible(i) || c[i].graph->median_us > (1 + kTieFraction) * c[best].graph->median_us) continue;
    if (std::pair<double, std::string> key{worst_placement_us(c[i]), to_string(c[i].candidate)}; key < pick_key) {
      pick = i;
      pick_key = std::move(key);
    }
  }
  return pick;
}

std::string trigger_family(const Candidate& c) {
  const KernelSpec* k = kernel_of(c);
  if (k == nullptr) return to_string(c);
  KernelSpec base = *k;
  base.config.pdl_trigger = 0;
  return base.name();
}

std::vector<size_t> finalists(const std::vector<CandidateResult>& c) {
  std::vector<size_t> timed;
  for (size_t i = 0; i < c.size(); ++i)
    if (fully_timed(c[i])) timed.push_back(i);
  std::stable_sort(timed.begin(), timed.end(),
                   [&](size_t a, size_t b) { return c[a].graph->median_us < c[b].graph->median_us; });
  std::vector<size_t> out;
  if (timed.empty()) return out;
  const double limit = (1 + kFinalFraction) * c[timed.front()].graph->median_us;
  std::map<std::string, size_t> per_family;
  for (size_t i : timed) {
    if (out.size() == kMaxFinalists || c[i].graph->median_us > limit) break;
    if (++per_family[trigger_family(c[i].candidate)] <= kMaxPerFamily) out.push_back(i);
  }
  if (out.size() < 2) out.clear();
  return out;
}

std::string final_round_reason(double first_round_us, size_t finalists, const std::vector<Stats>& per_placement) {
  if (per_placement.size() > 1) {
    std::vector<std::string> medians;
    for (const Stats& s : per_placement) medians.push_back(fmt::format("{:.2f}", s.median_us));
    return fmt::format("final round: graph median of {} finalists timed in turn over {} placements of the operands "
                       "({} us in turn), the median placement (first round {:.2f} us)",
                       finalists, per_placement.size(), fmt::join(medians, " "), first_round_us);
  }
  return fmt::format("final round: graph median of {} finalists timed in turn (first round {:.2f} us)", finalists,
                     first_round_us);
}

Stats median_placement(std::vector<Stats> per_placement) {
  if (per_placement.empty()) throw Error("autotune", "median_placement: no placement timed");
  std::stable_sort(per_placement.begin(), per_placement.end(),
                   [](const Stats& a, const Stats& b) { return a.median_us < b.median_us; });
  return per_placement[per_placement.size() / 2];
}

std::optional<double> baseline_us(const std::vector<CandidateResult>& c) {
  std::optional<double> best;
  for (const CandidateResult& r : c)
    if (lt_algo_of(r.candidate) && fully_timed(r) && (!best || r.graph->median_us < *best))
      best = r.graph->median_us;
  return best;
}

double speedup(std::optional<double> baseline_us, double winner_us) {
  return baseline_us && *baseline_us > 0 && winner_us > 0 ? *baseline_us / winner_us : 0;
}

void decide(BucketResult& r) {
  // What `inspect race` shows beside a packed-weight twin's time, which may beat the winner's.
  for (CandidateResult& c : r.candidates)
    if (!servable(c) && fully_timed(c))
      c.reason = (c.reason.empty() ? "" : c.reason + "; ") + kNotServableReason;
  r.baseline_us = baseline_us(r.candidates);
  const size_t w = pick_winner(r.candidates);
  if (w == r.candidates.size()) return;
  r.winner = w;
  r.speedup = speedup(r.baseline_us, r.candidates[w].graph->median_us);
}

}  // namespace i8g

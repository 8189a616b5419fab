// i8gemm inspect race: every candidate a tune timed in each tuned bucket, fastest first, with
// its time relative to the winner's: how close the race was, which configs never came near,
// which were pruned, rejected or failed and why (the cache's timings table, read-only).
// --filter matches the problem key. --untuned adds, per bucket, what this build's untuned
// default would run there (generator/candidates.cpp heuristic_default, for the bucket's arch
// and SM count) and its time in the race: what the tune bought over not tuning.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <regex>

#include "cache/cache.hpp"
#include "core/error.hpp"
#include "core/target.hpp"
#include "generator/generator.hpp"
#include "tools/cli.hpp"

namespace i8g::cli {
namespace {

struct RaceOptions {
  std::shared_ptr<InspectShared> shared;  // --cache and --json, given before or after `race`
  std::string filter;                     // race's own: problem keys
  bool untuned = false;
};

// What prepare would run in this bucket without a tuned winner, by this build's rules (the
// rules may have changed since the tune), and that kernel's row of the race, if it ran.
struct UntunedRow {
  std::string name, why_none;  // why_none: no default could be named (a foreign arch or key)
  const cache::Timing* timing = nullptr;
};

UntunedRow untuned_row(const cache::Winner& w, const std::vector<cache::Timing>& ts) {
  UntunedRow u;
  try {
    Target t = Target::from_arch(w.key.arch);
    if (w.key.sm_count > 0) t.sm_count = w.key.sm_count;
    const GemmProblem p = GemmProblem::parse_key(w.key.problem_key);
    u.name = KernelSpec{p, heuristic_default(p, t, w.key.m_bucket), t.arch}.name();
  } catch (const Error& e) {
    u.why_none = e.what();
    return u;
  }
  // `ts` is ranked (race order): fully timed rows first, so the first row of that name is its best.
  for (const cache::Timing& t : ts)
    if (t.candidate == u.name) {
      u.timing = &t;
      break;
    }
  return u;
}

// "1.06x the winner", or why there is no ratio.
std::string untuned_text(const UntunedRow& u, double winner_us) {
  if (!u.why_none.empty()) return "no untuned default: " + u.why_none;
  if (!u.timing) return fmt::format("{} (not in this race)", u.name);
  if (!u.timing->graph_median_us) return fmt::format("{} ({}, no graph time)", u.name, to_string(u.timing->status));
  return fmt::format("{} {} us, {:.2f}x the winner", u.name, us_or_dash(u.timing->graph_median_us),
                     *u.timing->graph_median_us / winner_us);
}

// Fully timed rows first by graph median, then the rest (pruned, rejected, failed) in the
// order they were stored.
std::vector<cache::Timing> ranked(std::vector<cache::Timing> ts) {
  auto timed = [](const cache::Timing& t) { return t.status == cache::CandidateStatus::ok && t.graph_median_us; };
  std::stable_sort(ts.begin(), ts.end(), [&](const cache::Timing& a, const cache::Timing& b) {
    if (timed(a) != timed(b)) return timed(a);
    return timed(a) && *a.graph_median_us < *b.graph_median_us;
  });
  return ts;
}

std::string ratio_text(const cache::Timing& t, double winner_us) {
  return t.graph_median_us && winner_us > 0 ? fmt::format("{:.2f}x", *t.graph_median_us / winner_us) : "-";
}

void run_race(const RaceOptions& o) {
  if (!o.shared->filter.empty())
    throw Error("inspect race", fmt::format("--filter '{}' before `race` matches kernel names; race's own --filter, "
                                            "given after `race`, matches problem keys",
                                            o.shared->filter));
  cache::Cache c(resolve_cache_path(o.shared->cache), cache::Cache::Mode::read_only);
  std::optional<std::regex> filter;
  try {
    if (!o.filter.empty()) filter.emplace(o.filter);
  } catch (const std::regex_error& e) {
    throw Error("inspect", fmt::format("--filter '{}' is not a valid regex: {}", o.filter, e.what()));
  }
  const std::vector<cache::Winner> ws = winners_in_order(c);
  nlohmann::json buckets = nlohmann::json::array();
  size_t shown = 0, ratios = 0;
  double log_sum = 0, worst = 0;  // the untuned default's time over the winner's, where it ran
  std::string worst_at;
  for (const cache::Winner& w : ws) {
    if (filter && !std::regex_search(w.key.problem_key, *filter)) continue;
    ++shown;
    const std::vector<cache::Timing> ts = ranked(c.timings(w.key));
    UntunedRow u;
    if (o.untuned) {
      u = untuned_row(w, ts);
      if (u.timing && u.timing->graph_median_us && w.time_us > 0) {
        const double r = *u.timing->graph_median_us / w.time_us;
        log_sum += std::log(r);
        ++ratios;
        if (r > worst) worst = r, worst_at = fmt::format("{} M={}", w.key.problem_key, w.key.m_bucket);
      }
    }
    if (o.shared->json) {
      nlohmann::json rows = nlohmann::json::array();
      for (const cache::Timing& t : ts)
        rows.push_back({{"candidate", t.candidate},
                        {"status", to_string(t.status)},
                        {"graph_median_us", t.graph_median_us ? nlohmann::json(*t.graph_median_us) : nullptr},
                        {"eager_median_us", t.eager_median_us ? nlohmann::json(*t.eager_median_us) : nullptr},
                        {"vs_winner", t.graph_median_us && w.time_us > 0
                                          ? nlohmann::json(*t.graph_median_us / w.time_us)
                                          : nullptr},
                        {"winner", t.candidate == w.candidate},
                        {"reason", t.reason}});
      nlohmann::json bucket = {{"problem", w.key.problem_key}, {"m_bucket", w.key.m_bucket}, {"gpu", w.key.gpu_name},
                               {"winner", w.candidate}, {"time_us", w.time_us}, {"candidates", std::move(rows)}};
      if (o.untuned) {
        const bool timed = u.timing && u.timing->graph_median_us && w.time_us > 0;
        bucket["untuned"] = {{"candidate", u.name.empty() ? nullptr : nlohmann::json(u.name)},
                             {"graph_median_us", timed ? nlohmann::json(*u.timing->graph_median_us) : nullptr},
                             {"vs_winner", timed ? nlohmann::json(*u.timing->graph_median_us / w.time_us) : nullptr},
                             {"note", u.why_none}};
      }
      buckets.push_back(std::move(bucket));
      continue;
    }
    print_safe("{} M={} on {}: {} candidates, winner {} ({} us)\n", w.key.problem_key, w.key.m_bucket,
               w.key.gpu_name, ts.size(), w.candidate, us_or_dash(w.time_us));
    print_safe("{:>4} {:>10} {:>10} {:>8} {:<9} {}\n", "rank", "graph us", "eager us", "vs win", "status",
               "candidate  (note)");
    int rank = 0;
    for (const cache::Timing& t : ts)
      print_safe("{:>4} {:>10} {:>10} {:>8} {:<9} {}{}{}\n",
                 t.graph_median_us ? fmt::format("{}", ++rank) : std::string("-"), us_or_dash(t.graph_median_us),
                 us_or_dash(t.eager_median_us), ratio_text(t, w.time_us), to_string(t.status), t.candidate,
                 t.candidate == w.candidate ? "  <- winner" : "",
                 t.reason.empty() ? "" : "  (" + t.reason + ")");
    if (o.untuned) print_safe("untuned default (this build's rule): {}\n", untuned_text(u, w.time_us));
    print_safe("\n");
  }
  if (o.shared->json) {
    nlohmann::json doc = json_document("inspect-race");
    doc["buckets"] = std::move(buckets);
    print_safe("{}\n", doc.dump(2, ' ', true, nlohmann::json::error_handler_t::replace));
    return;
  }
  print_safe("{} of {} tuned buckets in {}\n", shown, ws.size(), c.path());
  if (o.untuned && ratios > 0)
    print_safe("untuned default against the winner, {} of {} buckets where it was timed: geometric mean {:.3f}x, "
               "worst {:.3f}x ({})\n",
               ratios, shown, std::exp(log_sum / double(ratios)), worst, worst_at);
}

}  // namespace

void setup_inspect_race(CLI::App& inspect, std::shared_ptr<InspectShared> shared) {
  auto o = std::make_shared<RaceOptions>();
  o->shared = std::move(shared);
  CLI::App* race = inspect.add_subcommand(
      "race", "every candidate a tune timed per tuned bucket, fastest first, against the winner");
  add_cache_option(*race, o->shared->cache, "cache file");
  race->add_option("--filter", o->filter, "only problems whose key matches this regex");
  race->add_flag("--json", o->shared->json, "print JSON");
  race->add_flag("--untuned", o->untuned,
                 "also what this build's untuned default would run in each bucket and its time in the race");
  race->callback([o] { run_race(*o); });
}

}  // namespace i8g::cli

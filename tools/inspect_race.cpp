// i8gemm inspect race: every candidate a tune timed in each tuned bucket, fastest first, with
// its time relative to the winner's: how close the race was, which configs never came near,
// which were pruned, rejected or failed and why (the cache's timings table, read-only).
// --filter matches the problem key.
#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <regex>

#include "cache/cache.hpp"
#include "core/error.hpp"
#include "tools/cli.hpp"

namespace i8g::cli {
namespace {

struct RaceOptions {
  std::shared_ptr<InspectShared> shared;  // --cache and --json, given before or after `race`
  std::string filter;                     // race's own: problem keys
};

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
  size_t shown = 0;
  for (const cache::Winner& w : ws) {
    if (filter && !std::regex_search(w.key.problem_key, *filter)) continue;
    ++shown;
    const std::vector<cache::Timing> ts = ranked(c.timings(w.key));
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
      buckets.push_back({{"problem", w.key.problem_key}, {"m_bucket", w.key.m_bucket}, {"gpu", w.key.gpu_name},
                         {"winner", w.candidate}, {"time_us", w.time_us}, {"candidates", std::move(rows)}});
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
                 t.reason.empty() ? "" : "  (" + t.reason.substr(0, 100) + ")");
    print_safe("\n");
  }
  if (o.shared->json) {
    nlohmann::json doc = json_document("inspect-race");
    doc["buckets"] = std::move(buckets);
    print_safe("{}\n", doc.dump(2, ' ', true, nlohmann::json::error_handler_t::replace));
    return;
  }
  print_safe("{} of {} tuned buckets in {}\n", shown, ws.size(), c.path());
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
  race->callback([o] { run_race(*o); });
}

}  // namespace i8g::cli

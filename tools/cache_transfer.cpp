// i8gemm cache merge / export: the caches of several tuning jobs into one, and a tuned cache's
// winners alone into a small file for serving nodes. Inputs are opened read-only and checked
// whole before anything is written; the output only gains entries.
#include <fmt/format.h>
#include <sys/stat.h>

#include <memory>

#include "cache/merge.hpp"
#include "core/error.hpp"
#include "tools/cli.hpp"

namespace i8g::cli {
namespace {

struct TransferOptions {
  std::string out, cache;
  std::vector<std::string> inputs;
  bool winners_only = false;
};

bool same_file(const std::string& a, const std::string& b) {
  struct stat sa, sb;
  return stat(a.c_str(), &sa) == 0 && stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

// Opens `path` read-only and refuses it whole when any row fails its checks.
std::unique_ptr<cache::Cache> open_checked_input(const std::string& path, const char* cmd) {
  auto c = std::make_unique<cache::Cache>(path, cache::Cache::Mode::read_only);
  if (const std::string why = cache::input_problem(*c); !why.empty())
    throw Error(cmd, fmt::format("{}: {}; nothing written", path, why));
  return c;
}

void print_report(const cache::MergeReport& r, const std::string& from) {
  print_safe("{}: kernels {} added, {} already there; timings {} added, {} already there; winners {} added, {} the "
             "same, {} replaced, {} kept\n",
             from, r.kernels_added, r.kernels_present, r.timings_added, r.timings_present, r.winners_added,
             r.winners_same, r.winners_replaced, r.winners_kept);
  for (const std::string& c : r.conflicts) print_safe("  conflict: {}\n", c);
  for (const std::string& m : r.missing) print_safe("  no binary stored for {}: a prepare would compile it\n", m);
}

void run_merge(const TransferOptions& o) {
  std::vector<std::unique_ptr<cache::Cache>> ins;
  for (const std::string& in : o.inputs) {
    if (same_file(in, o.out))
      throw Error("cache merge", fmt::format("{} is both the output and an input; nothing written", in));
    ins.push_back(open_checked_input(in, "cache merge"));  // every input checked before any write
  }
  cache::Cache out(o.out, cache::Cache::Mode::read_write);
  for (auto& in : ins) print_report(cache::merge_into(out, *in), in->path());
  print_safe("merged {} caches into {}\n", ins.size(), out.path());
}

void run_export(const TransferOptions& o) {
  if (!o.winners_only) throw Error("cache export", "only --winners-only exports are supported; add it");
  const std::string from = resolve_cache_path(o.cache);
  struct stat st;
  if (lstat(o.out.c_str(), &st) == 0)
    throw Error("cache export", fmt::format("{} exists; export writes a new file and never adds to one (use "
                                            "`cache merge` to add to a cache)", o.out));
  std::unique_ptr<cache::Cache> in = open_checked_input(from, "cache export");
  if (in->list_winners().empty())
    throw Error("cache export", fmt::format("{} holds no tuned winners; nothing exported", from));
  cache::Cache out(o.out, cache::Cache::Mode::read_write);
  const cache::MergeReport r = cache::export_winners(out, *in);
  print_report(r, from);
  print_safe("exported {} winners and {} kernels to {}\n", r.winners_added, r.kernels_added, out.path());
}

}  // namespace

void setup_cache_transfer(CLI::App& cache_cmd) {
  auto opts = std::make_shared<TransferOptions>();
  CLI::App* merge = cache_cmd.add_subcommand(
      "merge", "merge caches (kernels, timings, winners) into OUT; inputs are only read, conflicting winners are "
               "resolved by the tuner's tie rule and reported");
  merge->add_option("OUT", opts->out, "the cache to merge into (created if absent)")->required();
  merge->add_option("IN", opts->inputs, "caches to merge from")->required()->expected(1, -1);
  merge->callback([opts] { run_merge(*opts); });

  CLI::App* exp = cache_cmd.add_subcommand(
      "export", "write a new cache holding only the tuned winners, their kernels and the utility modules (for "
                "serving nodes)");
  exp->add_flag("--winners-only", opts->winners_only, "export the winners with exactly their binaries")->required();
  exp->add_option("OUT", opts->out, "the new cache file (must not exist)")->required();
  add_cache_option(*exp, opts->cache, "cache to export from (default: $I8GEMM_CACHE or ~/.cache/i8gemm/cache.sqlite)");
  exp->callback([opts] { run_export(*opts); });
}

}  // namespace i8g::cli

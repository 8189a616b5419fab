// Shared pieces of the i8gemm subcommands.
#pragma once
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cache/cache.hpp"
#include "generator/problem_enums.hpp"
#include "generator/types.hpp"
#include "tools/shapes.hpp"
#include "tools/worklist.hpp"

namespace i8g::cli {

// Problem options common to tune and bench (everything but N and K).
struct ProblemFlags {
  // CLI texts of the problem enums (generator/problem_enums.hpp); defaults as GemmProblem's.
  std::string layout = cli_text(GemmProblem{}.layout), act_scale = cli_text(GemmProblem{}.act_scale),
              weight_scale = cli_text(GemmProblem{}.weight_scale), out = cli_text(GemmProblem{}.out);
  bool bias = false, asymmetric = false;
  void add_to(CLI::App& app);
  GemmProblem make(const NamedShape& s) const;  // validated; throws Error
};

struct ShapeFlags {
  std::vector<std::string> shapes;
  std::string shapes_file;
  void add_to(CLI::App& app);
  std::vector<NamedShape> resolve() const;  // throws Error; at least one shape
};

std::string read_file(const std::string& path);  // throws Error with the path
std::string resolve_cache_path(const std::string& flag);  // flag, else Cache::default_path()
// --cache PATH on `cmd` into `into`; an empty PATH is a usage error (leave the flag out for
// the default cache), never a silent default.
CLI::Option* add_cache_option(CLI::App& cmd, std::string& into, const std::string& help);
// A time in microseconds ("12.34") for a table, or "-" where none was measured (NULL in the
// cache, which reads back empty or, in winners, as NaN): never a misleading 0.
std::string us_or_dash(std::optional<double> us);
// The cache's tuned winners by problem, GPU and M bucket (what `inspect winners` and `inspect
// race` list).
std::vector<cache::Winner> winners_in_order(cache::Cache& c);
// What every JSON document the CLI writes starts with (docs/json.md): {"schema": "i8gemm/<name>",
// "version": kJsonVersion}. The version grows when a field changes meaning or goes away.
inline constexpr int kJsonVersion = 1;
nlohmann::json json_document(const std::string& name);

// `text` with every byte a terminal could act on (C0 controls but newline and tab, DEL, and
// UTF-8-encoded C1 controls) written as \xNN: names and blobs from an untrusted cache are
// printed, never obeyed.
std::string terminal_safe(const std::string& text);
// fmt::print to stdout through terminal_safe (what `inspect` and `cache` print from a cache).
template <typename... Args>
void print_safe(fmt::format_string<Args...> f, Args&&... args) {
  const std::string s = terminal_safe(fmt::format(f, std::forward<Args>(args)...));
  std::fwrite(s.data(), 1, s.size(), stdout);
}

// What this build would look up for an arch: its compiler's version (the compiler is made once
// per vendor; "" when it cannot be made, e.g. hipRTC absent: such entries then show as stale)
// and the hash of the options it compiles with ("" for an arch this build does not know).
class CurrentBuild {
 public:
  const std::string& compiler_version(const std::string& arch);
  const std::string& options_hash(const std::string& arch);
  // "" when this build's lookups can reach `k`, else why not (one phrase). A source-override
  // entry is judged on its compiler and options only: its generator hash is never current.
  std::string stale_reason(const cache::StoredKernel& k);
  // "ok", "stale", or "override" (compiled from a source override; see stale_reason too).
  std::string status(const cache::StoredKernel& k);

 private:
  std::string nvidia_, amd_;
  bool nvidia_known_ = false, amd_known_ = false;
  std::map<std::string, std::string> options_hashes_;
};

// One-line progress on stderr while a TTY watches; silent otherwise.
// Progress of one stage on stderr: a bar on a terminal; elsewhere (logs, CI) one line when
// the stage starts and one when it ends, with counts and elapsed time.
class Progress {
 public:
  explicit Progress(std::string label);
  void update(size_t done, size_t total);
  void finish();
 private:
  std::string label_;
  bool tty_;
  size_t last_ = size_t(-1), total_ = 0;
  std::chrono::steady_clock::time_point start_;
};

void setup_tune(CLI::App& app, const std::vector<std::string>& argv);  // argv: for --devices' jobs
void setup_inspect(CLI::App& app);
// `inspect`'s own options, which its subcommands share: `inspect --cache F race` reads F as
// `inspect race --cache F` does (each subcommand binds its options to these same fields).
struct InspectShared {
  std::string cache;
  std::string filter;  // inspect's --filter (kernel names); race has its own (problem keys)
  bool json = false;
};
void setup_inspect_source(CLI::App& inspect, std::shared_ptr<InspectShared> shared);  // tools/inspect_source.cpp
void setup_inspect_race(CLI::App& inspect, std::shared_ptr<InspectShared> shared);    // tools/inspect_race.cpp
void setup_bench(CLI::App& app);
void setup_cache(CLI::App& app);
void setup_cache_transfer(CLI::App& cache_cmd);  // `cache merge`, `cache export` (tools/cache_transfer.cpp)
// --version: version, commit, generator hash, and the NVRTC / hipRTC this build loads.
std::string version_text();

}  // namespace i8g::cli

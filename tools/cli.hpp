// Shared pieces of the i8gemm subcommands.
#pragma once
#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "tools/shapes.hpp"
#include "generator/problem_enums.hpp"
#include "generator/types.hpp"

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

// The version this build's compiler for each arch family reports, made once per family ("" when
// it cannot be made, e.g. hipRTC absent: such entries then show as stale).
class CompilerVersions {
 public:
  const std::string& of(const std::string& arch);

 private:
  std::string nvidia_, amd_;
  bool nvidia_known_ = false, amd_known_ = false;
};

// One-line progress on stderr while a TTY watches; silent otherwise.
class Progress {
 public:
  explicit Progress(std::string label);
  void update(size_t done, size_t total);
  void finish();
 private:
  std::string label_;
  bool tty_;
  size_t last_ = size_t(-1);
};

void setup_tune(CLI::App& app);
void setup_inspect(CLI::App& app);
void setup_bench(CLI::App& app);
void setup_cache(CLI::App& app);

}  // namespace i8g::cli

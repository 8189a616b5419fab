// i8gemm: one CLI with subcommands. Errors print one line and exit non-zero; nothing a user
// stored is touched by a failing command.
#include <cstdio>

#include "generator/error.hpp"
#include "tools/cli.hpp"

int main(int argc, char** argv) {
  CLI::App app{"i8gemm: JIT-generated, autotuned INT8 W8A8 GEMM kernels with a SQLite cache"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "i8gemm 0.1.0");
  i8g::cli::setup_tune(app);
  i8g::cli::setup_inspect(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const i8g::Error& e) {
    std::fprintf(stderr, "i8gemm: error: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "i8gemm: error: %s\n", e.what());
    return 1;
  }
  return 0;
}

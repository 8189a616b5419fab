// i8gemm: one CLI with subcommands. Errors print one line and exit non-zero; nothing a user
// stored is touched by a failing command.
#include <execinfo.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>

#include "core/error.hpp"
#include "tools/cli.hpp"

namespace {

// A crash (ours or a library's) still says where it happened: the signal and the raw stack,
// written with async-signal-safe calls only, then the default action (core dump, status).
void on_fatal_signal(int sig) {
  static const char head[] = "i8gemm: fatal signal; stack (library+offset):\n";
  (void)!write(STDERR_FILENO, head, sizeof(head) - 1);
  void* frames[64];
  backtrace_symbols_fd(frames, backtrace(frames, 64), STDERR_FILENO);
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

}  // namespace

int main(int argc, char** argv) {
  {
    void* warm[1];
    backtrace(warm, 1);  // loads libgcc's unwinder now, not inside a signal handler
  }
  for (int sig : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT}) std::signal(sig, on_fatal_signal);
  CLI::App app{"i8gemm: JIT-generated, autotuned INT8 W8A8 GEMM kernels with a SQLite cache"};
  app.require_subcommand(1);
  app.failure_message([](const CLI::App*, const CLI::Error& e) {
    return std::string("i8gemm: error: ") + e.what() + "\n";
  });
  app.set_version_flag("--version", [] { return i8g::cli::version_text(); });
  i8g::cli::setup_tune(app, std::vector<std::string>(argv, argv + argc));
  i8g::cli::setup_inspect(app);
  i8g::cli::setup_bench(app);
  i8g::cli::setup_cache(app);
  if (argc > 1 && argv[1][0] != '-') {
    bool known = false;
    for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
      known |= sub->get_name() == argv[1];
    if (!known) {
      std::fprintf(stderr, "i8gemm: error: unknown command '%s' (commands: tune, inspect, bench, cache)\n", argv[1]);
      return 2;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::RuntimeError& e) {
    return e.get_exit_code();  // a subcommand already reported its failure
  } catch (const CLI::ParseError& e) {
    // --help and --version exit 0; usage errors print one line and exit 2.
    return e.get_exit_code() == 0 ? app.exit(e) : (app.exit(e), 2);
  } catch (const i8g::Error& e) {
    std::fprintf(stderr, "i8gemm: error: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "i8gemm: error: %s\n", e.what());
    return 1;
  }
  return 0;
}

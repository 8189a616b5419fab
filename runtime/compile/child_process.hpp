// Runs a piece of work in a helper executable, so that a crash inside a library (comgr aborts
// the process on some targets) becomes an Error in the caller, never its death. The helper is
// started with posix_spawn (exec right away), never fork() alone: a forked copy of a
// multithreaded process may only call async-signal-safe functions, and a lock held by another
// thread at fork time (the allocator's, ASan's) stays held in it forever.
#pragma once
#include <string>
#include <vector>

namespace i8g {

// A path the user chose for a helper (from core/options.hpp), and the variable it came from,
// which errors name.
struct HelperOverride {
  std::string path;      // empty: not chosen
  std::string variable;  // e.g. "I8GEMM_HIPRTC_WORKER"
};

// The helper executable `name`: the chosen path when set (which must then name an executable
// file), else the first executable found next to the module holding this code (the shared
// library or the program, via dladdr) or next to /proc/self/exe; never a path baked in at build
// time. Throws Error listing every place it looked.
std::string find_helper(const std::string& name, const HelperOverride& chosen);

// Spawns `exe` with `args` (argv[1..]), writes `request` to its stdin and closes it, and collects
// its stdout and stderr. The answer must start with `magic`, then 'O' and the payload (returned)
// or 'E', the failing call, a NUL and the message (rethrown as Error(call, message)). A helper
// that cannot start, dies (signal, non-zero exit), answers without `magic` or outlives
// `timeout_s` (killed) throws Error naming `what` and "the child process", with the tail of its
// stderr.
std::string run_helper(const std::string& what, const std::string& exe, const std::vector<std::string>& args,
                       const std::string& request, const std::string& magic, int timeout_s = 600);

}  // namespace i8g

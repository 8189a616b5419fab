// Runs a piece of work in a forked child process, so that a crash inside a library (comgr
// aborts the process on some targets) becomes an Error in the caller, never its death.
#pragma once
#include <functional>
#include <string>

namespace i8g {

// Forks; the child runs `work` and sends back its result over a pipe, then _exits. Returns
// that result. An Error thrown by `work` is rethrown here with its where/message; a child
// that dies (signal, exit without a result) or outlives `timeout_s` (killed) throws Error
// naming `what`, with the tail of the child's stderr.
std::string run_in_child(const std::string& what, const std::function<std::string()>& work,
                         int timeout_s = 600);

}  // namespace i8g

#include "core/log.hpp"

#include <atomic>
#include <cstdio>
#include <mutex>

#include "core/options.hpp"

namespace i8g {
namespace {

constexpr int kUnset = -1;
std::atomic<int> set_level{kUnset};
std::mutex sink_mu;
LogSink sink_fn = nullptr;
void* sink_user = nullptr;

}  // namespace

const char* to_string(LogLevel l) {
  switch (l) {
    case LogLevel::quiet: return "quiet";
    case LogLevel::error: return "error";
    case LogLevel::warning: return "warning";
    case LogLevel::info: return "info";
    case LogLevel::debug: return "debug";
  }
  return "?";
}

std::optional<LogLevel> parse_log_level(const std::string& text) {
  for (LogLevel l : {LogLevel::quiet, LogLevel::error, LogLevel::warning, LogLevel::info, LogLevel::debug})
    if (text == to_string(l) || text == std::to_string(int(l))) return l;
  return std::nullopt;
}

LogLevel log_level() {
  const int s = set_level.load(std::memory_order_relaxed);
  if (s != kUnset) return LogLevel(s);
  static const LogLevel from_env = parse_log_level(options().log_level).value_or(LogLevel::warning);
  return from_env;
}

void set_log_level(LogLevel l) { set_level.store(int(l), std::memory_order_relaxed); }

void set_log_sink(LogSink sink, void* user) {
  std::lock_guard lock(sink_mu);
  sink_fn = sink;
  sink_user = user;
}

void log(LogLevel level, const std::string& message) {
  if (level == LogLevel::quiet || int(level) > int(log_level())) return;
  std::lock_guard lock(sink_mu);  // one message at a time, to either place
  if (sink_fn) {
    sink_fn(int(level), message.c_str(), sink_user);
    return;
  }
  std::fprintf(stderr, "i8gemm: %s: %s\n", to_string(level), message.c_str());
}

}  // namespace i8g

// The library's messages: one function every layer calls, a level that filters them and a sink
// that serving code may replace (its own logger instead of stderr). Level: set_log_level(), else
// I8GEMM_LOG_LEVEL (quiet, error, warning, info, debug or 0-4), else warning. Thread-safe.
#pragma once
#include <optional>
#include <string>

namespace i8g {

enum class LogLevel { quiet = 0, error = 1, warning = 2, info = 3, debug = 4 };

const char* to_string(LogLevel l);
// "warning" or "2" -> warning; anything else -> nothing.
std::optional<LogLevel> parse_log_level(const std::string& text);

LogLevel log_level();
void set_log_level(LogLevel l);

// Receives each message at or below the level, without the "i8gemm: <level>: " prefix; null
// restores stderr. The sink must not call back into i8gemm.
using LogSink = void (*)(int level, const char* message, void* user);
void set_log_sink(LogSink sink, void* user);

// Writes "i8gemm: <level>: <message>" to stderr, or hands `message` to the sink, when `level`
// is at or below the current level (quiet drops everything).
void log(LogLevel level, const std::string& message);
inline void log_warning(const std::string& message) { log(LogLevel::warning, message); }
inline void log_info(const std::string& message) { log(LogLevel::info, message); }

}  // namespace i8g

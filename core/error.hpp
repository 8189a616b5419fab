// One error type for the whole project: what kind of failure it is (the C ABI maps its status
// from the kind, never from text), the failing call, and a readable message.
#pragma once
#include <stdexcept>
#include <string>

namespace i8g {

enum class ErrorKind {
  internal,          // a bug or an unexpected failure (the default)
  invalid_argument,  // the caller asked for something malformed
  no_device,         // no CUDA driver or device
  unsupported,       // well-formed, but not something this build or device can do
  not_prepared,      // a run before its prepare
  compile,           // NVRTC / hipRTC failed
  cache,             // the SQLite cache failed or refused the file
  corrupt_entry,     // a cache entry failed its content check (hash or device-code test)
  cuda,              // a CUDA driver or library call failed
  out_of_memory,     // device memory is exhausted (not sticky: retry once memory is freed)
  not_in_cache,      // strict mode: prepare needed a kernel the cache lacks
};

const char* to_string(ErrorKind k);

class Error : public std::runtime_error {
 public:
  Error(std::string where, std::string what) : Error(ErrorKind::internal, std::move(where), std::move(what)) {}
  Error(ErrorKind kind, std::string where, std::string what)
      : std::runtime_error(where.empty() ? what : where + ": " + what),
        kind_(kind), where_(std::move(where)), message_(std::move(what)) {}
  ErrorKind kind() const { return kind_; }
  const std::string& where() const { return where_; }      // the failing call
  const std::string& message() const { return message_; }  // what went wrong, in words

 private:
  ErrorKind kind_;
  std::string where_;
  std::string message_;
};

inline const char* to_string(ErrorKind k) {
  switch (k) {
    case ErrorKind::internal: return "internal";
    case ErrorKind::invalid_argument: return "invalid argument";
    case ErrorKind::no_device: return "no device";
    case ErrorKind::unsupported: return "unsupported";
    case ErrorKind::not_prepared: return "not prepared";
    case ErrorKind::compile: return "compile";
    case ErrorKind::cache: return "cache";
    case ErrorKind::corrupt_entry: return "corrupt entry";
    case ErrorKind::cuda: return "cuda";
    case ErrorKind::out_of_memory: return "out of memory";
    case ErrorKind::not_in_cache: return "not in the cache";
  }
  return "?";
}

}  // namespace i8g

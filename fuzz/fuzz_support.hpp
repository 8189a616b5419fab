// Shared by the libFuzzer harnesses: the input as text, and the rule every harness enforces:
// a parser may reject input only by throwing i8g::Error; anything else (a crash, a sanitizer
// report, another exception type escaping) is a finding.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.hpp"

namespace i8g::fuzz {

inline std::string text(const uint8_t* data, size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

// Runs f; an i8g::Error is a clean rejection, any other exception escapes (libFuzzer reports
// it as a crash: "deadly signal" after std::terminate).
template <class F>
void rejects_only_with_error(F&& f) {
  try {
    f();
  } catch (const i8g::Error&) {
  }
}

}  // namespace i8g::fuzz

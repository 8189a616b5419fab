#include "runtime/serve/candidate.hpp"

#include <fmt/format.h>

#include <charconv>

#include "core/error.hpp"

namespace i8g {
namespace {
constexpr std::string_view kLtPrefix = "cublaslt:algo=";
}

std::string to_string(const Candidate& c) {
  if (const LtAlgo* a = lt_algo_of(c)) return fmt::format("{}{}", kLtPrefix, a->index);
  return std::get<KernelSpec>(c).name();
}

Candidate parse_candidate(const std::string& text) {
  if (text.rfind(kLtPrefix, 0) == 0) {
    const char* first = text.data() + kLtPrefix.size();
    const char* last = text.data() + text.size();
    LtAlgo a;
    const auto [end, ec] = std::from_chars(first, last, a.index);
    if (ec != std::errc() || end != last || first == last || a.index < 0)
      throw Error(ErrorKind::invalid_argument, "parse_candidate",
                  fmt::format("'{}' names no cuBLASLt algorithm (want {}<index>)", text, kLtPrefix));
    return a;
  }
  try {
    return KernelSpec::parse_name(text);
  } catch (const Error& e) {
    throw Error(ErrorKind::invalid_argument, "parse_candidate",
                fmt::format("'{}' is neither a kernel name nor {}<index>: {}", text, kLtPrefix, e.message()));
  }
}

std::ostream& operator<<(std::ostream& os, const Candidate& c) { return os << to_string(c); }

}  // namespace i8g

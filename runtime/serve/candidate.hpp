// What the tuner races and a prepared bucket runs: one generated kernel, or one of cuBLASLt's
// heuristic algorithms followed by the dequant kernel (the baseline). Typed everywhere; text
// only where it is stored or shown, and that text is what caches have always held (the kernel
// name, or "cublaslt:algo=<i>"), so an existing cache means the same.
#pragma once
#include <ostream>
#include <string>
#include <variant>

#include "generator/types.hpp"

namespace i8g {

// Index into the algorithms cuBLASLt's heuristic returns for one problem and M.
struct LtAlgo {
  int index = 0;
  bool operator==(const LtAlgo& o) const { return index == o.index; }
};

using Candidate = std::variant<KernelSpec, LtAlgo>;

std::string to_string(const Candidate& c);
// The text of to_string back; throws Error (invalid_argument) naming the text when it is
// neither form.
Candidate parse_candidate(const std::string& text);
std::ostream& operator<<(std::ostream& os, const Candidate& c);  // its text

inline const KernelSpec* kernel_of(const Candidate& c) { return std::get_if<KernelSpec>(&c); }
inline const LtAlgo* lt_algo_of(const Candidate& c) { return std::get_if<LtAlgo>(&c); }

}  // namespace i8g

// What the prepare/JIT tests build their batches from.
#pragma once
#include "generator/generator.hpp"
#include "runtime/serve/jit.hpp"

namespace i8g::test {

// A JIT request for the simt_dp4a default of N x 512 at M = 16: a quick, distinct kernel per n.
inline JitRequest dp4a_request(const Target& t, int64_t n) {
  GemmProblem p;
  p.n = n;
  p.k = 512;
  const KernelSpec spec{p, heuristic_default(p, t, 16, Family::simt_dp4a), t.arch};
  return {emit(spec), spec};
}

}  // namespace i8g::test

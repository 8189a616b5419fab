// A stand-in for cuTensorMapEncodeTiled in OperandMapCache's tests (no GPU): a "map" whose
// bytes say what it was made from, and a refused operand (base 0x10).
#pragma once
#include <cstring>

#include "core/error.hpp"
#include "generator/generator.hpp"
#include "runtime/gpu/tensor_map.hpp"

namespace i8g::test {

struct Made {
  const void* base;
  int64_t rows, k;
  int box_rows;
};

// A "map" whose bytes say what it was made from; throws for a base of 0x10 (a refused operand).
inline CUtensorMap fake_encode(const void* base, int64_t rows, int64_t k, int box_rows) {
  if (reinterpret_cast<uintptr_t>(base) == 0x10) throw Error(ErrorKind::invalid_argument, "tensor map", "refused");
  CUtensorMap m{};
  const Made made{base, rows, k, box_rows};
  static_assert(sizeof(made) <= sizeof(m));
  std::memcpy(&m, &made, sizeof(made));
  return m;
}

inline Made made_of(const CUtensorMap& m) {
  Made made{};
  std::memcpy(&made, &m, sizeof(made));
  return made;
}

inline KernelSpec tma_spec() {  // a wgmma_tma kernel for 2560 x 4096 with a register store (no output map)
  const GemmProblem p{2560, 4096};
  Target t = Target::from_arch("sm_90a");
  return KernelSpec{p, heuristic_default(p, t, 1024), t.arch};
}

inline I8gArgs args(uintptr_t x, uintptr_t w, int64_t m) {
  I8gArgs a{};
  a.x = reinterpret_cast<const int8_t*>(x);
  a.w = reinterpret_cast<const int8_t*>(w);
  a.m = m;
  a.n = 2560;
  a.k = 4096;
  return a;
}

}  // namespace i8g::test

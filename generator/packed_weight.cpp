#include "generator/packed_weight.hpp"

#include <fmt/format.h>

#include <cstring>

#include "core/error.hpp"
#include "templates/wgmma_frag.h"

namespace i8g {

int64_t PackedWeightLayout::stage_bytes() const { return wg::packed_stage_bytes(n, kp); }

int64_t PackedWeightLayout::offset(int64_t row, int64_t col) const {
  const int64_t kt = col / 128, s = kt / kp, j = kt % kp;
  const int64_t r = row % 8, c = (col % 128) / 16, b = col % 16;
  // The 8-row group's place is the kernel's (wgmma_frag.h); the swizzle inside an atom is stated
  // here on its own, so that the tests' canonical_addr checks it independently.
  return wg::packed_tile_offset(s, row - r, n, kp) + j * 1024 + r * 128 + 16 * (c ^ r) + b;
}

std::string PackedWeightLayout::name() const { return fmt::format("kp{}", kp); }

std::string PackedWeightLayout::invalid_reason() const {
  if (n <= 0 || k <= 0) return fmt::format("a packed weight needs N, K > 0 (N={}, K={})", n, k);
  if (k % 16) return fmt::format("K={} is not a multiple of 16", k);
  if (kp != 1 && kp != 2) return fmt::format("kp={}: a packed stage holds 1 or 2 K tiles", kp);
  return {};
}

PackedWeightLayout packed_weight_layout(const KernelSpec& spec) {
  const KernelConfig& c = spec.config;
  if (c.packed_weight != 1)
    throw Error(ErrorKind::invalid_argument, "packed weight", fmt::format("{} reads the plain weight", spec.name()));
  return {spec.problem.n, spec.problem.k, c.bk / 128};
}

namespace {
void check(const PackedWeightLayout& l) {
  if (std::string why = l.invalid_reason(); !why.empty()) throw Error(ErrorKind::invalid_argument, "packed weight", why);
}
}  // namespace

std::vector<int8_t> pack_weight(const PackedWeightLayout& l, const int8_t* w) {
  check(l);
  std::vector<int8_t> out(size_t(l.bytes()), 0);
  for (int64_t row = 0; row < l.n; ++row)
    for (int64_t col = 0; col < l.k; col += 16) {  // 16-byte pieces: k is a multiple of 16
      std::memcpy(out.data() + l.offset(row, col), w + row * l.k + col, 16);
    }
  return out;
}

std::vector<int8_t> unpack_weight(const PackedWeightLayout& l, const int8_t* packed) {
  check(l);
  std::vector<int8_t> w(size_t(l.n * l.k));
  for (int64_t row = 0; row < l.n; ++row)
    for (int64_t col = 0; col < l.k; col += 16) {
      std::memcpy(w.data() + row * l.k + col, packed + l.offset(row, col), 16);
    }
  return w;
}

}  // namespace i8g

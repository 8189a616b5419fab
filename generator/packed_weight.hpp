// The pre-packed weight that wgmma_tma kernels with packed_weight = 1 read (templates/
// wgmma_tma.cuh, PW = 1): the [N,K] int8 weight rearranged once, outside the run path, so that
// the w tile of any ring stage is one contiguous block a single bulk copy (cp.async.bulk) brings
// whole, already in the 128-byte-swizzled order the wgmma descriptors read. On the H200 a
// persistent stream of such blocks ran at the flat read's speed where the same bytes as 128-byte
// TMA boxes ran 8-10% slower (bench/tma_stream.cu, session 27).
//
// The layout of kp 128-byte K tiles a stage: stage s (K tiles [s * kp, s * kp + kp)) is one
// block of rows8 * kp * 128 bytes (rows8: N rounded up to 8) at s * that; in it the 8-row
// groups follow each other, kp * 1024 bytes apart, each holding its kp K tiles' 8 x 128-byte
// atoms in K order; in an atom row r % 8 sits at (r % 8) * 128 and its 16 bytes of k
// [16 c, 16 c + 16) at 16 * (c ^ (r % 8)) (the 128B swizzle). So the rows [r0, r0 + R) of a stage
// (r0 a multiple of 8) are R * kp * 128 contiguous bytes — any tile width bn (a multiple of 8)
// reads its tile with one copy — and the wgmma descriptor of K tile j starts at j * 1024 with a
// stride of kp * 1024 between 8-row groups. One packing serves every kernel of the same kp,
// whatever its tile. Bytes past N or K are zero. Pure: no GPU.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "generator/types.hpp"

namespace i8g {

struct PackedWeightLayout {
  int64_t n = 0, k = 0;
  int kp = 0;  // 128-byte K tiles a stage

  int64_t stages() const { return ((k + 127) / 128 + kp - 1) / kp; }
  // One stage's block: templates/wgmma_frag.h's packed_stage_bytes, what the kernel's copies use.
  int64_t stage_bytes() const;
  int64_t bytes() const { return stages() * stage_bytes(); }
  // Where w[row][col] (row < n, col < k) lies in the packed buffer.
  int64_t offset(int64_t row, int64_t col) const;
  // "kp2": names the layout in messages and reports.
  std::string name() const;
  // Empty when the layout is well formed (n, k > 0, k a multiple of 16, kp 1 or 2), else why not.
  std::string invalid_reason() const;
};

// The layout a packed_weight kernel of `spec` reads (its bk / 128 K tiles a stage); throws Error
// when the spec does not read a packed weight.
PackedWeightLayout packed_weight_layout(const KernelSpec& spec);

// The [N,K] weight `w` (n * k bytes, row-major) in layout `l`: l.bytes() bytes. Throws Error
// when l is malformed.
std::vector<int8_t> pack_weight(const PackedWeightLayout& l, const int8_t* w);
// The [N,K] weight back from its packing (a check that the layout holds every byte once).
std::vector<int8_t> unpack_weight(const PackedWeightLayout& l, const int8_t* packed);

}  // namespace i8g

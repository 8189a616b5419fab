// The pre-packed weight that wgmma_tma kernels with packed_weight = 1 read (templates/
// wgmma_tma.cuh, PW = 1): the [N,K] int8 weight rearranged once, outside the run path, so that
// each ring stage of w is one contiguous block a single bulk copy (cp.async.bulk) brings whole,
// already in the 128-byte-swizzled order the wgmma descriptors read. On the H200 a persistent
// stream of such blocks ran at the flat read's speed where the same bytes as 128-byte TMA boxes
// ran 8-10% slower (bench/tma_stream.cu, session 27).
//
// The layout of a tile width bn and kp K tiles (of 128 bytes) a stage: tile column tn (rows
// [tn * bn, tn * bn + bn)) and stage s (K tiles [s * kp, s * kp + kp)) are the block at
//   (tn * stages + s) * kp * bn * 128,   stages = ceil(ceil(K / 128) / kp),
// holding K tile j of the stage at j * bn * 128, its row r at r * 128, and the 16 bytes of k
// [16 c, 16 c + 16) of that row at 16 * (c ^ (r % 8)) (the 128B swizzle of a 1024-byte aligned
// box). Bytes past N or K are zero. Pure: no GPU.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "generator/types.hpp"

namespace i8g {

struct PackedWeightLayout {
  int64_t n = 0, k = 0;
  int bn = 0;  // the tile width
  int kp = 0;  // 128-byte K tiles a stage

  int64_t tiles_n() const { return (n + bn - 1) / bn; }
  int64_t stages() const { return ((k + 127) / 128 + kp - 1) / kp; }
  int64_t stage_bytes() const { return int64_t(kp) * bn * 128; }
  int64_t bytes() const { return tiles_n() * stages() * stage_bytes(); }
  // Where w[row][col] (row < n, col < k) lies in the packed buffer.
  int64_t offset(int64_t row, int64_t col) const;
  // "bn64_kp2": names the layout in messages and reports.
  std::string name() const;
  // Empty when the layout is well formed (n, k > 0, k a multiple of 16, bn a multiple of 8 up
  // to 256, kp 1 or 2), else why not.
  std::string invalid_reason() const;
};

// The layout a packed_weight kernel of `spec` reads (its bn and bk / 128); throws Error when
// the spec does not read a packed weight.
PackedWeightLayout packed_weight_layout(const KernelSpec& spec);

// The [N,K] weight `w` (n * k bytes, row-major) in layout `l`: l.bytes() bytes. Throws Error
// when l is malformed.
std::vector<int8_t> pack_weight(const PackedWeightLayout& l, const int8_t* w);
// The [N,K] weight back from its packing (a check that the layout holds every byte once).
std::vector<int8_t> unpack_weight(const PackedWeightLayout& l, const int8_t* packed);

}  // namespace i8g

#include "runtime/gpu/tensor_map.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/error.hpp"
#include "generator/generator.hpp"
#include "runtime/gpu/cuda_driver.hpp"

namespace i8g {

CUtensorMap operand_tensor_map(const void* base, int64_t rows, int64_t k, int box_rows) {
  const char* rule = nullptr;
  if (reinterpret_cast<uintptr_t>(base) % 16) rule = "the operand's address is not 16-byte aligned";
  else if (k <= 0 || k % 16) rule = "K is not a positive multiple of 16 (the row stride must be)";
  else if (rows <= 0 || rows > (int64_t(1) << 32) || k > (int64_t(1) << 32)) rule = "a dimension is past 2^32";
  else if (box_rows <= 0 || box_rows > 256) rule = "a box has at most 256 rows";
  if (rule)
    throw Error(ErrorKind::invalid_argument, "tensor map",
                fmt::format("{} (rows={}, k={}, box {}x128 bytes)", rule, rows, k, box_rows));
  CUtensorMap map{};
  const cuuint64_t dims[2] = {cuuint64_t(k), cuuint64_t(rows)};
  const cuuint64_t strides[1] = {cuuint64_t(k)};  // bytes between rows; dim 0's is implied
  const cuuint32_t box[2] = {128, cuuint32_t(box_rows)};
  const cuuint32_t elem_strides[2] = {1, 1};
  check_cu(driver().cuTensorMapEncodeTiled(&map, CU_TENSOR_MAP_DATA_TYPE_UINT8, 2, const_cast<void*>(base), dims,
                                           strides, box, elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                           CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                           CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
           "cuTensorMapEncodeTiled");
  return map;
}

CUtensorMap output_tensor_map(void* base, int64_t rows, int64_t cols, int box_rows) {
  const char* rule = nullptr;
  if (reinterpret_cast<uintptr_t>(base) % 16) rule = "the output's address is not 16-byte aligned";
  else if (cols <= 0 || cols % 8) rule = "N is not a positive multiple of 8 (the row stride must be of 16 bytes)";
  else if (rows <= 0 || rows > (int64_t(1) << 32) || cols > (int64_t(1) << 32)) rule = "a dimension is past 2^32";
  else if (box_rows <= 0 || box_rows > 256) rule = "a box has at most 256 rows";
  if (rule)
    throw Error(ErrorKind::invalid_argument, "tensor map",
                fmt::format("{} (rows={}, cols={}, box 64x{} 2-byte outputs)", rule, rows, cols, box_rows));
  CUtensorMap map{};
  const cuuint64_t dims[2] = {cuuint64_t(cols), cuuint64_t(rows)};
  const cuuint64_t strides[1] = {cuuint64_t(cols) * 2};
  const cuuint32_t box[2] = {64, cuuint32_t(box_rows)};  // 128 bytes: one swizzle row
  const cuuint32_t elem_strides[2] = {1, 1};
  check_cu(driver().cuTensorMapEncodeTiled(&map, CU_TENSOR_MAP_DATA_TYPE_UINT16, 2, base, dims, strides, box,
                                           elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                           CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
           "cuTensorMapEncodeTiled");
  return map;
}

namespace {

// A staged-store kernel's output map (box.out > 0) where the output is 16-byte aligned; zero
// bytes otherwise (the kernel then stores from registers). Encoded for every launch.
CUtensorMap staged_output_map(const TmaBoxRows& box, const I8gArgs& a, int64_t n) {
  if (box.out > 0 && reinterpret_cast<uintptr_t>(a.out) % 16 == 0) return output_tensor_map(a.out, a.m, n, box.out);
  return CUtensorMap{};
}

}  // namespace

OperandMaps operand_tensor_maps(const KernelSpec& spec, const I8gArgs& a) {
  const TmaBoxRows box = tma_box_rows(spec.config, a.m);
  OperandMaps m{};
  m.x = operand_tensor_map(a.x, a.m, a.k, box.x);
  if (!spec.config.packed_weight) m.w = operand_tensor_map(a.w, a.n, a.k, box.w);  // a packed one: bulk copies
  m.out = staged_output_map(box, a, a.n);
  return m;
}

OperandMapCache::OperandMapCache(const KernelSpec& spec, size_t x_capacity, size_t w_capacity, Encode encode)
    : spec_(spec), x_capacity_(std::max<size_t>(1, x_capacity)), w_capacity_(std::max<size_t>(1, w_capacity)),
      encode_(encode) {}

CUtensorMap OperandMapCache::lookup(std::vector<Entry>& ring, size_t capacity, size_t& next, const void* base,
                                    int64_t rows, int box_rows) const {
  for (const Entry& e : ring)
    if (e.base == base && e.rows == rows) return e.map;
  const Entry e{base, rows, encode_(base, rows, spec_.problem.k, box_rows)};  // throws: nothing stored
  ++encodes_;
  if (ring.size() < capacity) {
    ring.push_back(e);
  } else {
    ring[next] = e;
    next = (next + 1) % capacity;
  }
  return e.map;
}

OperandMaps OperandMapCache::maps(const I8gArgs& a) const {
  const TmaBoxRows box = tma_box_rows(spec_.config, a.m);
  OperandMaps m{};
  {
    const std::lock_guard<std::mutex> lock(mu_);
    m.x = lookup(x_, x_capacity_, x_next_, a.x, a.m, box.x);  // the box follows M (x_box_rows)
    if (!spec_.config.packed_weight) m.w = lookup(w_, w_capacity_, w_next_, a.w, spec_.problem.n, box.w);
  }
  m.out = staged_output_map(box, a, spec_.problem.n);
  return m;
}

size_t OperandMapCache::encodes() const {
  const std::lock_guard<std::mutex> lock(mu_);
  return encodes_;
}

}  // namespace i8g

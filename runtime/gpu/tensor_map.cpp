#include "runtime/gpu/tensor_map.hpp"

#include <fmt/format.h>

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

OperandMaps operand_tensor_maps(const KernelSpec& spec, const I8gArgs& a) {
  const TmaBoxRows box = tma_box_rows(spec.config, a.m);
  OperandMaps m;
  m.x = operand_tensor_map(a.x, a.m, a.k, box.x);
  m.w = operand_tensor_map(a.w, a.n, a.k, box.w);
  return m;
}

}  // namespace i8g

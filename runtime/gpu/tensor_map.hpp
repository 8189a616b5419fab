// TMA tensor maps for the families that load their operands with TMA (FamilyInfo::
// tma_operands): an int8 row-major [rows, k] operand as a 2-D UINT8 map {k, rows}, boxes of
// {128 bytes of k, box_rows rows}, 128-byte swizzle (the layout wgmma's descriptors read), zero
// fill past the edges. Encoding is a host-only driver call (no device work, no allocation), so
// it is safe while a stream captures.
#pragma once
#include <cuda.h>

#include <cstdint>

#include "generator/types.hpp"
#include "templates/i8g_args.h"

namespace i8g {

// Throws Error naming the broken rule (base not 16-byte aligned, k not a multiple of 16, a box
// over 256 rows, ...) before the driver would answer CUDA_ERROR_INVALID_VALUE.
CUtensorMap operand_tensor_map(const void* base, int64_t rows, int64_t k, int box_rows);

// The 2-byte [rows, cols] output as a 2-D UINT16 map {cols, rows}, boxes of {64 columns,
// box_rows rows}, 128-byte swizzle: what templates/tma_store.cuh stores from shared memory.
// Throws Error as operand_tensor_map does (the caller checks the base's alignment first).
CUtensorMap output_tensor_map(void* base, int64_t rows, int64_t cols, int box_rows);

// The maps a launch of `spec` takes: x ({K, M}, a.m rows) and w ({K, N}; zero bytes for a
// packed_weight kernel, which bulk-copies its stages), with the box rows
// the kernel loads (tma_box_rows: x bm or M, w bn / cluster_m); and, for a staged-store kernel
// (config.epilogue_store) whose output is 16-byte aligned, the output's ({N, M}, boxes of the
// consumers' rows); zero bytes otherwise (the kernel then stores from registers).
struct OperandMaps {
  CUtensorMap x, w, out;
};
OperandMaps operand_tensor_maps(const KernelSpec& spec, const I8gArgs& a);

}  // namespace i8g

// TMA tensor maps for the families that load their operands with TMA (FamilyInfo::
// tma_operands): an int8 row-major [rows, k] operand as a 2-D UINT8 map {k, rows}, boxes of
// {128 bytes of k, box_rows rows}, 128-byte swizzle (the layout wgmma's descriptors read), zero
// fill past the edges. Encoding is a host-only driver call (no device work, no allocation), so
// it is safe while a stream captures.
#pragma once
#include <cuda.h>

#include <cstdint>
#include <mutex>
#include <vector>

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

// The same maps for one kernel's launches, each operand's encoded once per address: x's by
// (x, M), w's by w (its rows are the kernel's N). A launch whose operands were seen before
// (serving's weights, a caching allocator's recycled activation buffers) encodes nothing. A map
// is a function of the address, the rows and the kernel's fixed K and box, so a hit is exactly
// the map an encode would make, whatever was freed or reallocated at that address since. At
// most x_capacity and w_capacity maps (every layer of one shape shares a kernel, hence w's
// larger count), the oldest replaced first. The staged store's output map (experimental) is
// encoded every launch. Thread-safe: launches of one kernel on several threads share it.
class OperandMapCache {
 public:
  // `encode`: operand_tensor_map, or a stand-in in tests.
  using Encode = CUtensorMap (*)(const void* base, int64_t rows, int64_t k, int box_rows);
  explicit OperandMapCache(const KernelSpec& spec, size_t x_capacity = 16, size_t w_capacity = 64,
                           Encode encode = operand_tensor_map);
  OperandMapCache(const OperandMapCache&) = delete;
  OperandMapCache& operator=(const OperandMapCache&) = delete;
  // What operand_tensor_maps(spec, a) returns; throws as it does (nothing is cached then).
  OperandMaps maps(const I8gArgs& a) const;
  size_t encodes() const;  // maps encoded so far (x and w; tests)

 private:
  struct Entry {
    const void* base;
    int64_t rows;
    CUtensorMap map;
  };
  // The map of (base, rows) from `ring` (encoding and storing it on a miss); mu_ held.
  CUtensorMap lookup(std::vector<Entry>& ring, size_t capacity, size_t& next, const void* base, int64_t rows,
                     int box_rows) const;

  KernelSpec spec_;
  size_t x_capacity_, w_capacity_;
  Encode encode_;
  mutable std::mutex mu_;
  mutable std::vector<Entry> x_, w_;
  mutable size_t x_next_ = 0, w_next_ = 0, encodes_ = 0;
};

}  // namespace i8g

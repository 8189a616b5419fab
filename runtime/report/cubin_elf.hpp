// A bounds-checked reader of the facts a CUBIN (ELF64, EM_CUDA) holds about its kernels.
// Malformed input throws Error; no input can make it read out of bounds.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace i8g {

struct CubinKernel {
  std::string name;               // mangled symbol
  uint32_t symbol_index = 0;      // index in .symtab (what nvdisasm -fun takes)
  uint16_t section_index = 0;     // its .text section
  uint64_t code_bytes = 0;        // st_size
  int registers = -1;             // EIATTR_REGCOUNT
  int frame_size = -1;            // EIATTR_FRAME_SIZE: stack frame bytes
  int min_stack_size = -1;        // EIATTR_MIN_STACK_SIZE
  int max_stack_size = -1;        // EIATTR_MAX_STACK_SIZE
  int shared_section_bytes = 0;   // size of .nv.shared.<name> as stored (0 when absent)
  int static_smem_bytes = 0;      // the kernel's own static smem (reserved block subtracted)
};

struct CubinInfo {
  int sm = 0;                     // from e_flags, e.g. 90 (the "a" suffix is not decoded)
  bool reserved_smem = false;     // has .nv.shared.reserved.0 (sm_90+ layout)
  std::vector<CubinKernel> kernels;
  const CubinKernel* find(const std::string& name) const&;  // nullptr when absent
  const CubinKernel* find(const std::string& name) const&& = delete;  // would dangle
};

// The 1 KiB that sm_90+ CUBINs fold into each .nv.shared.<kernel> section.
constexpr int kCubinReservedSmemBytes = 1024;

CubinInfo read_cubin(const uint8_t* data, size_t size);
inline CubinInfo read_cubin(const std::vector<uint8_t>& image) {
  return read_cubin(image.data(), image.size());
}

}  // namespace i8g

// A bounds-checked reader of AMDGPU code objects (ELF64, EM_AMDGPU) as hipRTC returns them:
// the clang offload bundle around them, the symbols, the NT_AMDGPU_METADATA msgpack note and
// each kernel's 64-byte descriptor. Malformed input throws Error; no input reads out of bounds.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace i8g {

// One kernel's entry in the metadata note (amdhsa.kernels); -1 where the note has no field.
struct AmdKernelMeta {
  std::string name;    // .name: the mangled kernel symbol
  std::string symbol;  // .symbol: its descriptor, name + ".kd"
  int vgpr_count = -1;  // gfx90a: VGPRs and AGPRs together (the unified file), as allocated
  int agpr_count = -1;
  int sgpr_count = -1;  // VCC, FLAT_SCRATCH and XNACK included
  int group_segment_fixed_size = -1;    // static LDS bytes
  int private_segment_fixed_size = -1;  // scratch bytes per lane
  int vgpr_spill_count = -1, sgpr_spill_count = -1;
  int wavefront_size = -1, max_flat_workgroup_size = -1, kernarg_segment_size = -1;
  bool uses_dynamic_stack = false;
};

// The kernel descriptor the hardware reads: a second witness of LDS, scratch and registers.
struct AmdKernelDescriptor {
  bool found = false;
  uint32_t group_segment_fixed_size = 0, private_segment_fixed_size = 0, kernarg_size = 0;
  uint32_t rsrc1 = 0, rsrc2 = 0, rsrc3 = 0;
  int granulated_vgprs() const { return int(rsrc1 & 0x3f); }        // (VGPRs / granule) - 1
  int granulated_sgprs() const { return int((rsrc1 >> 6) & 0xf); }  // (SGPRs / 16) - 1 (GFX9)
};

struct AmdFunction {
  std::string name;
  uint64_t address = 0, size = 0;
};

struct AmdCodeObject {
  std::string target;  // amdhsa.target, e.g. "amdgcn-amd-amdhsa--gfx90a"
  std::vector<int> metadata_version;
  std::vector<AmdKernelMeta> kernels;
  std::vector<AmdFunction> functions;    // STT_FUNC symbols (code addresses and sizes)
  std::vector<AmdFunction> descriptors;  // "<kernel>.kd" symbols; address = file offset
  const AmdKernelMeta* find_kernel(const std::string& name) const&;
  const AmdKernelMeta* find_kernel(const std::string& name) const&& = delete;  // would dangle
  const AmdFunction* find_function(const std::string& name) const&;
  const AmdFunction* find_function(const std::string& name) const&& = delete;
  // The descriptor of `kernel` (found = false when its .kd symbol is absent).
  AmdKernelDescriptor descriptor(const std::string& kernel) const;
  std::vector<uint8_t> elf;  // the bytes read
};

constexpr char kOffloadBundleMagic[] = "__CLANG_OFFLOAD_BUNDLE__";

// The ELF for `arch` (e.g. "gfx90a"): the input itself when it is an ELF, else the entry of a
// clang offload bundle whose id names an amdgcn target with that processor. Throws Error.
std::vector<uint8_t> extract_code_object(const std::vector<uint8_t>& bytes, const std::string& arch);

AmdCodeObject read_amd_code_object(const std::vector<uint8_t>& elf);

}  // namespace i8g

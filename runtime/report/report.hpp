// ResourceReport: what a compiled kernel costs (registers, smem, stack, spills), whether the
// ptxas log and the CUBIN agree, the occupancy it allows, and its SASS with an instruction mix.
// AMD code objects fill the same fields where they mean the same thing (registers = VGPRs,
// static smem = LDS, stack frame = scratch, sass = the AMDGPU ISA) and the rest in `amd`.
#pragma once
#include <map>
#include <string>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/occupancy.hpp"
#include "runtime/compile/compiler.hpp"

namespace i8g {

// What an AMDGPU code object says about one kernel: the metadata note (first witness) and the
// kernel descriptor the hardware reads (second witness); -1 where absent.
// Reads j[key] into `out`. Cache rows are untrusted, and nlohmann converts a JSON number to an
// int with a plain cast, undefined behaviour when it does not fit (1e300): an int field must be
// a JSON integer within int's range, else this throws Error. Other types go through get_to.
void read_json_int(const nlohmann::json& v, const char* key, int& out);
template <class T>
void read_json_field(const nlohmann::json& j, const char* key, T& out) {
  const nlohmann::json& v = j.at(key);
  if constexpr (std::is_same_v<T, int>) {
    read_json_int(v, key, out);
  } else if constexpr (std::is_same_v<T, std::map<std::string, int>>) {
    if (!v.is_object()) v.get_to(out);  // throws nlohmann's type_error
    out.clear();
    for (const auto& [k, x] : v.items()) read_json_int(x, key, out[k]);
  } else {
    v.get_to(out);
  }
}

struct AmdResources {
  bool present = false;
  std::string target;  // amdhsa.target, e.g. "amdgcn-amd-amdhsa--gfx90a"
  int vgprs = -1;      // .vgpr_count (gfx90a: VGPRs + AGPRs of the unified file)
  int agprs = -1, sgprs = -1, lds_bytes = -1, scratch_bytes = -1;
  int vgpr_spills = -1, sgpr_spills = -1;  // registers spilled (.vgpr/.sgpr_spill_count)
  bool dynamic_stack = false;
  int wavefront_size = -1;
  int kd_lds_bytes = -1, kd_scratch_bytes = -1;  // from the kernel descriptor
  int kd_vgpr_blocks = -1, kd_sgpr_blocks = -1;  // COMPUTE_PGM_RSRC1 granulated counts + 1
  double waves_per_simd = 0;                     // resident waves per SIMD (occupancy)
  int mfma = 0;                                  // v_mfma instructions in the kernel's ISA
  nlohmann::json to_json() const;
  static AmdResources from_json(const nlohmann::json& j);
};

struct ResourceReport {
  std::string symbol;  // lowered name
  // From the ptxas log (-1: absent). static_smem_bytes is 0 when ptxas printed a "Used" line
  // without smem (it omits zero); cmem0_bytes stays -1 on sm_90+, whose logs print no cmem[0].
  int registers = -1, stack_frame_bytes = -1, spill_store_bytes = -1, spill_load_bytes = -1,
      static_smem_bytes = -1, barriers = -1, cmem0_bytes = -1;
  // From the CUBIN (static smem with the sm_90+ reserved 1 KiB already subtracted).
  int elf_registers = -1, elf_stack_frame_bytes = -1, elf_static_smem_bytes = -1;
  bool consistent = false;  // log and ELF agree on registers, stack frame and static smem
  int threads_per_block = 0, dynamic_smem_bytes = 0;
  int blocks_per_sm = 0;
  double occupancy = 0;            // active warps / max warps per SM
  std::string occupancy_limiter;   // "registers", "shared memory", "threads", "blocks", "barriers"
  bool sass_available = false;
  std::string sass;
  std::string sass_note;           // why SASS is missing, if it is
  std::map<std::string, int> instruction_mix;  // base mnemonic -> count, plus "total", "tensor_core"
  std::vector<std::string> notes;
  AmdResources amd;  // AMD code objects only (JSON key "amd", absent for NVIDIA)

  nlohmann::json to_json() const;
  static ResourceReport from_json(const nlohmann::json& j);  // throws Error on a malformed object
  std::string to_text() const;  // readable, multi-line, without the SASS itself
  bool operator==(const ResourceReport& o) const;
};

// Whether a report's SASS is made now. nvdisasm runs as a child process, and serving (prepare's
// cold JIT) spawns none: it builds the report from the ptxas log and the CUBIN alone (skip), and
// the SASS is left to `i8gemm inspect show`, which disassembles on demand (add_sass).
enum class Sass { disassemble, skip };

// sass_note of a report made with Sass::skip; the audit names such kernels "not disassembled".
extern const char* const kSassSkipped;

// Everything the report can learn from `b` for a launch of `threads_per_block` threads and
// `dynamic_smem_bytes`. Never throws for a bad log, CUBIN or missing nvdisasm: those go to notes.
// AMD targets ignore `sass` (comgr disassembles in the compiler's own helper process).
ResourceReport make_report(const Binary& b, const Target& t, int threads_per_block, int dynamic_smem_bytes,
                           Sass sass = Sass::disassemble);

// Disassembles r.symbol in the CUBIN `image` (nvdisasm, a child process) into r.sass and
// r.instruction_mix; a failure goes to r.sass_note. For a report stored without SASS.
void add_sass(ResourceReport& r, const std::vector<uint8_t>& image);

// The AMD half of make_report (runtime/report/amd_report.cpp): metadata, descriptor, occupancy per
// SIMD and comgr's disassembly of the exact kernel symbol.
ResourceReport make_amd_report(const Binary& b, const Target& t, int threads_per_block, int dynamic_smem_bytes);

}  // namespace i8g

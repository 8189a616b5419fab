// ResourceReport: what a compiled kernel costs (registers, smem, stack, spills), whether the
// ptxas log and the CUBIN agree, the occupancy it allows, and its SASS with an instruction mix.
#pragma once
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/compiler.hpp"

namespace i8g {

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

  nlohmann::json to_json() const;
  static ResourceReport from_json(const nlohmann::json& j);  // throws Error on a malformed object
  std::string to_text() const;  // readable, multi-line, without the SASS itself
  bool operator==(const ResourceReport& o) const;
};

// Everything the report can learn from `b` for a launch of `threads_per_block` threads and
// `dynamic_smem_bytes`. Never throws for a bad log, CUBIN or missing nvdisasm: those go to notes.
ResourceReport make_report(const Binary& b, const Target& t, int threads_per_block, int dynamic_smem_bytes);

// Resident blocks per SM by the CUDA occupancy calculator's rules (see occupancy.cpp).
// smem_per_block is the kernel's static + dynamic smem, without the driver's reserved block.
// `barriers` is ptxas's "used N barriers" (0: not limiting). *limiter names the tightest limit.
int estimate_blocks_per_sm(const Target& t, int regs_per_thread, int threads_per_block, int smem_per_block,
                           std::string* limiter, int barriers = 0);

}  // namespace i8g

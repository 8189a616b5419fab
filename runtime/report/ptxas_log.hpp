// The resource lines ptxas prints with -v, per function. Spill byte counts exist only here.
#pragma once
#include <map>
#include <string>

namespace i8g {

struct PtxasFunction {
  std::string symbol;
  std::string arch;               // from "Compiling entry function '...' for 'sm_90a'"
  bool entry = false;             // a kernel (entry function) rather than a device function
  int stack_frame_bytes = -1;     // -1: the line was absent
  int spill_store_bytes = -1;
  int spill_load_bytes = -1;
  int registers = -1;
  int barriers = -1;              // ptxas omits "used N barriers" on some archs/versions
  int smem_bytes = -1;            // ptxas omits "0 bytes smem": -1 here means 0 if registers >= 0
  int cmem0_bytes = -1;           // sm_90+ logs print no cmem[0]
  int cumulative_stack_bytes = -1;
};

// Parses every function's block in a (NUL-free) NVRTC/ptxas log. Garbage and truncated lines
// are skipped; this never throws on any input.
std::map<std::string, PtxasFunction> parse_ptxas_log(const std::string& log);

}  // namespace i8g

// Hardware facts per arch (NVIDIA compute capabilities, AMD CDNA targets).
#include "core/target.hpp"

#include <fmt/format.h>

#include <regex>

#include "core/error.hpp"

namespace i8g {

// ---------------------------------------------------------------------------------------------
// Target: limits per compute capability, from the CUDA C++ Programming Guide's table of
// technical specifications. sm_count is the arch's common data-center part; a real device's
// count replaces it when a GPU is present.

namespace {
struct ArchFacts {
  int sm;
  int sm_count;
  int smem_per_sm_kib;
  int smem_optin_kib;
  int max_threads_per_sm;
  int max_blocks_per_sm;
};
constexpr ArchFacts kArchFacts[] = {
    {75, 40, 64, 64, 1024, 16},    // T4
    {80, 108, 164, 163, 2048, 32},  // A100
    {86, 72, 100, 99, 1536, 16},    // A10
    {87, 16, 164, 163, 1536, 16},   // Orin
    {89, 58, 100, 99, 1536, 24},    // L4
    {90, 132, 228, 227, 2048, 32},  // H100 / H200 SXM
    {100, 148, 228, 227, 2048, 32},  // B200
    {120, 188, 100, 99, 1536, 24},   // RTX PRO 6000 Blackwell Server Edition
};
}  // namespace

std::vector<std::string> Target::supported_archs() {
  return {"sm_75", "sm_80", "sm_86", "sm_87", "sm_89", "sm_90", "sm_90a", "sm_100", "sm_120"};
}

std::vector<std::string> Target::supported_amd_archs() { return {"gfx908", "gfx90a"}; }

// CDNA facts: the CDNA1/CDNA2 ISA guides and LLVM's AMDGPU subtarget tables (AMDGPUBaseInfo:
// wave slots, VGPR allocation granule, SGPR file). CU counts are the flagship parts: MI100
// (120 CUs) and one MI250X GCD (110 CUs). gfx908 has separate 256-entry VGPR and AGPR files;
// gfx90a unifies them into 512 per lane, allocated in units of 8.
static Target amd_target(const std::string& arch) {
  Target t;
  t.arch = arch;
  t.amd = true;
  t.warp_size = 64;
  t.simds_per_cu = 4;
  t.smem_per_block_optin = 64 * 1024;  // LDS per workgroup
  t.smem_per_sm = 64 * 1024;           // LDS per CU
  t.vgprs_per_simd_lane = 512;
  t.sgprs_per_simd = 800;
  t.max_sgprs_per_wave = 102;
  t.max_regs_per_thread = 512;
  t.regs_per_sm = t.simds_per_cu * t.vgprs_per_simd_lane * 64;
  t.max_blocks_per_sm = 16;  // workgroups of 2+ waves per CU (one barrier each)
  const bool cdna2 = arch == "gfx90a";
  t.sm_count = cdna2 ? 110 : 120;
  t.max_waves_per_simd = cdna2 ? 8 : 10;
  t.vgpr_granule = cdna2 ? 8 : 4;
  t.unified_vgprs = cdna2;
  t.max_threads_per_sm = t.simds_per_cu * t.max_waves_per_simd * 64;
  return t;
}

Target Target::from_arch(const std::string& arch_in) {
  static const std::regex re(R"(^sm_?(\d{2,3})(a?)$)");
  std::smatch m;
  const std::string supported = fmt::format("{}, {}", fmt::join(supported_archs(), ", "),
                                            fmt::join(supported_amd_archs(), ", "));
  if (arch_in.rfind("gfx", 0) == 0) {
    if (arch_in == "gfx90a" || arch_in == "gfx908") return amd_target(arch_in);
    throw Error("Target", fmt::format("AMD target '{}' is not supported: this hipRTC (ROCm 5.2) "
                                      "compiles CDNA gfx908 and gfx90a only (supported: {})",
                                      arch_in, fmt::join(supported_amd_archs(), ", ")));
  }
  if (!std::regex_match(arch_in, m, re))
    throw Error("Target", fmt::format("unknown arch '{}' (supported: {})", arch_in, supported));
  Target t;
  t.sm = std::stoi(m[1].str());
  t.arch_specific = m[2].matched && m[2].length() > 0;
  t.arch = fmt::format("sm_{}{}", t.sm, t.arch_specific ? "a" : "");
  bool known = false;
  for (const std::string& s : supported_archs()) known |= s == t.arch;
  if (!known)
    throw Error("Target", fmt::format("arch '{}' is not supported (supported: {})", arch_in,
                                      supported));
  for (const ArchFacts& f : kArchFacts) {
    if (f.sm != t.sm) continue;
    t.sm_count = f.sm_count;
    t.smem_per_sm = f.smem_per_sm_kib * 1024;
    t.smem_per_block_optin = f.smem_optin_kib * 1024;
    t.max_threads_per_sm = f.max_threads_per_sm;
    t.max_blocks_per_sm = f.max_blocks_per_sm;
  }
  t.regs_per_sm = 65536;
  t.max_regs_per_thread = 255;
  t.warp_size = 32;
  return t;
}

std::string Target::to_string() const {
  return fmt::format("{} ({} SMs, {} KiB smem/block, {} KiB smem/SM, {} regs/SM)", arch,
                     sm_count, smem_per_block_optin / 1024, smem_per_sm / 1024, regs_per_sm);
}

std::ostream& operator<<(std::ostream& os, const Target& t) { return os << t.to_string(); }

}  // namespace i8g

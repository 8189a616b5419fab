// What code is generated for, and the per-arch facts the generator's budgets and the resource
// report both use. No GPU, no GEMM policy here.
#pragma once
#include <ostream>
#include <string>
#include <vector>

namespace i8g {

// What code is generated for: an NVIDIA arch (sm_75 .. sm_90a) or an AMD CDNA target (gfx908,
// gfx90a). For AMD, "SM" reads "CU", "shared memory" reads "LDS", "warp" reads "wavefront".
struct Target {
  std::string arch;            // canonical: "sm_90a", "sm_80", "gfx90a"
  bool amd = false;
  int sm = 0;                  // NVIDIA compute capability as major*10+minor (90)
  bool arch_specific = false;  // the "a" suffix (wgmma, setmaxnreg)
  int sm_count = 0;            // multiprocessors (CUs); from the device, or the arch's flagship
  int smem_per_block_optin = 0;  // bytes a block can get after opting in
  int smem_per_sm = 0;           // bytes per SM
  int regs_per_sm = 0;           // 32-bit registers per SM
  int max_regs_per_thread = 0;
  int max_threads_per_sm = 0;
  int max_blocks_per_sm = 0;
  int warp_size = 32;
  // AMD only (0 / false on NVIDIA): per-SIMD register files and wave slots.
  int simds_per_cu = 0;
  int max_waves_per_simd = 0;    // 8 on gfx90a, 10 on gfx908
  int vgprs_per_simd_lane = 0;   // 512: VGPR + AGPR file per lane of one SIMD
  int vgpr_granule = 0;          // allocation unit of the (unified) VGPR count
  bool unified_vgprs = false;    // gfx90a: VGPRs and AGPRs share one file of 512
  int sgprs_per_simd = 0;        // 800 on GFX9
  int max_sgprs_per_wave = 0;    // 102 addressable, VCC included
  // Offer the wgmma family (sm_90a; compiled and CPU-checked, never run on a GPU yet) among the
  // candidates. Off by default; `i8gemm tune --experimental-wgmma` sets it. Not part of any
  // cache key: it changes which kernels are tried, not what a named kernel computes.
  bool experimental_wgmma = false;
  // Offer wgmma_tma's staged-store twins (epilogue_store = 1: the output through shared memory
  // and a TMA store; exact on the H200, not yet faster than the register store). Off by default;
  // `i8gemm tune --experimental-staged-store` sets it. Not part of any cache key either.
  bool experimental_staged_store = false;
  // Offer wgmma_tma's packed-weight twins (packed_weight = 1: the weight pre-packed once so that a
  // tile's rows of a ring stage are one bulk copy, generator/packed_weight.hpp). Off by default; `i8gemm tune --experimental-packed-weight`
  // races them (the tuner packs its weights for them) but never stores one as a winner: serving
  // cannot hand a kernel a packed weight yet. Not part of any cache key.
  bool experimental_packed_weight = false;
  // Offer wgmma_tma's tile-order twins of the large-M tiles: other raster groups, L2 eviction
  // hints on the operand loads, the ping-pong dynamic schedule (generator/family_wgmma_tma.cpp).
  // Off by default; `i8gemm tune --experimental-tile-order` sets it. Not part of any cache key.
  bool experimental_tile_order = false;

  // Facts for the named arch (hardware limits from the CUDA programming guide, the AMD CDNA
  // ISA guides and LLVM's AMDGPU target description); throws Error
  // for an unknown or unsupported name. sm_count defaults to the arch's flagship part.
  static Target from_arch(const std::string& arch);
  // Archs the generator emits for: NVIDIA (NVRTC 13: 75 80 86 87 89 90 90a) and AMD (hipRTC
  // 5.2: gfx908 gfx90a; compiled and audited only, no AMD GPU runs them here).
  static std::vector<std::string> supported_archs();
  static std::vector<std::string> supported_amd_archs();
  std::string to_string() const;
};

std::ostream& operator<<(std::ostream&, const Target&);

}  // namespace i8g

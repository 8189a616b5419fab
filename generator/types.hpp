// Plain data that crosses the seams: GemmProblem, Target, KernelConfig, Source.
// Each prints itself and round-trips to text. No GPU, no files, no clock here.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "core/source.hpp"
#include "core/target.hpp"

namespace i8g {

enum class WeightLayout { nk, kn };          // [N,K] row-major ("checkpoint") or [K,N] row-major
enum class ActScale { per_tensor, per_token };
enum class WeightScale { per_tensor, per_channel };
enum class OutType { bf16, f16, f32, i32 };  // i32: the (zero-point corrected) accumulator, no scales

// Largest K for which the int32 accumulator cannot overflow:
// symmetric: 127*127*K < 2^31; asymmetric (|x - zp| <= 255): 255*127*K < 2^31.
constexpr int64_t kMaxKSymmetric = 133144;
constexpr int64_t kMaxKAsymmetric = 66311;
constexpr int64_t kMaxN = int64_t(1) << 24;

struct GemmProblem {
  int64_t n = 0;
  int64_t k = 0;
  WeightLayout layout = WeightLayout::nk;
  ActScale act_scale = ActScale::per_token;
  WeightScale weight_scale = WeightScale::per_channel;
  OutType out = OutType::bf16;
  bool bias = false;        // fp32 bias[n], added after scaling
  bool asymmetric = false;  // int32 activation zero points, corrected with weight column sums

  // Empty when valid, else why not (one line).
  std::string invalid_reason() const;
  void validate() const;  // throws Error with invalid_reason()
  // Stable text form, e.g. "n2560_k4096_nk_tok_ch_bf16" (+ "_bias", "_asym").
  std::string key() const;
  static GemmProblem parse_key(const std::string& text);  // throws Error
  bool operator==(const GemmProblem& o) const;
  bool operator!=(const GemmProblem& o) const { return !(*this == o); }
};

enum class Family { simt_dp4a, mma_sync, mfma, wgmma, wgmma_tma, decode_mma };

// How a kernel computes: its family and the fields that family reads. Each field means one
// thing in every family that uses it; a family's kernel name lists exactly the fields it uses
// (generator/families.hpp, FamilyInfo::name_fields), and a field it does not use keeps its
// value below (shape fields 0, one stage, no split, 16-byte loads) or the config is invalid.
struct KernelConfig {
  Family family = Family::simt_dp4a;
  int bm = 0, bn = 0, bk = 0;         // block tile: rows (M), columns (N), depth (K bytes)
  int thread_m = 0, thread_n = 0;     // simt_dp4a: outputs per thread along M and N
  int warps_m = 0, warps_n = 0;       // mma_sync: warps; mfma: wavefronts; along M and N
  int instr = 0;                      // mfma: the instruction's M = N (32: v_mfma_i32_32x32x8i8,
                                      // 16: v_mfma_i32_16x16x16i8)
  int warpgroups = 0;                 // wgmma: warpgroups of 4 warps (each owns bm/warpgroups rows)
  int stages = 1;                     // shared-memory pipeline depth
  int split_k = 1;                    // K slices combined in the epilogue
  int vec = 16;                       // bytes per global load of x and w (16, 8, 4, 2 or 1)
  int schedule = 0;                   // wgmma_tma: 1 cooperative (the consumer warpgroups split each
                                      // tile), 2 ping-pong (each owns whole tiles, in turn);
                                      // decode_mma: 0 chunks in registers, 1 a shared-memory ring
  int cluster_m = 1;                  // wgmma_tma: blocks per thread-block cluster along M (2: a
                                      // pair of M tiles shares each w tile, loaded once by TMA
                                      // multicast); names carry it only where it is not 1
  int warps_k = 0;                    // decode_mma: warps per block along K (each streams every
                                      // warps_k-th chunk of the block's K slice)
  int cluster_k = 1;                  // wgmma_tma: blocks per thread-block cluster along K (2: a
                                      // pair over the two halves of each tile's K, summed through
                                      // shared memory); names carry it only where it is not 1
  int epilogue_store = 0;             // wgmma_tma: 1 stages the output tile in shared memory and
                                      // writes it with a TMA store (templates/tma_store.cuh);
                                      // names carry it only where it is 1
  int packed_weight = 0;              // wgmma_tma: 1 reads the weight pre-packed for its bk
                                      // (generator/packed_weight.hpp: a tile's rows of a ring
                                      // stage one contiguous, pre-swizzled block, one bulk copy)
                                      // instead of the [N,K] weight; names carry it only where 1
  int dynamic_schedule = 0;           // wgmma_tma: 1 hands a persistent block its next tile from
                                      // an atomic counter (a block that runs fast takes more)
                                      // instead of the fixed share b, b + grid, ...; names carry
                                      // it only where it is 1
  int raster_group = 0;               // wgmma_tma: tile rows (or columns, where M < N) walked
                                      // together before the next group (L2 reuse); 0 the
                                      // family's 8; names carry it only where it is not 0
  int l2_hint = 0;                    // wgmma_tma: L2 eviction hints on the operand loads, bit 0
                                      // x evict_last, bit 1 w evict_first; names carry it only
                                      // where it is not 0
  int pdl_trigger = 0;                // decode_mma, wgmma_tma (sm_90+): where each block signals
                                      // griddepcontrol.launch_dependents (docs/pdl.md): 0 never
                                      // (the next grid launches as blocks exit), 1 right after
                                      // its wait, 2 late (decode_mma after its main loop,
                                      // wgmma_tma's producer after its last load); the tuner
                                      // races 1 and 2 as twins of its finalists; names carry it
                                      // only where it is not 0

  int threads() const;
  int static_smem_bytes() const;  // shared memory the template declares for this tile
  // The family's fields, e.g. "bm32_bn32_bk128_wm2_wn2_s4_sk3" (mma_sync).
  std::string to_string() const;
  static KernelConfig parse(Family family, const std::string& text);  // throws Error
  bool operator==(const KernelConfig& o) const;
  bool operator!=(const KernelConfig& o) const { return !(*this == o); }
};

const char* to_string(WeightLayout);
const char* to_string(ActScale);
const char* to_string(WeightScale);
const char* to_string(OutType);
const char* to_string(Family);
std::optional<Family> parse_family(const std::string&);
std::optional<OutType> parse_out_type(const std::string&);
size_t out_element_size(OutType);  // bytes per output element

// A whole kernel: what it computes, how, and for which target. The name is the identity:
// i8g_<arch>_<family>_<problem key>_<config>, e.g.
// i8g_sm90a_mma_sync_n2560_k4096_nk_tok_ch_bf16_bm32_bn32_bk128_wm2_wn2_s4_sk3
struct KernelSpec {
  GemmProblem problem;
  KernelConfig config;
  std::string arch;  // Target::arch

  std::string name() const;
  static KernelSpec parse_name(const std::string& name);  // throws Error
  bool operator==(const KernelSpec& o) const;
};

// Grid and block for a launch of `spec` over m rows; cluster: the thread-block cluster's shape
// in blocks ({1, 1, 1}: no cluster, a plain launch), which divides the grid.
struct LaunchShape {
  unsigned grid[3];
  unsigned block[3];
  unsigned dynamic_smem;
  unsigned cluster[3] = {1, 1, 1};
};

std::ostream& operator<<(std::ostream&, const GemmProblem&);
std::ostream& operator<<(std::ostream&, const KernelConfig&);
std::ostream& operator<<(std::ostream&, const KernelSpec&);

}  // namespace i8g

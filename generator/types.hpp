// Plain data that crosses the seams: GemmProblem, Target, KernelConfig, Source.
// Each prints itself and round-trips to text. No GPU, no files, no clock here.
#pragma once
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

enum class Family { simt_dp4a, mma_sync, mfma, wgmma };

struct KernelConfig {
  Family family = Family::simt_dp4a;
  int bm = 64, bn = 64, bk = 32;  // block tile
  int tm = 4, tn = 4;             // per-thread tile (simt); mfma: the instruction's M and N
                                  // (32: v_mfma_i32_32x32x8i8, 16: v_mfma_i32_16x16x16i8)
  int wm = 1, wn = 1;             // warps (AMD: wavefronts) along M and N; wgmma: wm = 4 per
                                  // warpgroup (its warps split each m64 by 16 rows), wn = 1
  int stages = 1;                 // shared-memory pipeline depth
  int split_k = 1;                // K slices combined in the epilogue
  int vec = 16;                   // bytes per global load of x and w (16, 8, 4 or 1)

  int threads() const;
  int static_smem_bytes() const;  // shared memory the template declares for this tile
  std::string to_string() const;  // "bm64_bn64_bk32_tm4_tn4_wm1_wn1_s1_sk1_v16"
  static KernelConfig parse(Family family, const std::string& text);  // throws Error
  bool operator==(const KernelConfig& o) const;
};

const char* to_string(WeightLayout);
const char* to_string(ActScale);
const char* to_string(WeightScale);
const char* to_string(OutType);
const char* to_string(Family);
std::optional<Family> parse_family(const std::string&);
std::optional<OutType> parse_out_type(const std::string&);

// A whole kernel: what it computes, how, and for which target. The name is the identity:
// i8g_<arch>_<family>_<problem key>_<config>, e.g.
// i8g_sm90a_simt_dp4a_n2560_k4096_nk_tok_ch_bf16_bm64_bn64_bk32_tm4_tn4_wm1_wn1_s1_sk1_v16
struct KernelSpec {
  GemmProblem problem;
  KernelConfig config;
  std::string arch;  // Target::arch

  std::string name() const;
  static KernelSpec parse_name(const std::string& name);  // throws Error
  bool operator==(const KernelSpec& o) const;
};

// Grid and block for a launch of `spec` over m rows.
struct LaunchShape {
  unsigned grid[3];
  unsigned block[3];
  unsigned dynamic_smem;
};

std::ostream& operator<<(std::ostream&, const GemmProblem&);
std::ostream& operator<<(std::ostream&, const KernelConfig&);
std::ostream& operator<<(std::ostream&, const KernelSpec&);

}  // namespace i8g

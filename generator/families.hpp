// The family table: one record per kernel family, each filled in by its own
// generator/family_<name>.cpp and listed in generator/families.cpp. The generator's entry points
// (generator.hpp) loop over or look up this table; nothing else branches on the family.
// docs/adding_a_family.md says how to add a row.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "generator/types.hpp"

namespace i8g {

// A KernelConfig field that a family may list in its kernel names (bm, bn and bk always are).
enum class ConfigField {
  thread_m, thread_n, warps_m, warps_n, instr, warpgroups, stages, split_k, vec, schedule, cluster_m,
  warps_k, cluster_k, epilogue_store, packed_weight, dynamic_schedule, raster_group, l2_hint, pdl_trigger
};

struct ConfigFieldInfo {
  ConfigField field;
  const char* tag;      // before the value in a name: "wm" in "_wm2"
  const char* name;     // the KernelConfig member, for messages: "warps_m"
  int KernelConfig::*member;
  int max_digits;       // longest value a name may carry
};
const std::vector<ConfigFieldInfo>& config_fields();  // every ConfigField, in enum order
const ConfigFieldInfo& field_info(ConfigField f);
// Empty when c.pdl_trigger is one a family taking the field can run on t (0; 1 or 2 on sm_90+,
// where griddepcontrol exists), else the reason.
std::string pdl_trigger_reason(const KernelConfig& c, const Target& t);

// One template argument, named as the template's parameter is (e.g. {"BM", 64}).
struct TemplateArg {
  const char* name;
  long long value;
  bool long_long = false;  // rendered with an LL suffix (the long long N_ and K_)
};

struct FamilyInfo {
  Family family = Family::simt_dp4a;
  const char* name = "";      // in kernel names, I8GEMM_FAMILY and the cache's family column
  const char* header = "";    // the template it instantiates, e.g. "mma_sync.cuh"
  const char* kernel = "";    // the kernel template, e.g. "i8g::mma_sync_kernel"
  // Its parameter list, as the emitted instantiation spells it; empty: the one argument block
  // (`const __grid_constant__ I8gArgs`, by value on AMD).
  const char* kernel_params = "";
  // The kernel also takes two TMA tensor maps after the argument block, encoded by the host for
  // each launch: x as {K, M} and w as {K, N} bytes, boxes of {128, bm} and {128, bn / cluster_m}
  // (tma_box_rows in generator.hpp), 128-byte swizzle, zero fill (runtime/gpu/tensor_map).
  bool tma_operands = false;
  bool amd = false;           // compiled by hipRTC for AMD targets; else NVRTC for NVIDIA ones
  // The config fields its names list, in order, after bm, bn and bk. Every other field must
  // keep its KernelConfig{} value (invalid_reason() says so).
  std::vector<ConfigField> name_fields;
  // Fields the family uses that its names list, after name_fields, only where they differ from
  // their KernelConfig{} value (a field added to a family this way keeps every older name); a
  // name that spells out the default value is refused (it would be a second name of a kernel).
  std::vector<ConfigField> optional_name_fields;
  bool splits_k = false;      // may run with split_k > 1 (I8GEMM_SPLIT_K applies)
  // Where nothing was tuned, the family of the highest rank with a candidate runs; 0: never
  // untuned (an experimental family only a verified tune may pick).
  int untuned_rank = 0;
  // Where set, the untuned default takes only the configs it accepts for a bucket bounded by m
  // (none: the family is passed over there, e.g. below the M it is meant for).
  bool (*serves_untuned)(const GemmProblem& problem, const KernelConfig& config, const Target& target,
                         int64_t m) = nullptr;
  // Where set, a tune races the kernel only in the M buckets it accepts (bounded by m); none:
  // in every bucket. For families built for a range of M (decode_mma: M <= 64, one row tile).
  bool (*races_at)(const KernelSpec& spec, int64_t m) = nullptr;

  // Why the family cannot run `problem` on `target` at all (arch, layout, alignment), or "".
  std::string (*unsupported)(const GemmProblem& problem, const Target& target) = nullptr;
  // The configs worth compiling for a problem it supports (each must be valid).
  std::vector<KernelConfig> (*candidates)(const GemmProblem& problem, const Target& target) = nullptr;
  // Why a config breaks the family's rules or the target's budgets, or "". Called only for a
  // supported problem and a config whose unused fields are at their defaults.
  std::string (*invalid_reason)(const GemmProblem& problem, const KernelConfig& config,
                                const Target& target) = nullptr;
  // Estimated cost of a launch over m rows (lower is better); only ranks the family's configs.
  double (*cost)(const GemmProblem& problem, const KernelConfig& config, const Target& target,
                 int64_t m) = nullptr;
  int (*threads)(const KernelConfig& config) = nullptr;
  int (*static_smem)(const KernelConfig& config) = no_smem;   // declared in the template
  int (*dynamic_smem)(const KernelConfig& config) = no_smem;  // passed at launch
  int (*registers)(const KernelConfig& config) = nullptr;     // per thread, estimated
  // Matrix-core instructions of one K step (the loop body), which the kernel's IR and ISA must
  // hold once per copy of that body: once, or once per K step where a compile-time K lets the
  // compiler unroll the whole K loop. Null where the audit does not count them.
  int (*matrix_instructions)(const KernelConfig& config) = nullptr;
  // Grid, block and dynamic shared memory over m rows; sm_count is the device's (0 unknown),
  // for persistent kernels.
  LaunchShape (*launch)(const KernelSpec& spec, int64_t m, int sm_count) = tile_launch;
  size_t (*workspace)(const KernelSpec& spec, int64_t m) = no_workspace;  // zeroed device bytes
  int (*alignment)(const KernelConfig& config) = nullptr;    // bytes x and w must be aligned to
  // The template's arguments in its parameters' order, named as they are.
  std::vector<TemplateArg> (*template_args)(const KernelSpec& spec) = nullptr;

  static int no_smem(const KernelConfig&) { return 0; }
  static size_t no_workspace(const KernelSpec&, int64_t) { return 0; }
  // One block per bm x bn output tile (x along N, y along M), split_k along z; threads() wide.
  static LaunchShape tile_launch(const KernelSpec& spec, int64_t m, int sm_count = 0);
  // templates/splitk.h's arrival counters and partial tiles for every tile of tile_launch's grid
  // (mma_sync, decode_mma).
  static size_t tile_splitk_workspace(const KernelSpec& spec, int64_t m);
};

const std::vector<const FamilyInfo*>& families();  // the table, in candidate order
const FamilyInfo& family_info(Family f);

// The problem's part of every template's parameters: N_, K_, LAYOUT (unless the family takes
// one layout only), ACT, WSC, OUT, BIAS, ASYM.
std::vector<TemplateArg> problem_template_args(const GemmProblem& p, bool with_layout);

}  // namespace i8g

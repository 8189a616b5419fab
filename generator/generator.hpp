// The generator: plain structs in, source text out. Pure: no GPU, no files, no clock. Every
// entry point here loops over or looks up the family table (generator/families.hpp).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/embedded.hpp"
#include "generator/types.hpp"

namespace i8g {

// Every config of every family that suits `problem` on `target`, derived from rules and the
// target's budgets (shared memory, registers, threads, alignment); each one validates.
std::vector<KernelConfig> candidates(const GemmProblem& problem, const Target& target);

// Empty when `config` can run `problem` on `target`, else the reason (one line).
std::string invalid_reason(const GemmProblem& problem, const KernelConfig& config,
                           const Target& target);

// The config used where nothing was tuned: a rule of M, N, K and the target. Tensor-core
// families where the problem allows them, simt_dp4a otherwise.
KernelConfig heuristic_default(const GemmProblem& problem, const Target& target, int64_t m);
// The same rule restricted to one family; throws Error when that family has no candidate.
KernelConfig heuristic_default(const GemmProblem& problem, const Target& target, int64_t m,
                               Family family);

// The programmatic-launch trigger twins of `config` (pdl_trigger 1 and 2, docs/pdl.md): the
// tuner races them beside its finalists. Empty where the family has no trigger, the target is
// below sm_90 or the config already sets one.
std::vector<KernelConfig> trigger_twins(const GemmProblem& problem, const KernelConfig& config, const Target& target);

// Whether a tune races `spec` in the M bucket bounded by m (its family's races_at; every
// bucket where the family sets none).
bool raced_at(const KernelSpec& spec, int64_t m);

// Source for one kernel: an include of its family's template plus one instantiation.
Source emit(const KernelSpec& spec);

// The utility module for `arch`: weight column sums, activation quantization and the dequant
// of an int32 accumulator, as plain C entry points (i8g_colsum_nk, i8g_dequant_tok_ch_bf16, ...).
Source emit_utility(const std::string& arch);
// The utility module's dequant entry for `problem`: i8g_dequant_<act scale>_<weight scale>_
// <out>[_bias][_asym], e.g. i8g_dequant_tok_ch_bf16 (the layout is not the dequant's business).
// Its vector kernel, for N % 8 == 0 and 16-byte aligned pointers (the host checks).
std::string dequant_entry(const GemmProblem& problem);
// Its element kernel, for any N and alignment: i8g_dequant_any_<out>[_bias][_asym]; the scale
// granularities are its last two arguments (int per_token, int per_channel).
std::string dequant_any_entry(const GemmProblem& problem);

// M buckets for prepare and tuning: 1, 2, 4, ..., 8192 with 3072, each covering the M up to
// it; beyond 8192, max_m itself. Only buckets needed for M in [1, max_m].
std::vector<int64_t> m_buckets(int64_t max_m);

// Grid, block and dynamic shared memory for a launch over `m` rows. A dynamic_smem above 48 KiB
// needs CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES set on the function before launch.
// LaunchShape::cluster above {1, 1, 1} needs a cluster launch (cuLaunchKernelEx with
// CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION). For a persistent family sm_count is how many blocks
// can be resident at once (the SM count, or fewer where clusters do not tile the SMs).
LaunchShape launch_shape(const KernelSpec& spec, int64_t m, int sm_count = 0);

// Rows of the two TMA boxes a FamilyInfo::tma_operands kernel loads over m rows (each box is 128
// bytes of k wide): x's is bm, or m where m < bm (templates/wgmma_frag.h x_box_rows: the kernel
// expects that many bytes); w's is bn / cluster_m, because each block of a cluster along M loads
// its share of the w tile and multicasts it to every block of the cluster. out: the output box's
// rows for a staged-store kernel (config.epilogue_store; a consumer's rows), else 0 (no map).
struct TmaBoxRows {
  int x = 0, w = 0, out = 0;
};
TmaBoxRows tma_box_rows(const KernelConfig& config, int64_t m);

// Bytes of zeroed device workspace (I8gArgs::workspace) a launch over up to `m` rows needs:
// 0 without split-K, else the family's layout (mma_sync: templates/mma_frag.h's arrival
// counters + partial tiles).
// The kernel leaves the counters zero again, so one clear at allocation serves every launch.
size_t workspace_bytes(const KernelSpec& spec, int64_t m);

// The arrival counters of a launch over `m` rows in its workspace (templates/splitk.h): `blocks`
// runs of `words` int32 words, `pitch` bytes apart; wgmma_tma's dynamic schedule (_ds1): its one
// block of counters; none (blocks 0) without split-K or that schedule. The partials
// between them need no clearing, so a workspace that may hold anything (a caller's) is made
// ready for the launch by zeroing these alone.
struct SplitKCounters {
  int64_t blocks = 0;
  size_t words = 0;
  size_t pitch = 0;
};
SplitKCounters splitk_counters(const KernelSpec& spec, int64_t m);

// Whether a wgmma_tma config is one of the tile-order twins: a raster group (_rg), an L2 hint
// (_lh) or the ping-pong dynamic schedule (_ds1 on a ping-pong tile).
bool tile_order_twin(const KernelConfig& config);

// Byte alignment the kernel's vector loads need of x and w (and of their row pitch).
int required_alignment(const KernelConfig& config);

}  // namespace i8g

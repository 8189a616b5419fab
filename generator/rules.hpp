// Rules shared by the family files (internal to the generator).
#pragma once
#include <functional>

#include "generator/families.hpp"

namespace i8g {

inline bool is_pow2(int v) { return v > 0 && (v & (v - 1)) == 0; }

// The widest global load (bytes: 16, 8, 4 or 1) that every row of x and w keeps aligned.
int widest_vector(const GemmProblem& p);

// Resident blocks of `c` per SM by core/occupancy.hpp's model, from its family's register,
// thread and shared-memory estimates: what the cost models assume runs at once.
int blocks_per_sm(const KernelConfig& c, const Target& t);
// The same for AMD: workgroups per CU from the VGPR estimate, wavefronts and LDS.
int workgroups_per_cu(const KernelConfig& c, const Target& t);

// Why one block of `threads` threads, `smem` bytes of dynamic shared memory and ~`regs`
// registers a thread does not fit `t` (at most `reg_cap` registers a thread where that is
// below the target's own limit), or "": the budget checks that close each family's
// invalid_reason.
std::string budget_reason(int smem, int regs, int threads, const Target& t, int reg_cap = 1 << 30);

// Split-K (mma_sync, wgmma_tma; templates/splitk.h). The splits worth offering a config whose
// `tiles` output tiles leave SMs of `t` idle: from {2, 3, 4, 6, 8, 12, 16}, those `usable`
// accepts whose tiles * split blocks (or persistent work units) fit in `max_waves` waves of the
// SMs; the `keep` whose last wave is fullest (ties: the smaller split, which adds less
// reduction traffic). None when the tiles alone fill the SMs.
std::vector<int> splits_to_offer(int64_t tiles, const Target& t, int max_waves, size_t keep,
                                 const std::function<bool(int split)>& usable);
// The zeroed device bytes a split config needs over `tiles` output tiles: per tile a counter
// block and one bm x bn int32 partial per slice; none without a split.
size_t splitk_workspace_bytes(int64_t tiles, const KernelConfig& c);
// Why split_k is outside 1..splitk::kMaxSplit (the templates' limit), or "".
std::string split_k_range_reason(const KernelConfig& c);

}  // namespace i8g

// Per-family rules behind generator.hpp's entry points (internal to generator/). Each family
// keeps its validity rules, candidate enumeration, cost model and instantiation text in its
// own file; candidates.cpp and emit.cpp only dispatch.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "generator/types.hpp"

namespace i8g {

// The templates' kOut* code of an output type (templates/epilogue.cuh).
int out_code(OutType o);

// mma_sync (generator/family_mma_sync.cpp, templates/mma_sync.cuh)
std::string mma_sync_invalid_reason(const GemmProblem& p, const KernelConfig& c, const Target& t);
std::vector<KernelConfig> mma_sync_candidates(const GemmProblem& p, const Target& t);
// Estimated cycles on the busiest SM for m rows (lower is better); only compares configs.
double mma_sync_cost(const GemmProblem& p, const KernelConfig& c, const Target& t, int64_t m);
int mma_sync_smem_bytes(const KernelConfig& c);  // dynamic shared memory: the stage ring
int mma_sync_register_estimate(const KernelConfig& c);
std::string mma_sync_entry(const KernelSpec& s);  // "i8g::mma_sync_kernel<...>"

// wgmma (generator/family_wgmma.cpp, templates/wgmma.cuh): sm_90a, [N,K] only, experimental:
// wgmma_candidates() is empty unless Target::experimental_wgmma is set.
std::string wgmma_invalid_reason(const GemmProblem& p, const KernelConfig& c, const Target& t);
std::vector<KernelConfig> wgmma_candidates(const GemmProblem& p, const Target& t);
double wgmma_cost(const GemmProblem& p, const KernelConfig& c, const Target& t, int64_t m);
int wgmma_smem_bytes(const KernelConfig& c);  // dynamic shared memory: the ring + 1 KiB slack
int wgmma_register_estimate(const KernelConfig& c);
std::string wgmma_entry(const KernelSpec& s);  // "i8g::wgmma_kernel<...>"

}  // namespace i8g

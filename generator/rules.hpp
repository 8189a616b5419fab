// Rules shared by the family files (internal to the generator).
#pragma once
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

}  // namespace i8g

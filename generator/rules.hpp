// Rules shared by the families' candidate files (internal to the generator).
#pragma once
#include <string>
#include <vector>

#include "generator/types.hpp"

namespace i8g {

// The widest global load (bytes: 16, 8, 4 or 1) that every row of x and w keeps aligned.
int widest_vector(const GemmProblem& p);

// mfma (AMD CDNA): validity, candidates, register estimate and the untuned cost model.
std::string mfma_invalid_reason(const GemmProblem& p, const KernelConfig& c, const Target& t);
std::vector<KernelConfig> mfma_candidates(const GemmProblem& p, const Target& t);
int mfma_vgpr_estimate(const KernelConfig& c);
double mfma_cost(const GemmProblem& p, const KernelConfig& c, const Target& t, int64_t m);

}  // namespace i8g

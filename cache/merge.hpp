// Moving tuning results between caches: merging the caches of several tuning jobs (shards,
// devices, hosts) into one, and exporting the winners alone for serving nodes. Inputs are only
// read; the output only gains rows (put_kernel never overwrites, timings are appended once).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "cache/cache.hpp"

namespace i8g::cache {

// What a merge or an export did, for the command to print.
struct MergeReport {
  int64_t kernels_added = 0, kernels_present = 0;  // present: the output had that key already
  int64_t timings_added = 0, timings_present = 0;  // present: an identical row was there
  int64_t winners_added = 0, winners_same = 0, winners_replaced = 0, winners_kept = 0;
  // One line per conflict: two different binaries under one key (the output's is kept), or two
  // different winners for one TuneKey (resolved by winner_preferred, both named).
  std::vector<std::string> conflicts;
  // Export only: winners whose kernel the input does not hold (prepare would compile it).
  std::vector<std::string> missing;
};

// Empty when every row of `in` can be trusted (integrity check ok, every binary matching its
// sha256 and device code), else why not, naming the rows: checked for every input before
// anything is written, so a damaged input adds nothing.
std::string input_problem(Cache& in);

// Whether winner `a` should stand over winner `b` of the same TuneKey: the tuner's rule on
// their stored times (the lower wins unless within kWinnerTieFraction of the other; a tie goes
// to the lexicographically first candidate: a cache keeps no per-placement times, which the
// tuner's own tie-break looks at first). The tuner's tie (runtime/tune/policy.hpp's kTieFraction)
// is this constant.
inline constexpr double kWinnerTieFraction = 0.01;
bool winner_preferred(const Winner& a, const Winner& b);

// Copies every kernel, timing and winner of `in` into `out`. Kernel ids are the output's (a
// timing or winner whose kernel `in` does not hold keeps id 0). A timing identical to one the
// output holds is not added again, so merging the same input twice changes nothing.
MergeReport merge_into(Cache& out, Cache& in);

// Copies the winners of `in` with exactly the kernels they name (by the id the tune stored) and
// the utility modules of their archs, compilers and generators: what a strict prepare needs.
MergeReport export_winners(Cache& out, Cache& in);

}  // namespace i8g::cache

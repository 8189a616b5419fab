// Tune options for GPU tests that run the whole tuner on a small problem: a few candidates
// (the bm16_bn32_bk128 tiles beside cuBLASLt's algorithms) and few samples keep each short.
#pragma once
#include <cstdint>
#include <vector>

#include "runtime/tune/autotune.hpp"

namespace i8g::gputest {

inline TuneOptions quick_tune_options(std::vector<int64_t> ms) {
  TuneOptions o;
  o.filter = "_bm16_bn32_bk128_";
  o.plan.samples = 5;
  o.plan.warmup = 5;
  o.ms = std::move(ms);
  return o;
}

}  // namespace i8g::gputest

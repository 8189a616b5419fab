// A tune's work list across jobs: which share of it one job takes (`--shard`), and the line it
// prints per finished M bucket. Pure: text and numbers in, text out.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace i8g {

// `tune --shard I/N`: job I of N independent tuning jobs (0 <= I < N). The work list (on a GPU
// the (shape, M bucket) pairs in shape order, then M order; with --compile-only the candidate
// kernels that pass --filter) is dealt round robin: item j belongs to shard j mod N, so N jobs
// with the same flags cover it exactly once, whatever order they run in.
struct Shard {
  int64_t index = 0, count = 1;
  bool holds(size_t item) const { return int64_t(item % uint64_t(count)) == index; }
};
Shard parse_shard(const std::string& text);  // "I/N"; throws Error

// "41s", "2m05s", "1h02m": a duration for progress lines.
std::string duration_text(double seconds);
// A tune's line per finished M bucket: who ran it (device, shard), how many of this job's
// buckets are done, the time since the job began and, from the mean time per bucket so far,
// about how long the rest will take.
std::string bucket_line(const std::string& who, size_t done, size_t total, const std::string& bucket,
                        double elapsed_seconds);

}  // namespace i8g

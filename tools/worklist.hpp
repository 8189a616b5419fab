// A tune's work list across jobs: which share of it one job takes (`--shard`), and the line it
// prints per finished M bucket. Pure: text and numbers in, text out.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace i8g {

// `tune --shard I/N`: job I of N independent tuning jobs (0 <= I < N). The work list (on a GPU
// the shapes, each with all its M buckets, when there are at least N of them, else the
// (shape, M bucket) pairs in shape order, then M order; with --compile-only the candidate
// kernels that pass --filter) is dealt round robin: item j belongs to shard j mod N, so N jobs
// with the same flags cover it exactly once, whatever order they run in.
struct Shard {
  int64_t index = 0, count = 1;
  bool holds(size_t item) const { return int64_t(item % uint64_t(count)) == index; }
};
Shard parse_shard(const std::string& text);  // "I/N"; throws Error
// A GPU tune's share: for each of `shapes` shapes, the indices (into the --m list of `ms`
// buckets) of the buckets this shard tunes, by the rule above (whole shapes when shapes >=
// shard.count).
std::vector<std::vector<size_t>> shard_buckets(const Shard& shard, size_t shapes, size_t ms);

// `tune --devices`: job k of n device jobs inside the parent's share `parent` (itself a shard of
// an outer job array, or the whole list): items j with j mod (parent.count * n) equal to
// parent.index + parent.count * k. The n sub-shards partition the parent's items.
Shard sub_shard(Shard parent, int64_t k, int64_t n);
// The command line of one device job of `tune --devices`: the parent's arguments without
// --devices, --device and --shard (as "--x V" or "--x=V"), then --device D --shard I/N.
std::vector<std::string> device_job_args(const std::vector<std::string>& args, int device, Shard shard);
// `--devices 0,2,3` or `all` (then `available` devices, 0..available-1); throws Error for an
// empty, malformed, repeated or absent ordinal.
std::vector<int> parse_devices(const std::string& text, int available);

// "41s", "2m05s", "1h02m": a duration for progress lines.
std::string duration_text(double seconds);
// A tune's line per finished M bucket: who ran it (device, shard), how many of this job's
// buckets are done, the time since the job began and, from the mean time per bucket so far,
// about how long the rest will take.
std::string bucket_line(const std::string& who, size_t done, size_t total, const std::string& bucket,
                        double elapsed_seconds);

}  // namespace i8g

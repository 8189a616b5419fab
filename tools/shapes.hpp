// Target shapes: "NxK" on the command line, or a shapes file of one "[name] NxK" per line
// ('#' starts a comment). Pure text in, structs out.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace i8g {

struct NamedShape {
  std::string name;  // may be empty
  int64_t n = 0;
  int64_t k = 0;
};

NamedShape parse_shape(const std::string& text);               // "2560x4096"; throws Error
std::vector<NamedShape> parse_shapes_file(const std::string& text);  // throws Error naming the line
std::vector<int64_t> parse_m_list(const std::string& text);    // "1,16,256"; throws Error

// `tune --shard I/N`: job I of N independent tuning jobs (0 <= I < N). The work list (on a GPU
// the (shape, M bucket) pairs in shape order, then M order; with --compile-only the candidate
// kernels that pass --filter) is dealt round robin: item j belongs to shard j mod N, so N jobs
// with the same flags cover it exactly once, whatever order they run in.
struct Shard {
  int64_t index = 0, count = 1;
  bool holds(size_t item) const { return int64_t(item % uint64_t(count)) == index; }
};
Shard parse_shard(const std::string& text);  // "I/N"; throws Error

}  // namespace i8g

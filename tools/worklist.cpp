#include "tools/worklist.hpp"

#include <fmt/format.h>

#include <regex>

#include "core/error.hpp"

namespace i8g {

Shard parse_shard(const std::string& text) {
  static const std::regex re(R"(^(\d{1,6})/(\d{1,6})$)");
  std::smatch m;
  const std::string t = text.substr(0, 32);
  if (text.size() > 32 || !std::regex_match(t, m, re))
    throw Error("--shard", fmt::format("'{}' is not I/N (job I of N, counting from 0, e.g. 0/4)", t));
  Shard s{std::stoll(m[1].str()), std::stoll(m[2].str())};
  if (s.count < 1 || s.index >= s.count)
    throw Error("--shard", fmt::format("'{}': I must be at least 0 and less than N (N >= 1)", t));
  return s;
}

std::string duration_text(double seconds) {
  const int64_t s = seconds < 0 ? 0 : int64_t(seconds + 0.5);
  if (s < 60) return fmt::format("{}s", s);
  if (s < 3600) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}h{:02}m", s / 3600, (s % 3600) / 60);
}

std::string bucket_line(const std::string& who, size_t done, size_t total, const std::string& bucket,
                        double elapsed_seconds) {
  const std::string rest = done >= total ? "all done"
                           : done == 0   ? "no estimate yet"
                                         : "about " + duration_text(elapsed_seconds / double(done) * double(total - done)) +
                                               " left";
  return fmt::format("[{}] bucket {}/{} done: {}; {} elapsed, {}", who, done, total, bucket,
                     duration_text(elapsed_seconds), rest);
}

}  // namespace i8g

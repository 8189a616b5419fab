#include "tools/worklist.hpp"

#include <fmt/format.h>

#include <algorithm>
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

std::vector<std::vector<size_t>> shard_buckets(const Shard& shard, size_t shapes, size_t ms) {
  // A shape's candidates are compiled once for all its buckets, and compiling is most of a
  // tune: so whole shapes are dealt when there are enough to go round.
  const bool by_shape = shapes >= uint64_t(shard.count);
  std::vector<std::vector<size_t>> out(shapes);
  for (size_t i = 0, item = 0; i < shapes; ++i)
    for (size_t j = 0; j < ms; ++j)
      if (shard.holds(by_shape ? i : item++)) out[i].push_back(j);
  return out;
}

Shard sub_shard(Shard parent, int64_t k, int64_t n) {
  return Shard{parent.index + parent.count * k, parent.count * n};
}

std::vector<std::string> device_job_args(const std::vector<std::string>& args, int device, Shard shard) {
  std::vector<std::string> out;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    bool dropped = false;
    for (const char* flag : {"--devices", "--device", "--shard"}) {
      const std::string f = flag;
      if (a == f) {
        ++i;  // its value too
        dropped = true;
        break;
      }
      if (a.rfind(f + "=", 0) == 0) {
        dropped = true;
        break;
      }
    }
    if (!dropped) out.push_back(a);
  }
  out.insert(out.end(), {"--device", std::to_string(device), "--shard",
                         fmt::format("{}/{}", shard.index, shard.count)});
  return out;
}

std::vector<int> parse_devices(const std::string& text, int available) {
  std::vector<int> out;
  if (text == "all") {
    if (available < 1) throw Error("--devices", "no CUDA device is available");
    for (int d = 0; d < available; ++d) out.push_back(d);
    return out;
  }
  static const std::regex item(R"(^\d{1,3}$)");
  size_t start = 0;
  while (start <= text.size() && text.size() <= 400) {
    const size_t end = std::min(text.find(',', start), text.size());
    const std::string d = text.substr(start, end - start);
    if (!std::regex_match(d, item))
      throw Error("--devices", fmt::format("'{}' is not a device ordinal (use e.g. 0,1,3 or all)", d.substr(0, 16)));
    const int v = std::stoi(d);
    if (v >= available)
      throw Error("--devices", fmt::format("device {} does not exist ({} CUDA device(s))", v, available));
    for (int seen : out)
      if (seen == v) throw Error("--devices", fmt::format("device {} is named twice", v));
    out.push_back(v);
    start = end + 1;
  }
  if (out.empty()) throw Error("--devices", "no device given (use e.g. 0,1,3 or all)");
  return out;
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

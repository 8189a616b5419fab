#include "core/cpus.hpp"

#include <sched.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <thread>

namespace i8g {
namespace {

std::optional<long long> parse_ll(const std::string& s) {
  std::istringstream in(s);
  long long v = 0;
  if (!(in >> v)) return std::nullopt;
  return v;
}

std::optional<int> ratio_up(long long quota, long long period) {
  if (quota <= 0 || period <= 0) return std::nullopt;
  return int(std::max(1LL, (quota + period - 1) / period));
}

std::string read_all(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// The process's cgroup directories from /proc/self/cgroup: v2 ("0::/path") and v1's cpu
// controller ("N:cpu,cpuacct:/path"); "" where there is none.
struct CgroupDirs {
  std::string v2, v1_cpu;
};
CgroupDirs cgroup_dirs() {
  CgroupDirs d;
  std::istringstream in(read_all("/proc/self/cgroup"));
  for (std::string line; std::getline(in, line);) {
    const size_t a = line.find(':'), b = a == std::string::npos ? a : line.find(':', a + 1);
    if (b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1), path = line.substr(b + 1);
    if (line.rfind("0::", 0) == 0) d.v2 = "/sys/fs/cgroup" + path;
    std::istringstream cs(controllers);
    for (std::string c; std::getline(cs, c, ',');)
      if (c == "cpu") d.v1_cpu = "/sys/fs/cgroup/" + controllers + path;
  }
  return d;
}

}  // namespace

std::optional<int> cgroup_v2_cpu_limit(const std::string& cpu_max) {
  std::istringstream in(cpu_max);
  std::string quota, period;
  if (!(in >> quota >> period) || quota == "max") return std::nullopt;
  const auto q = parse_ll(quota), p = parse_ll(period);
  if (!q || !p) return std::nullopt;
  return ratio_up(*q, *p);
}

std::optional<int> cgroup_v1_cpu_limit(const std::string& quota_us, const std::string& period_us) {
  const auto q = parse_ll(quota_us), p = parse_ll(period_us);
  if (!q || !p) return std::nullopt;
  return ratio_up(*q, *p);
}

int usable_cpus() {
  int n = int(std::max(1u, std::thread::hardware_concurrency()));
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) n = std::max(1, CPU_COUNT(&set));
  std::optional<int> limit;
  const CgroupDirs dirs = cgroup_dirs();
  if (const std::string dir = dirs.v2; !dir.empty()) {
    // The quota of the process's own group and of every group above it: the smallest binds.
    for (std::string d = dir; d.size() >= std::string("/sys/fs/cgroup").size(); d = d.substr(0, d.rfind('/'))) {
      if (const auto l = cgroup_v2_cpu_limit(read_all(d + "/cpu.max")); l) limit = limit ? std::min(*limit, *l) : *l;
      if (d == "/sys/fs/cgroup") break;
    }
  }
  if (!dirs.v1_cpu.empty())
    if (const auto l = cgroup_v1_cpu_limit(read_all(dirs.v1_cpu + "/cpu.cfs_quota_us"),
                                           read_all(dirs.v1_cpu + "/cpu.cfs_period_us"));
        l)
      limit = limit ? std::min(*limit, *l) : *l;
  return limit ? std::max(1, std::min(n, *limit)) : n;
}

}  // namespace i8g

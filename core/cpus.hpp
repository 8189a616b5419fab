// How many CPUs this process may really use: the affinity mask, narrowed by a cgroup CPU quota
// (a container limited to 2 CPUs on a 64-core host gets 2, not 64). For default thread counts.
#pragma once
#include <optional>
#include <string>

namespace i8g {

// The CPU limit a cgroup quota file states, rounded up: cgroup v2 `cpu.max` ("max 100000" or
// "200000 100000") or cgroup v1 `cpu.cfs_quota_us` and `cpu.cfs_period_us` contents ("-1" is no
// limit). Nothing when there is no limit or the text is not understood.
std::optional<int> cgroup_v2_cpu_limit(const std::string& cpu_max);
std::optional<int> cgroup_v1_cpu_limit(const std::string& quota_us, const std::string& period_us);

// min(affinity CPUs, the process's cgroup quota), at least 1.
int usable_cpus();

}  // namespace i8g

// Default thread counts follow the CPUs a container may use, not the host's.
#include <gtest/gtest.h>

#include <thread>

#include "core/cpus.hpp"

namespace i8g {
namespace {

TEST(UsableCpus, CgroupV2QuotaRoundsUpAndMaxMeansNoLimit) {
  EXPECT_EQ(cgroup_v2_cpu_limit("200000 100000\n"), 2);
  EXPECT_EQ(cgroup_v2_cpu_limit("150000 100000"), 2);
  EXPECT_EQ(cgroup_v2_cpu_limit("50000 100000"), 1);
  EXPECT_FALSE(cgroup_v2_cpu_limit("max 100000\n"));
  EXPECT_FALSE(cgroup_v2_cpu_limit(""));
  EXPECT_FALSE(cgroup_v2_cpu_limit("garbage"));
  EXPECT_FALSE(cgroup_v2_cpu_limit("0 100000"));
}

TEST(UsableCpus, CgroupV1QuotaAndMinusOne) {
  EXPECT_EQ(cgroup_v1_cpu_limit("400000\n", "100000\n"), 4);
  EXPECT_FALSE(cgroup_v1_cpu_limit("-1\n", "100000\n"));
  EXPECT_FALSE(cgroup_v1_cpu_limit("", ""));
}

TEST(UsableCpus, AtLeastOneAndNoMoreThanTheHost) {
  const int n = usable_cpus();
  EXPECT_GE(n, 1);
  EXPECT_LE(unsigned(n), std::max(1u, std::thread::hardware_concurrency()));
}

}  // namespace
}  // namespace i8g

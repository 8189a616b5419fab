// The work list across tuning jobs (tools/worklist.hpp): `--shard I/N` parsing, the round-robin
// split being a partition, and the per-bucket progress line.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/error.hpp"
#include "tools/worklist.hpp"

namespace i8g {
namespace {

TEST(Worklist, ShardTextIsIOfNCountingFromZero) {
  const Shard s = parse_shard("2/5");
  EXPECT_EQ(s.index, 2);
  EXPECT_EQ(s.count, 5);
  EXPECT_EQ(parse_shard("0/1").count, 1);
  for (const std::string& bad : std::vector<std::string>{"", "1", "5/5", "6/5", "0/0", "-1/4", "1/-4", "a/4", "1/4/2", " 1/4", "1 / 4",
                                "1/4x", "9999999/99999999", std::string(100, '1') + "/2"}) {
    try {
      parse_shard(bad);
      ADD_FAILURE() << "'" << bad << "' accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("--shard"), std::string::npos) << e.what();
    }
  }
}

TEST(Worklist, TheShardsOfAnyCountCoverEveryItemExactlyOnce) {
  for (int64_t n = 1; n <= 7; ++n)
    for (size_t items : {0u, 1u, 6u, 17u, 60u}) {
      std::vector<int> owners(items, 0);
      std::vector<size_t> sizes(size_t(n), 0);
      for (int64_t i = 0; i < n; ++i)
        for (size_t j = 0; j < items; ++j)
          if (Shard{i, n}.holds(j)) ++owners[j], ++sizes[size_t(i)];
      for (size_t j = 0; j < items; ++j) EXPECT_EQ(owners[j], 1) << "item " << j << " of " << items << ", N = " << n;
      // Round robin: shard sizes differ by at most one (balance for a job array).
      for (size_t a : sizes)
        for (size_t b : sizes) EXPECT_LE(a > b ? a - b : b - a, 1u);
    }
}

TEST(Worklist, GpuSharesCoverEveryBucketOnceAndKeepShapesWholeWhereThereAreEnough) {
  for (int64_t n = 1; n <= 5; ++n)
    for (size_t shapes : {1u, 2u, 3u, 4u, 9u})
      for (size_t ms : {1u, 2u, 5u}) {
        std::vector<std::vector<int>> owners(shapes, std::vector<int>(ms, 0));
        for (int64_t i = 0; i < n; ++i) {
          const auto held = shard_buckets(Shard{i, n}, shapes, ms);
          ASSERT_EQ(held.size(), shapes);
          for (size_t s = 0; s < shapes; ++s) {
            for (size_t j : held[s]) {
              ASSERT_LT(j, ms);
              ++owners[s][j];
            }
            // With at least n shapes a shape is all in one job or none (one compile per shape).
            if (shapes >= size_t(n)) EXPECT_TRUE(held[s].empty() || held[s].size() == ms) << s;
          }
        }
        for (size_t s = 0; s < shapes; ++s)
          for (size_t j = 0; j < ms; ++j)
            EXPECT_EQ(owners[s][j], 1) << "shape " << s << " bucket " << j << ", N = " << n;
      }
  // Fewer shapes than jobs: the buckets of one shape are dealt out (shape 0's M list over 3 jobs).
  EXPECT_EQ(shard_buckets(Shard{1, 3}, 1, 5)[0], (std::vector<size_t>{1, 4}));
  // Enough shapes: shape i goes to job i mod N with all its buckets.
  EXPECT_EQ(shard_buckets(Shard{1, 2}, 4, 2), (std::vector<std::vector<size_t>>{{}, {0, 1}, {}, {0, 1}}));
}

TEST(Worklist, DeviceJobsSplitTheirParentsShareExactlyAndCarryTheirOwnFlags) {
  // Inside an outer job array (shard 1 of 3) and without one, 2 and 4 devices.
  for (const Shard parent : {Shard{0, 1}, Shard{1, 3}})
    for (int64_t n : {1, 2, 4})
      for (size_t j = 0; j < 100; ++j) {
        int owners = 0;
        for (int64_t k = 0; k < n; ++k) owners += sub_shard(parent, k, n).holds(j);
        EXPECT_EQ(owners, parent.holds(j) ? 1 : 0) << "item " << j << ", " << n << " devices";
      }
  const std::vector<std::string> args = {"i8gemm", "tune", "--shapes", "m.shapes", "--devices", "0,1",
                                         "--m=1,16", "--shard=1/3", "--device", "4", "--cache", "c.sqlite"};
  EXPECT_EQ(device_job_args(args, 1, Shard{4, 6}),
            (std::vector<std::string>{"i8gemm", "tune", "--shapes", "m.shapes", "--m=1,16", "--cache", "c.sqlite",
                                      "--device", "1", "--shard", "4/6"}));
  EXPECT_EQ(device_job_args({"i8gemm", "tune", "--devices=all"}, 0, Shard{0, 2}),
            (std::vector<std::string>{"i8gemm", "tune", "--device", "0", "--shard", "0/2"}));
}

TEST(Worklist, DeviceListsNameExistingOrdinalsOnce) {
  EXPECT_EQ(parse_devices("0,2,3", 4), (std::vector<int>{0, 2, 3}));
  EXPECT_EQ(parse_devices("all", 3), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(parse_devices("1", 2), (std::vector<int>{1}));
  for (const auto& [text, available] : std::vector<std::pair<std::string, int>>{
           {"", 4}, {"0,", 4}, {",1", 4}, {"0,0", 4}, {"4", 4}, {"-1", 4}, {"a", 4}, {"0;1", 4}, {"all", 0}, {"0", 0},
           {std::string(500, '1'), 4}}) {
    try {
      parse_devices(text, available);
      ADD_FAILURE() << "'" << text << "' accepted with " << available << " devices";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("--devices"), std::string::npos) << e.what();
    }
  }
}

TEST(Worklist, BucketLinesSayWhoHowFarAndAboutHowLongTheRestTakes) {
  EXPECT_EQ(duration_text(0.4), "0s");
  EXPECT_EQ(duration_text(59.4), "59s");
  EXPECT_EQ(duration_text(125), "2m05s");
  EXPECT_EQ(duration_text(3725), "1h02m");
  EXPECT_EQ(duration_text(-3), "0s");
  EXPECT_EQ(bucket_line("device 1, shard 0/2", 3, 12, "qkv M=256", 90.0),
            "[device 1, shard 0/2] bucket 3/12 done: qkv M=256; 1m30s elapsed, about 4m30s left");
  EXPECT_EQ(bucket_line("device 0", 4, 4, "o_proj M=1", 61.0), "[device 0] bucket 4/4 done: o_proj M=1; 1m01s elapsed, all done");
  EXPECT_EQ(bucket_line("device 0", 0, 4, "x", 5.0), "[device 0] bucket 0/4 done: x; 5s elapsed, no estimate yet");
}

}  // namespace
}  // namespace i8g

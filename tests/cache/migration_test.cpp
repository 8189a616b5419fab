// Schema 1 -> 2: files written before compile options joined the key still open. Read-only they
// are read as they are; read-write they are migrated in place. Their kernels carry no options
// hash, so they are stale and never a hit, and nothing in them is lost.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <atomic>
#include <cstdio>
#include <thread>

#include "cache/cache.hpp"
#include "cache_test_util.hpp"
#include "core/error.hpp"
#include "schema_v1.hpp"

namespace i8g::cache {
namespace {
using namespace testing;

Current now() {
  Current c{"nvrtc 13.0", std::string(64, 'a'), "", ""};
  c.options_hash_by_arch = {{"sm_90a", test_options_hash()}};
  return c;
}

TEST(CacheMigration, AVersionOneFileOpensMigratesAndItsRowsAreStale) {
  TempDir dir;
  const std::string path = dir.file("v1.sqlite");
  const StoredKernel a = make_kernel("a", 1), b = make_kernel("b", 2);
  write_v1_cache(path, {a, b});
  ASSERT_EQ(user_version(path), 1);
  {
    Cache c(path, Cache::Mode::read_write);
    EXPECT_EQ(c.schema_version(), 2);
  }
  EXPECT_EQ(user_version(path), 2);
  Cache c(path, Cache::Mode::read_write);
  const auto rows = c.list_kernels({"", true});
  ASSERT_EQ(rows.size(), 2u);
  for (const StoredKernel* want : {&a, &b}) {
    const StoredKernel& got = rows[want == &a ? 0 : 1];
    EXPECT_EQ(got.key.name, want->key.name);
    EXPECT_EQ(got.key.options_hash, "") << "a version-1 row has no options hash";
    EXPECT_EQ(got.binary, want->binary);
    EXPECT_EQ(got.source, want->source);
    EXPECT_EQ(got.options, want->options);
    EXPECT_EQ(got.report_json, want->report_json);
  }
  // This build's key for the same name misses: the old binary is never served.
  EXPECT_FALSE(c.get_kernel(a.key));
  // The same name, arch, compiler and generator with an options hash is a new entry beside it
  // (the rebuilt table's UNIQUE constraint includes the options hash).
  const int64_t id = c.put_kernel(a);
  EXPECT_NE(id, rows[0].id);
  EXPECT_EQ(c.get_kernel(a.key)->id, id);
  EXPECT_EQ(c.count_stale(now()).kernels, 2);
  StaleCounts removed;
  c.remove_stale(now(), &removed);
  EXPECT_EQ(removed.kernels, 2);
  ASSERT_EQ(c.list_kernels().size(), 1u);
  EXPECT_EQ(c.list_kernels()[0].key, a.key);
}

TEST(CacheMigration, AReadOnlyOpenReadsAVersionOneFileWithoutChangingIt) {
  TempDir dir;
  const std::string path = dir.file("v1.sqlite");
  const StoredKernel a = make_kernel("a", 1);
  write_v1_cache(path, {a});
  const std::string before = read_bytes(path);
  {
    Cache c(path, Cache::Mode::read_only);
    EXPECT_EQ(c.schema_version(), 1);
    const auto rows = c.list_kernels();
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0].key.options_hash, "");
    EXPECT_FALSE(c.get_kernel(a.key));
    BinaryKey v1_key = a.key;
    v1_key.options_hash = "";
    EXPECT_EQ(c.get_kernel(v1_key)->binary, a.binary);  // readable, by its own (stale) key
    EXPECT_EQ(c.count_stale(now()).kernels, 1);
    EXPECT_TRUE(c.audit().hash_mismatch.empty());
  }
  EXPECT_EQ(user_version(path), 1);
  EXPECT_EQ(read_bytes(path), before);
}

TEST(CacheMigration, WritersOpeningAVersionOneFileAtOnceMigrateItOnceAndLoseNothing) {
  TempDir dir;
  const std::string path = dir.file("v1.sqlite");
  write_v1_cache(path, {make_kernel("old", 1)});
  std::vector<std::thread> writers;
  std::atomic<int> failures{0};
  for (int t = 0; t < 8; ++t)
    writers.emplace_back([&, t] {
      try {
        Cache c(path, Cache::Mode::read_write);  // each its own connection, as separate processes have
        c.put_kernel(make_kernel("new" + std::to_string(t), t + 2));
      } catch (const std::exception& e) {
        std::fprintf(stderr, "writer %d: %s\n", t, e.what());
        ++failures;
      }
    });
  for (auto& w : writers) w.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(user_version(path), 2);
  Cache c(path, Cache::Mode::read_only);
  EXPECT_EQ(c.list_kernels().size(), 9u);
  EXPECT_EQ(c.count_stale(now()).kernels, 1);  // only the version-1 row
}

}  // namespace
}  // namespace i8g::cache

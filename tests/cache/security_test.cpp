// What the cache will and will not hand out: device code only, under its exact key, with its
// hash; hostile strings stay data; stale entries miss and go only when asked; file modes.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>

#include <functional>

#include "cache/cache.hpp"
#include "cache_test_util.hpp"
#include "core/error.hpp"

namespace i8g::cache {
namespace {
using namespace testing;

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

StoredKernel with_binary(StoredKernel k, std::vector<uint8_t> b) {
  k.binary = std::move(b);
  k.binary_sha256 = sha256_hex(k.binary.data(), k.binary.size());
  return k;
}

TEST(CacheSecurity, PutKernelRefusesAnythingButADeviceElf) {
  TempDir dir;
  Cache c(dir.file("c.sqlite"), Cache::Mode::read_write);
  const std::string script = "#!/bin/sh\nrm -rf ~\n";
  std::vector<uint8_t> host_elf = fake_device_elf(100, 0, 62);  // EM_X86_64: host code
  std::vector<uint8_t> elf32 = fake_device_elf(100);
  elf32[4] = 1;
  std::vector<uint8_t> bundle(100, 0);
  const std::string magic = "__CLANG_OFFLOAD_BUNDLE__";
  std::copy(magic.begin(), magic.end(), bundle.begin());
  int refused = 0;
  for (const auto& bad : {std::vector<uint8_t>(script.begin(), script.end()), host_elf, elf32, bundle,
                          std::vector<uint8_t>{}}) {
    const std::string msg = error_of([&] { c.put_kernel(with_binary(make_kernel("bad"), bad)); });
    refused += !msg.empty();
    EXPECT_NE(msg.find("device code only"), std::string::npos) << msg;
  }
  EXPECT_TRUE(c.list_kernels().empty());
  EXPECT_NE(c.put_kernel(with_binary(make_kernel("cubin"), fake_device_elf(100, 1, 190))), 0);
  EXPECT_NE(c.put_kernel(with_binary(make_kernel("hsaco"), fake_device_elf(100, 2, 224))), 0);
  std::printf("host/non-device binaries refused: %d/5, device ELFs stored: 2\n", refused);
}

// A row slipped in behind the API (a hostile or foreign writer) is never handed out, even with
// a matching hash, and the audit names it.
TEST(CacheSecurity, HostCodeInsertedBehindTheApiIsNeverReturned) {
  TempDir dir;
  const std::string path = dir.file("c.sqlite");
  Cache c(path, Cache::Mode::read_write);
  const StoredKernel good = make_kernel("k");
  const int64_t id = c.put_kernel(good);
  const std::vector<uint8_t> host = fake_device_elf(300, 0, 62);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* s = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "UPDATE kernels SET binary=?1, binary_sha256=?2, binary_size=?3 WHERE id=?4", -1,
                               &s, nullptr), SQLITE_OK);
  const std::string sha = sha256_hex(host.data(), host.size());
  sqlite3_bind_blob(s, 1, host.data(), int(host.size()), SQLITE_TRANSIENT);
  sqlite3_bind_text(s, 2, sha.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_int64(s, 3, int64_t(host.size()));
  sqlite3_bind_int64(s, 4, id);
  ASSERT_EQ(sqlite3_step(s), SQLITE_DONE);
  sqlite3_finalize(s);
  sqlite3_close(db);
  EXPECT_NE(error_of([&] { c.get_kernel(good.key); }).find("not device code"), std::string::npos);
  EXPECT_NE(error_of([&] { c.get_kernel(id); }).find("fails its content check"), std::string::npos);
  EXPECT_EQ(c.audit().not_device_code, std::vector<int64_t>{id});
  EXPECT_EQ(c.put_kernel(good), id);  // repaired with the real binary, like a hash mismatch
  EXPECT_EQ(c.get_kernel(good.key)->binary, good.binary);
}

TEST(CacheSecurity, OnlyTheExactKeyReachesABinary) {
  TempDir dir;
  Cache c(dir.file("c.sqlite"), Cache::Mode::read_write);
  const StoredKernel k = make_kernel("k");
  c.put_kernel(k);
  int misses = 0;
  for (auto change : std::vector<std::function<void(BinaryKey&)>>{
           [](BinaryKey& b) { b.compiler_version = "nvrtc 12.8"; },   // another toolkit
           [](BinaryKey& b) { b.generator_hash = std::string(64, 'f'); },  // other templates
           [](BinaryKey& b) { b.arch = "sm_80"; },                      // another GPU
           [](BinaryKey& b) { b.arch = "sm_90"; },                      // the a suffix matters
           [](BinaryKey& b) { b.name += "x"; }}) {
    BinaryKey other = k.key;
    change(other);
    misses += !c.get_kernel(other).has_value();
  }
  EXPECT_EQ(misses, 5);
  EXPECT_EQ(c.get_kernel(k.key)->binary, k.binary);
}

TEST(CacheSecurity, HostileStringsAreStoredAsDataAndReadBackIntact) {
  TempDir dir;
  Cache c(dir.file("c.sqlite"), Cache::Mode::read_write);
  const std::vector<std::string> hostile = {"'); DROP TABLE kernels;--", "\" OR 1=1 --", "a'b\"c`d", "%s%n%x",
                                            "x\\'; ATTACH DATABASE '/tmp/evil' AS e;--", "é 漢字 \xF0\x9F\x92\xA5"};
  std::vector<std::pair<BinaryKey, StoredKernel>> put;
  for (size_t i = 0; i < hostile.size(); ++i) {
    StoredKernel k = make_kernel(hostile[i], int(i));
    k.key.compiler_version = hostile[(i + 1) % hostile.size()];
    k.family = k.config = k.source = k.log = hostile[i];
    k.options = {hostile[i], "--x=" + hostile[i]};
    c.put_kernel(k);
    put.emplace_back(k.key, k);
  }
  EXPECT_EQ(c.list_kernels().size(), hostile.size());  // the table is still there
  for (const auto& [key, k] : put) {
    auto got = c.get_kernel(key);
    ASSERT_TRUE(got) << key.name;
    EXPECT_EQ(got->key, key);
    EXPECT_EQ(got->source, k.source);
    EXPECT_EQ(got->options, k.options);
  }
  TuneKey tk = make_tune_key();
  tk.gpu_name = hostile[0];
  c.put_winner(Winner{tk, hostile[1], 1, 1, 2, 2, 0});
  EXPECT_EQ(c.get_winner(tk)->candidate, hostile[1]);
  EXPECT_EQ(c.list_kernels({"DROP", false}).size(), 1u);
  std::printf("hostile strings round-tripped: %zu, tables intact: 3/3\n", hostile.size());
}

TEST(CacheSecurity, StaleEntriesMissAndAreCountedThenRemovedOnlyOnRequest) {
  TempDir dir;
  Cache c(dir.file("c.sqlite"), Cache::Mode::read_write);
  const std::string gen(64, 'a');
  StoredKernel cur = make_kernel("cur"), amd = make_kernel("amd", 1), old_tk = make_kernel("old", 2),
               old_gen = make_kernel("gen", 3);
  amd.key.arch = "gfx90a";
  amd.key.compiler_version = "hiprtc 5.2";
  old_tk.key.compiler_version = "nvrtc 12.4";
  old_gen.key.generator_hash = std::string(64, 'b');
  for (const auto* k : {&cur, &amd, &old_tk, &old_gen}) c.put_kernel(*k);
  TuneKey tk = make_tune_key(), stale_tk = make_tune_key();
  stale_tk.compiler_version = "nvrtc 12.4";
  c.put_winner(Winner{tk, "cur", 1, 1, 2, 2, 0});
  c.put_winner(Winner{stale_tk, "old", 3, 1, 2, 2, 0});
  c.put_timings({Timing{stale_tk, "old", 3, CandidateStatus::ok, "", 1, 1, 1, 1, 1, 1, 0}});
  // This build's key (nvrtc 13.0, generator a...) never reaches the stale binaries.
  BinaryKey probe = old_tk.key;
  probe.compiler_version = "nvrtc 13.0";
  EXPECT_FALSE(c.get_kernel(probe));
  probe = old_gen.key;
  probe.generator_hash = gen;
  EXPECT_FALSE(c.get_kernel(probe));

  Current now{"nvrtc 13.0", gen, "", "", {"hiprtc 5.2"}};
  const StaleCounts would = c.count_stale(now);
  EXPECT_EQ(would.kernels, 2);
  EXPECT_EQ(would.timings, 1);
  EXPECT_EQ(would.winners, 1);
  EXPECT_EQ(c.list_kernels().size(), 4u);  // counting removed nothing
  StaleCounts removed;
  EXPECT_EQ(c.remove_stale(now, &removed), 4);
  EXPECT_EQ(removed.kernels, 2);
  EXPECT_TRUE(c.get_kernel(cur.key));
  EXPECT_TRUE(c.get_kernel(amd.key));  // another current compiler: kept
  EXPECT_TRUE(c.get_winner(tk));
  EXPECT_EQ(c.count_stale(now).total(), 0);
}

// The WAL and its index are made by SQLite beside the file: they must be as narrow as it.
TEST(CacheSecurity, FileWalAndShmAreNotGroupOrWorldWritableUnderUmask000) {
  TempDir dir;
  const mode_t old = umask(0);
  const std::string path = dir.file("m/cache.sqlite");
  {
    Cache c(path, Cache::Mode::read_write);
    c.put_kernel(make_kernel("k"));
    Cache reader(path, Cache::Mode::read_only);
    ASSERT_TRUE(reader.get_kernel(make_key("k")));
    for (const std::string& p : {path, path + "-wal", path + "-shm", dir.file("m")}) {
      struct stat st;
      ASSERT_EQ(stat(p.c_str(), &st), 0) << p;
      EXPECT_EQ(st.st_mode & (S_IWGRP | S_IWOTH), 0u) << p << " mode " << std::oct << st.st_mode;
    }
  }
  umask(old);
}

}  // namespace
}  // namespace i8g::cache

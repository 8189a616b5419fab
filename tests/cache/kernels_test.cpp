// Kernels in the cache: round trip, idempotence, nothing overwritten, keys that miss, audit.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include "cache/cache.hpp"
#include "cache_test_util.hpp"
#include "core/error.hpp"

namespace i8g::cache {
namespace {
using namespace testing;

void expect_same(const StoredKernel& a, const StoredKernel& b, bool blobs = true) {
  EXPECT_EQ(a.key, b.key);
  EXPECT_EQ(a.family, b.family);
  EXPECT_EQ(a.problem_key, b.problem_key);
  EXPECT_EQ(a.config, b.config);
  EXPECT_EQ(a.n, b.n);
  EXPECT_EQ(a.k, b.k);
  EXPECT_EQ(a.entry, b.entry);
  EXPECT_EQ(a.lowered_name, b.lowered_name);
  EXPECT_EQ(a.options, b.options);
  EXPECT_EQ(a.binary_sha256, b.binary_sha256);
  EXPECT_EQ(a.report_json, b.report_json);
  EXPECT_EQ(a.registers, b.registers);
  EXPECT_EQ(a.stack_bytes, b.stack_bytes);
  EXPECT_EQ(a.spill_bytes, b.spill_bytes);
  EXPECT_EQ(a.smem_bytes, b.smem_bytes);
  EXPECT_DOUBLE_EQ(a.occupancy, b.occupancy);
  EXPECT_DOUBLE_EQ(a.compile_ms, b.compile_ms);
  EXPECT_EQ(a.created_at, b.created_at);
  if (!blobs) return;
  EXPECT_EQ(a.source, b.source);
  EXPECT_EQ(a.binary, b.binary);
  EXPECT_EQ(a.ir, b.ir);
  EXPECT_EQ(a.log, b.log);
  EXPECT_EQ(a.isa, b.isa);
}

TEST(CacheKernels, RoundTripKeepsEveryField) {
  TempDir dir;
  StoredKernel k = make_kernel("i8g_sm90a_simt_dp4a_n2560_k4096_nk_tok_ch_bf16_bm64");
  k.log += std::string("\0after a NUL", 12);
  int64_t id;
  {
    Cache c(dir.file("c.sqlite"), Cache::Mode::read_write);
    id = c.put_kernel(k);
    EXPECT_GT(id, 0);
  }
  Cache c(dir.file("c.sqlite"), Cache::Mode::read_only);
  EXPECT_EQ(c.schema_version(), Cache::kSchemaVersion);
  auto by_key = c.get_kernel(k.key);
  ASSERT_TRUE(by_key);
  EXPECT_EQ(by_key->id, id);
  EXPECT_EQ(by_key->binary_size, int64_t(k.binary.size()));
  expect_same(*by_key, k);
  auto by_id = c.get_kernel(id);
  ASSERT_TRUE(by_id);
  expect_same(*by_id, k);
  EXPECT_FALSE(c.get_kernel(id + 1));
}

TEST(CacheKernels, ListWithoutBlobsLeavesThemEmptyAndFiltersByRegex) {
  TempDir dir;
  Cache c(dir.file("c.sqlite"), Cache::Mode::read_write);
  c.put_kernel(make_kernel("i8g_sm90a_simt_dp4a_bm64", 1));
  c.put_kernel(make_kernel("i8g_sm90a_mma_sync_bm128", 2));
  c.put_kernel(make_kernel("i8g_sm90a_mma_sync_bm64", 3));
  auto all = c.list_kernels();
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].key.name, "i8g_sm90a_mma_sync_bm128");  // sorted by name
  for (const auto& k : all) {
    EXPECT_TRUE(k.binary.empty() && k.source.empty() && k.ir.empty() && k.log.empty() && k.isa.empty());
    EXPECT_GT(k.binary_size, 0);
    EXPECT_EQ(k.registers, 40);
  }
  auto mma = c.list_kernels({"mma_sync_bm\\d+$", true});
  ASSERT_EQ(mma.size(), 2u);
  expect_same(mma[1], make_kernel("i8g_sm90a_mma_sync_bm64", 3));
  EXPECT_THROW(c.list_kernels({"(", false}), Error);
}

TEST(CacheKernels, PutIsIdempotent) {
  TempDir dir;
  Cache c(dir.file("c.sqlite"), Cache::Mode::read_write);
  StoredKernel k = make_kernel("k");
  int64_t id = c.put_kernel(k);
  EXPECT_EQ(c.put_kernel(k), id);
  EXPECT_EQ(c.put_kernel(k), id);
  EXPECT_EQ(c.list_kernels().size(), 1u);
}

TEST(CacheKernels, DifferentContentUnderSameKeyKeepsTheOld) {
  TempDir dir;
  Cache c(dir.file("c.sqlite"), Cache::Mode::read_write);
  StoredKernel old_k = make_kernel("k", 1);
  StoredKernel new_k = make_kernel("k", 2);
  new_k.source = "different";
  ASSERT_NE(old_k.binary_sha256, new_k.binary_sha256);
  int64_t id = c.put_kernel(old_k);
  EXPECT_EQ(c.put_kernel(new_k), id);
  auto got = c.get_kernel(old_k.key);
  ASSERT_TRUE(got);
  expect_same(*got, old_k);
  EXPECT_EQ(c.list_kernels().size(), 1u);
}

TEST(CacheKernels, PutRejectsAWrongHash) {
  TempDir dir;
  Cache c(dir.file("c.sqlite"), Cache::Mode::read_write);
  StoredKernel k = make_kernel("k");
  k.binary_sha256 = sha256_hex("x", 1);
  EXPECT_THROW(c.put_kernel(k), Error);
  EXPECT_TRUE(c.list_kernels().empty());
}

TEST(CacheKernels, ChangingAnyKeyPartMisses) {
  TempDir dir;
  Cache c(dir.file("c.sqlite"), Cache::Mode::read_write);
  StoredKernel k = make_kernel("k");
  c.put_kernel(k);
  ASSERT_TRUE(c.get_kernel(k.key));
  BinaryKey other = k.key;
  other.compiler_version = "nvrtc 13.1";
  EXPECT_FALSE(c.get_kernel(other));
  other = k.key;
  other.generator_hash = std::string(64, 'b');
  EXPECT_FALSE(c.get_kernel(other));
  other = k.key;
  other.arch = "sm_90";  // the a suffix matters
  EXPECT_FALSE(c.get_kernel(other));
  other = k.key;
  other.name += "_s2";
  EXPECT_FALSE(c.get_kernel(other));
  other = k.key;
  other.options_hash = options_hash({"--gpu-architecture=sm_90a", "-O2"});
  EXPECT_FALSE(c.get_kernel(other));
}

TEST(CacheKernels, SameNameWithOtherCompileOptionsIsAMissAndASeparateEntry) {
  TempDir dir;
  Cache c(dir.file("c.sqlite"), Cache::Mode::read_write);
  StoredKernel a = make_kernel("k", 1), b = make_kernel("k", 2);
  a.key.options_hash = options_hash({"--gpu-architecture=sm_90a", "--std=c++17"});
  b.key.options_hash = options_hash({"--gpu-architecture=sm_90a", "--std=c++17", "-ftz=true"});
  const int64_t ia = c.put_kernel(a);
  EXPECT_FALSE(c.get_kernel(b.key)) << "a release that adds a flag must not be served the old binary";
  const int64_t ib = c.put_kernel(b);
  EXPECT_NE(ia, ib);
  expect_same(*c.get_kernel(a.key), a);
  expect_same(*c.get_kernel(b.key), b);
}

TEST(CacheKernels, OptionsHashSeparatesOptionsAndIsNeverEmpty) {
  EXPECT_NE(options_hash({"a b"}), options_hash({"a", "b"}));
  EXPECT_NE(options_hash({"ab"}), options_hash({"a", "b"}));
  EXPECT_NE(options_hash({}), options_hash({""}));
  EXPECT_EQ(options_hash({}).size(), 64u);
}

TEST(CacheKernels, PutRefusesAKeyWithoutAnOptionsHash) {
  TempDir dir;
  Cache c(dir.file("c.sqlite"), Cache::Mode::read_write);
  StoredKernel k = make_kernel("k");
  k.key.options_hash.clear();  // what a row of schema 1 reads as: never written anew
  EXPECT_THROW(c.put_kernel(k), Error);
  EXPECT_TRUE(c.list_kernels().empty());
}

TEST(CacheKernels, SameNameUnderAnotherKeyIsASeparateEntry) {
  TempDir dir;
  Cache c(dir.file("c.sqlite"), Cache::Mode::read_write);
  StoredKernel a = make_kernel("k", 1);
  StoredKernel b = make_kernel("k", 2);
  b.key.compiler_version = "nvrtc 13.1";
  int64_t ia = c.put_kernel(a), ib = c.put_kernel(b);
  EXPECT_NE(ia, ib);
  expect_same(*c.get_kernel(b.key), b);
  expect_same(*c.get_kernel(a.key), a);
}

TEST(CacheKernels, EmptyBinaryIsRefusedAndEmptyTextsRoundTrip) {
  TempDir dir;
  Cache c(dir.file("c.sqlite"), Cache::Mode::read_write);
  StoredKernel k;
  k.key = make_key("empty");
  k.binary_sha256 = sha256_hex(nullptr, 0);
  EXPECT_EQ(k.binary_sha256, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_THROW(c.put_kernel(k), Error);  // no bytes: not device code
  k.binary = fake_device_elf(0);
  k.binary_sha256 = sha256_hex(k.binary.data(), k.binary.size());
  c.put_kernel(k);
  auto got = c.get_kernel(k.key);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->binary.size(), 64u);
  EXPECT_TRUE(got->options.empty());
  EXPECT_EQ(got->registers, -1);
  EXPECT_GT(got->created_at, 0);  // filled in
}

TEST(CacheKernels, ReadOnlyHandleRefusesWrites) {
  TempDir dir;
  { Cache c(dir.file("c.sqlite"), Cache::Mode::read_write); }
  Cache c(dir.file("c.sqlite"), Cache::Mode::read_only);
  EXPECT_THROW(c.put_kernel(make_kernel("k")), Error);
  EXPECT_THROW(c.put_winner(Winner{make_tune_key(), "k"}), Error);
}

// Flips one byte of a stored binary behind the cache's back, with a raw UPDATE.
void corrupt_binary(const std::string& path, int64_t id) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr), SQLITE_OK);
  sqlite3_stmt* get = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT binary FROM kernels WHERE id = ?", -1, &get, nullptr), SQLITE_OK);
  sqlite3_bind_int64(get, 1, id);
  ASSERT_EQ(sqlite3_step(get), SQLITE_ROW);
  auto* p = static_cast<const uint8_t*>(sqlite3_column_blob(get, 0));
  std::vector<uint8_t> bin(p, p + sqlite3_column_bytes(get, 0));
  sqlite3_finalize(get);
  ASSERT_GT(bin.size(), 5u);
  bin[5] ^= 0x01;
  sqlite3_stmt* put = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "UPDATE kernels SET binary = ? WHERE id = ?", -1, &put, nullptr), SQLITE_OK);
  sqlite3_bind_blob(put, 1, bin.data(), int(bin.size()), SQLITE_TRANSIENT);
  sqlite3_bind_int64(put, 2, id);
  EXPECT_EQ(sqlite3_step(put), SQLITE_DONE);
  EXPECT_EQ(sqlite3_changes(db), 1);
  sqlite3_finalize(put);
  sqlite3_close(db);
}

TEST(CacheKernels, AuditDetectsAFlippedByteAndGetRefusesIt) {
  TempDir dir;
  std::string path = dir.file("c.sqlite");
  Cache c(path, Cache::Mode::read_write);
  StoredKernel a = make_kernel("a", 1), b = make_kernel("b", 2);
  c.put_kernel(a);
  int64_t ib = c.put_kernel(b);
  auto clean = c.audit();
  EXPECT_EQ(clean.integrity, "ok");
  EXPECT_TRUE(clean.hash_mismatch.empty());

  corrupt_binary(path, ib);
  auto got = c.list_kernels({"^b$", true});
  ASSERT_EQ(got.size(), 1u);
  ASSERT_EQ(got[0].binary.size(), b.binary.size());
  EXPECT_NE(got[0].binary, b.binary);  // the flip really happened

  auto audit = c.audit();
  EXPECT_EQ(audit.integrity, "ok");
  EXPECT_EQ(audit.hash_mismatch, std::vector<int64_t>{ib});
  EXPECT_THROW(c.get_kernel(b.key), Error);
  EXPECT_TRUE(c.get_kernel(a.key));
  // Putting the good binary again repairs the damaged entry under the same id.
  EXPECT_EQ(c.put_kernel(b), ib);
  expect_same(*c.get_kernel(b.key), b);
  EXPECT_TRUE(c.audit().hash_mismatch.empty());
}

TEST(CacheKernels, RemoveStaleDropsOtherCompilersAndGenerators) {
  TempDir dir;
  Cache c(dir.file("c.sqlite"), Cache::Mode::read_write);
  StoredKernel cur = make_kernel("cur"), old_cc = make_kernel("old_cc"), old_gen = make_kernel("old_gen");
  old_cc.key.compiler_version = "nvrtc 12.8";
  old_gen.key.generator_hash = std::string(64, 'f');
  c.put_kernel(cur);
  c.put_kernel(old_cc);
  c.put_kernel(old_gen);
  EXPECT_THROW(c.remove_stale("", ""), Error);
  EXPECT_EQ(c.remove_stale(cur.key.compiler_version, cur.key.generator_hash), 2);
  auto left = c.list_kernels();
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left[0].key.name, "cur");
  EXPECT_EQ(c.remove_stale(cur.key.compiler_version, cur.key.generator_hash), 0);
}

TEST(CacheKernels, RemoveStaleDropsOtherCompileOptionsAndUnlistedArchs) {
  TempDir dir;
  Cache c(dir.file("c.sqlite"), Cache::Mode::read_write);
  StoredKernel cur = make_kernel("cur"), other_opts = make_kernel("other_opts", 1), sm80 = make_kernel("sm80", 2),
               unknown = make_kernel("unknown", 3);
  other_opts.key.options_hash = std::string(64, 'd');
  sm80.key.arch = "sm_80";
  sm80.key.options_hash = std::string(64, 'e');
  unknown.key.arch = "sm_99";
  for (const auto* k : {&cur, &other_opts, &sm80, &unknown}) c.put_kernel(*k);
  Current now{cur.key.compiler_version, cur.key.generator_hash, "", ""};
  EXPECT_EQ(c.count_stale(now).kernels, 0) << "no options map: not a criterion";
  now.options_hash_by_arch = {{"sm_90a", test_options_hash()}, {"sm_80", std::string(64, 'e')}};
  EXPECT_EQ(c.count_stale(now).kernels, 2);
  StaleCounts removed;
  c.remove_stale(now, &removed);
  EXPECT_EQ(removed.kernels, 2);
  std::vector<std::string> left;
  for (const auto& k : c.list_kernels()) left.push_back(k.key.name);
  EXPECT_EQ(left, (std::vector<std::string>{"cur", "sm80"}));
}

TEST(CacheKernels, KeysPrintThemselves) {
  EXPECT_EQ(make_key("k").to_string(), "k [sm_90a, nvrtc 13.0, gen aaaaaaaaaaaa, opts cccccccccccc]");
  EXPECT_NE(make_tune_key().to_string().find("gpu='NVIDIA H200'"), std::string::npos);
}

TEST(CacheKernels, Sha256MatchesAKnownVector) {
  EXPECT_EQ(sha256_hex("abc", 3), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

}  // namespace
}  // namespace i8g::cache

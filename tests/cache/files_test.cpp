// The cache file itself: where it lives, how it is created, and what it refuses to touch.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

#include "cache/cache.hpp"
#include "cache_test_util.hpp"
#include "core/error.hpp"
#include "core/options.hpp"
#include "tests/support/read_only.hpp"

namespace i8g::cache {
namespace {
using namespace testing;

TEST(CacheFiles, DefaultPathHonoursEnvironmentInOrder) {
  auto path_with = [](const char* own, const char* xdg, const char* home) {
    Options o;
    o.cache = own, o.xdg_cache_home = xdg, o.home = home;
    ScopedOptions scope(o);
    return Cache::default_path();
  };
  EXPECT_EQ(path_with("", "", "/home/u"), "/home/u/.cache/i8gemm/cache.sqlite");
  EXPECT_EQ(path_with("", "/xdg", "/home/u"), "/xdg/i8gemm/cache.sqlite");
  EXPECT_EQ(path_with("/elsewhere/my.sqlite", "/xdg", "/home/u"), "/elsewhere/my.sqlite");
  EXPECT_EQ(path_with("", "relative", "/home/u"), "/home/u/.cache/i8gemm/cache.sqlite");  // XDG must be absolute
  EXPECT_THROW(path_with("", "", ""), Error);
}

TEST(CacheFiles, NewFileAndDirectoriesAreNotGroupOrWorldWritable) {
  TempDir dir;
  mode_t old_mask = umask(0);  // the most permissive umask: the cache must narrow it itself
  std::string path = dir.file("a/b/cache.sqlite");
  {
    Cache c(path, Cache::Mode::read_write);
    c.put_kernel(make_kernel("k"));
  }
  umask(old_mask);
  for (const std::string& p : {path, dir.file("a/b"), dir.file("a")}) {
    struct stat st;
    ASSERT_EQ(stat(p.c_str(), &st), 0) << p;
    EXPECT_EQ(st.st_mode & (S_IWGRP | S_IWOTH), 0u) << p;
  }
  // Nothing left behind from building the file under a temporary name.
  std::string listing;
  for (const char* suffix : {"-wal", "-shm"}) EXPECT_FALSE(exists(path + suffix)) << suffix;
}

TEST(CacheFiles, GarbageFileIsRefusedAndLeftUnchanged) {
  TempDir dir;
  std::string path = dir.file("notes.txt");
  std::string bytes = "these are my notes, not a database\n";
  for (int i = 0; i < 200; ++i) bytes += char(i);
  write_bytes(path, bytes);
  for (auto mode : {Cache::Mode::read_write, Cache::Mode::read_only}) {
    try {
      Cache c(path, mode);
      ADD_FAILURE() << "opened a garbage file";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("is not an i8gemm cache (not a SQLite database)"), std::string::npos)
          << e.what();
    }
    EXPECT_EQ(read_bytes(path), bytes);
    EXPECT_FALSE(exists(path + "-wal"));
  }
}

TEST(CacheFiles, AnotherApplicationsDatabaseIsRefusedAndLeftUnchanged) {
  TempDir dir;
  std::string path = dir.file("other.sqlite");
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "CREATE TABLE notes(t TEXT); INSERT INTO notes VALUES('hi');", nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  std::string bytes = read_bytes(path);
  EXPECT_THROW(Cache(path, Cache::Mode::read_write), Error);
  EXPECT_THROW(Cache(path, Cache::Mode::read_only), Error);
  EXPECT_EQ(read_bytes(path), bytes);
}

TEST(CacheFiles, NewerSchemaIsRefusedWithBothVersions) {
  TempDir dir;
  std::string path = dir.file("c.sqlite");
  { Cache c(path, Cache::Mode::read_write); }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "PRAGMA user_version = 9", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  try {
    Cache c(path, Cache::Mode::read_only);
    ADD_FAILURE() << "opened a newer schema";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("was written by a newer i8gemm (schema 9, this build reads 2)"),
              std::string::npos)
        << e.what();
  }
}

// A refused file is left as found, sidecars included: a read-only handle cannot checkpoint, so
// SQLite would leave the -wal and -shm it created beside a WAL-mode database it then refuses
// (issue 14, item 9). Both modes, another application's database and a newer schema; a -wal
// that was already there (someone else's) stays.
TEST(CacheFiles, ARefusedDatabaseGetsNoWalOrShmBesideIt) {
  TempDir dir;
  auto exists = [](const std::string& p) { return access(p.c_str(), F_OK) == 0; };
  const std::string other = dir.file("other.sqlite");
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(other.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "PRAGMA journal_mode = WAL; CREATE TABLE notes(t TEXT);", nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  ASSERT_FALSE(exists(other + "-wal"));
  const std::string newer = dir.file("newer.sqlite");
  { Cache c(newer, Cache::Mode::read_write); }
  ASSERT_EQ(sqlite3_open(newer.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "PRAGMA user_version = 9", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  ASSERT_FALSE(exists(newer + "-wal"));
  for (const std::string& path : {other, newer})
    for (Cache::Mode mode : {Cache::Mode::read_only, Cache::Mode::read_write}) {
      const std::string bytes = read_bytes(path);
      EXPECT_THROW(Cache(path, mode), Error) << path;
      EXPECT_FALSE(exists(path + "-wal")) << path;
      EXPECT_FALSE(exists(path + "-shm")) << path;
      EXPECT_EQ(read_bytes(path), bytes) << path;
    }
  // Sidecars that were there before the open are not this open's to remove.
  write_bytes(other + "-wal", "");
  EXPECT_THROW(Cache(other, Cache::Mode::read_only), Error);
  EXPECT_TRUE(exists(other + "-wal"));
}

TEST(CacheFiles, TruncatedDatabaseFailsOrAuditsAndIsLeftUnchanged) {
  TempDir dir;
  std::string path = dir.file("c.sqlite");
  {
    Cache c(path, Cache::Mode::read_write);
    for (int i = 0; i < 40; ++i) c.put_kernel(make_kernel("k" + std::to_string(i), i, 20000));
  }
  std::string whole = read_bytes(path);
  ASSERT_GT(whole.size(), 200000u);
  for (size_t keep : {whole.size() / 2, size_t(4096 + 100), size_t(60)}) {
    std::string cut = whole.substr(0, keep);
    write_bytes(path, cut);
    for (auto mode : {Cache::Mode::read_only, Cache::Mode::read_write}) {
      bool noticed = false;
      try {
        Cache c(path, mode);
        auto audit = c.audit();
        noticed = audit.integrity != "ok" || !audit.hash_mismatch.empty();
        if (!noticed) c.list_kernels({"", true});  // must throw if the audit saw nothing
      } catch (const Error& e) {
        noticed = true;
      }
      EXPECT_TRUE(noticed) << "kept " << keep << " bytes";
      EXPECT_EQ(read_bytes(path), cut) << "kept " << keep << " bytes";
    }
  }
}

TEST(CacheFiles, ReadOnlyOnAMissingFileFailsAndCreatesNothing) {
  TempDir dir;
  std::string path = dir.file("sub/c.sqlite");
  EXPECT_THROW(Cache(path, Cache::Mode::read_only), Error);
  EXPECT_FALSE(exists(path));
  EXPECT_FALSE(exists(dir.file("sub")));
}

TEST(CacheFiles, ReadOnlyOpenReadsWhatAWriterStored) {
  TempDir dir;
  std::string path = dir.file("c.sqlite");
  Cache writer(path, Cache::Mode::read_write);
  writer.put_kernel(make_kernel("k"));
  Cache reader(path, Cache::Mode::read_only);  // while the writer is still open (WAL)
  EXPECT_TRUE(reader.get_kernel(make_key("k")));
  writer.put_kernel(make_kernel("k2"));
  EXPECT_TRUE(reader.get_kernel(make_key("k2")));
}

TEST(CacheFiles, ReadOnlyOpenOfAClosedCacheWorks) {
  TempDir dir;
  std::string path = dir.file("c.sqlite");
  { Cache(path, Cache::Mode::read_write).put_kernel(make_kernel("k")); }
  std::string bytes = read_bytes(path);
  {
    Cache reader(path, Cache::Mode::read_only);
    EXPECT_EQ(reader.list_kernels().size(), 1u);
    EXPECT_EQ(reader.audit().integrity, "ok");
  }
  EXPECT_EQ(read_bytes(path), bytes);
}

TEST(CacheFiles, EmptyExistingFileBecomesACacheOnlyWhenWritable) {
  TempDir dir;
  std::string path = dir.file("c.sqlite");
  write_bytes(path, "");
  EXPECT_THROW(Cache(path, Cache::Mode::read_only), Error);
  EXPECT_EQ(read_bytes(path), "");
  Cache c(path, Cache::Mode::read_write);
  EXPECT_EQ(c.schema_version(), Cache::kSchemaVersion);
  c.put_kernel(make_kernel("k"));
  EXPECT_EQ(c.list_kernels().size(), 1u);
}

TEST(CacheFiles, WriteProtectedFileOpensReadOnlyButNotReadWrite) {
  if (geteuid() == 0) GTEST_SKIP() << "root ignores file permissions";
  TempDir dir;
  std::string path = dir.file("c.sqlite");
  { Cache(path, Cache::Mode::read_write).put_kernel(make_kernel("k")); }
  ASSERT_EQ(chmod(path.c_str(), 0444), 0);
  EXPECT_THROW(Cache(path, Cache::Mode::read_write), Error);
  Cache c(path, Cache::Mode::read_only);
  EXPECT_TRUE(c.get_kernel(make_key("k")));
}

// A tuned cache shipped where its reader cannot write (container image, another user's files, a
// read-only mount): WAL mode needs a -shm index the reader cannot create, so the file is read
// on its own (immutable) when nothing is pending in a -wal; nothing is created beside it.
TEST(CacheFiles, ACacheInADirectoryTheReaderCannotWriteOpensReadOnly) {
  TempDir dir;
  const std::string path = dir.file("c.sqlite");
  { Cache(path, Cache::Mode::read_write).put_kernel(make_kernel("k")); }
  ASSERT_FALSE(exists(path + "-wal")) << "a clean close folds the log in";
  const std::string failed = testsupport::as_read_only_user(dir.path(), path, [&]() -> std::string {
    Cache c(path, Cache::Mode::read_only);
    if (!c.get_kernel(make_key("k"))) return "the kernel is not found";
    if (c.list_kernels().size() != 1) return "list_kernels() is not the one kernel";
    return "";
  });
  EXPECT_EQ(failed, "");
  EXPECT_FALSE(exists(path + "-shm"));
  EXPECT_FALSE(exists(path + "-wal"));
}

TEST(CacheFiles, AnUnreadableWriteAheadLogIsNamedNotIgnored) {
  TempDir dir;
  const std::string path = dir.file("c.sqlite");
  { Cache(path, Cache::Mode::read_write).put_kernel(make_kernel("k")); }
  write_bytes(path + "-wal", std::string(64, '\1'));  // pending writes the reader cannot fold in
  const std::string failed = testsupport::as_read_only_user(dir.path(), path, [&]() -> std::string {
    try {
      Cache c(path, Cache::Mode::read_only);
    } catch (const Error& e) {
      return std::string(e.what()).find("write-ahead log") != std::string::npos ? "" : e.what();
    }
    return "opened although a -wal it cannot read is pending";
  });
  EXPECT_EQ(failed, "");
}

// ssh's rule for keys: a cache other users could write (the file, or its directory without the
// sticky bit) is named as such; the owner's own files in the owner's directory pass.
TEST(CacheFiles, SharedWriteAccessIsNamed) {
  TempDir dir;
  const std::string path = dir.file("c.sqlite");
  { Cache(path, Cache::Mode::read_write).put_kernel(make_kernel("k")); }
  EXPECT_EQ(Cache::shared_write_reason(path), "");
  ASSERT_EQ(chmod(path.c_str(), 0666), 0);
  EXPECT_NE(Cache::shared_write_reason(path).find("can be written by other users (mode 0666)"), std::string::npos);
  ASSERT_EQ(chmod(path.c_str(), 0644), 0);
  ASSERT_EQ(chmod(dir.path().c_str(), 0777), 0);
  EXPECT_NE(Cache::shared_write_reason(path).find("directory other users can write"), std::string::npos);
  ASSERT_EQ(chmod(dir.path().c_str(), 01777), 0);
  EXPECT_EQ(Cache::shared_write_reason(path), "") << "a sticky directory (like /tmp) is accepted";
  ASSERT_EQ(chmod(dir.path().c_str(), 0700), 0);
}

TEST(CacheFiles, DirectoryInsteadOfAFileIsRefused) {
  TempDir dir;
  EXPECT_THROW(Cache(dir.path(), Cache::Mode::read_write), Error);
}

}  // namespace
}  // namespace i8g::cache

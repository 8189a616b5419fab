// Opening the cache file: where it lives, creating it safely, refusing anything that is not an
// i8gemm cache of a schema this build reads, and the schema itself.
#include <fcntl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <random>

#include "cache/cache_impl.hpp"
#include "core/error.hpp"
#include "core/options.hpp"

namespace i8g::cache {
namespace {

// PRAGMA application_id: "i8ge". Marks the file as ours, so we never adopt another app's DB.
constexpr int kApplicationId = 0x69386765;

// Big columns come last in each row: a listing that stops before them never reads their
// overflow pages. STRICT: every column keeps the type it is declared with. options_hash
// defaults to '' only for a writer of schema 1 that still has the file open across a
// migration: its rows then match no current options and stay stale, never a wrong hit.
constexpr const char* kKernelsColumns = R"sql((
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  arch TEXT NOT NULL,
  compiler_version TEXT NOT NULL,
  generator_hash TEXT NOT NULL,
  options_hash TEXT NOT NULL DEFAULT '',
  family TEXT NOT NULL,
  problem_key TEXT NOT NULL,
  config TEXT NOT NULL,
  n INTEGER NOT NULL,
  k INTEGER NOT NULL,
  entry TEXT NOT NULL,
  lowered_name TEXT NOT NULL,
  options TEXT NOT NULL CHECK (json_valid(options) AND json_type(options) = 'array'),
  binary_size INTEGER NOT NULL,
  binary_sha256 TEXT NOT NULL CHECK (length(binary_sha256) = 64),
  registers INTEGER NOT NULL,
  stack_bytes INTEGER NOT NULL,
  spill_bytes INTEGER NOT NULL,
  smem_bytes INTEGER NOT NULL,
  occupancy REAL NOT NULL,
  compile_ms REAL NOT NULL,
  created_at INTEGER NOT NULL,
  report_json TEXT NOT NULL CHECK (report_json = '' OR json_valid(report_json)),
  source TEXT NOT NULL,
  ir TEXT NOT NULL,
  log TEXT NOT NULL,
  isa TEXT NOT NULL,
  binary BLOB NOT NULL,
  UNIQUE (name, arch, compiler_version, generator_hash, options_hash)
) STRICT;
)sql";

std::string kernels_table(const char* name) { return std::string("CREATE TABLE ") + name + " " + kKernelsColumns; }

constexpr const char* kTuningTables = R"sql(
CREATE TABLE timings (
  id INTEGER PRIMARY KEY,
  problem_key TEXT NOT NULL,
  m_bucket INTEGER NOT NULL,
  arch TEXT NOT NULL,
  sm_count INTEGER NOT NULL,
  gpu_name TEXT NOT NULL,
  compiler_version TEXT NOT NULL,
  driver_version TEXT NOT NULL,
  generator_hash TEXT NOT NULL,
  candidate TEXT NOT NULL,
  kernel_id INTEGER NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('ok', 'rejected', 'failed')),
  reason TEXT NOT NULL,
  eager_median_us REAL,  -- NULL: not measured (NaN in C++)
  eager_p90_us REAL,
  eager_min_us REAL,
  graph_median_us REAL,
  graph_p90_us REAL,
  graph_min_us REAL,
  created_at INTEGER NOT NULL
) STRICT;
CREATE INDEX timings_by_key ON timings (problem_key, m_bucket, arch, sm_count, gpu_name,
                                        compiler_version, driver_version, generator_hash);
CREATE INDEX timings_by_kernel ON timings (kernel_id);
CREATE TABLE winners (
  id INTEGER PRIMARY KEY,
  problem_key TEXT NOT NULL,
  m_bucket INTEGER NOT NULL,
  arch TEXT NOT NULL,
  sm_count INTEGER NOT NULL,
  gpu_name TEXT NOT NULL,
  compiler_version TEXT NOT NULL,
  driver_version TEXT NOT NULL,
  generator_hash TEXT NOT NULL,
  candidate TEXT NOT NULL,
  kernel_id INTEGER NOT NULL,
  time_us REAL,
  baseline_us REAL,
  speedup REAL,
  created_at INTEGER NOT NULL,
  UNIQUE (problem_key, m_bucket, arch, sm_count, gpu_name, compiler_version, driver_version,
          generator_hash)
) STRICT;
PRAGMA application_id = 1765304165;
PRAGMA user_version = 2;
)sql";
static_assert(Cache::kSchemaVersion == 2, "the schema text spells the version");

// Schema 1 -> 2: the options hash joins the kernels' key. SQLite cannot change a UNIQUE
// constraint in place, so the table is rebuilt (one transaction; every row and id kept). A
// version-1 row gets an empty hash, which no compiler's options hash to: it stays listed, is
// stale, and is never a hit.
constexpr const char* kV1KernelColumns =
    "id, name, arch, compiler_version, generator_hash, family, problem_key, config, n, k, entry, "
    "lowered_name, options, binary_size, binary_sha256, registers, stack_bytes, spill_bytes, "
    "smem_bytes, occupancy, compile_ms, created_at, report_json, source, ir, log, isa, binary";

std::string migration_from_v1() {
  return kernels_table("kernels_v2") + "INSERT INTO kernels_v2 (options_hash, " + kV1KernelColumns + ") SELECT '', " +
         kV1KernelColumns +
         " FROM kernels;\n"
         "DROP TABLE kernels;\n"
         "ALTER TABLE kernels_v2 RENAME TO kernels;\n"
         "PRAGMA user_version = 2;\n";
}

static_assert(kApplicationId == 1765304165, "the schema text spells the application id");

[[noreturn]] void fail_open(const std::string& path, const std::string& why) {
  throw Error(ErrorKind::cache, "i8g::cache::Cache", "cache file " + path + " " + why);
}

std::string errno_text() { return std::strerror(errno); }

// Whether anything (a file, a link) is at `path`.
bool exists(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0;
}

// Bytes in `path`, 0 when it does not exist.
off_t file_size(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 ? st.st_size : 0;
}

// file: URI for `path` opened immutable (SQLite then takes no locks and needs no -shm).
std::string immutable_uri(const std::string& path) {
  std::string uri = "file:";
  for (unsigned char c : path) {
    if (std::isalnum(c) || std::strchr("/-._~", c)) uri += char(c);
    else {
      char hex[4];
      std::snprintf(hex, sizeof hex, "%%%02X", c);
      uri += hex;
    }
  }
  return uri + "?immutable=1";
}

std::string parent_dir(const std::string& path) {
  auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// mkdir -p; new directories are 0755 at most (the umask may narrow them).
void make_dirs(const std::string& dir, const std::string& path) {
  struct stat st;
  if (dir.empty() || stat(dir.c_str(), &st) == 0) {
    if (!dir.empty() && !S_ISDIR(st.st_mode)) fail_open(path, "cannot be created: " + dir + " is not a directory");
    return;
  }
  make_dirs(parent_dir(dir) == dir ? "" : parent_dir(dir), path);
  if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST)
    fail_open(path, "cannot be created: mkdir " + dir + ": " + errno_text());
}

// The first `size` bytes of `path` (fewer when it is shorter); false when it cannot be opened.
bool read_head(const std::string& path, unsigned char* head, size_t size, ssize_t& got) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  got = 0;
  while (got < ssize_t(size)) {
    const ssize_t r = read(fd, head + got, size - size_t(got));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += r;
  }
  close(fd);
  return true;
}

// Reads the first bytes of an existing file; rejects anything that is not SQLite before the
// library gets a chance to touch it. Returns false for an empty file.
bool check_header(const std::string& path) {
  unsigned char head[100];
  ssize_t got = 0;
  if (!read_head(path, head, sizeof head, got)) fail_open(path, "cannot be read: " + errno_text());
  if (got == 0) return false;
  static const char kMagic[16] = "SQLite format 3";  // the 16th byte is the NUL
  if (got < 16 || std::memcmp(head, kMagic, 16) != 0)
    fail_open(path, "is not an i8gemm cache (not a SQLite database)");
  if (got < ssize_t(sizeof head)) fail_open(path, "is truncated (shorter than a SQLite header)");
  return true;
}

struct Identity {
  int64_t application_id = 0, user_version = 0, objects = 0;
};

Identity identify(sql::Db& db) {
  Identity id;
  sql::Stmt a(db, "PRAGMA application_id");
  if (a.step()) id.application_id = a.i64(0);
  sql::Stmt u(db, "PRAGMA user_version");
  if (u.step()) id.user_version = u.i64(0);
  sql::Stmt o(db, "SELECT count(*) FROM sqlite_schema");
  if (o.step()) id.objects = o.i64(0);
  return id;
}

bool is_empty_db(const Identity& id) { return id.objects == 0 && id.application_id == 0 && id.user_version == 0; }

// Creates the schema in an empty database (another process may have just done it).
void initialize(sql::Db& db) {
  sql::WriteTxn txn(db);
  Identity id = identify(db);
  if (id.application_id == kApplicationId) return;  // someone else won the race
  if (!is_empty_db(id)) fail_open(db.path(), "is not an i8gemm cache (a SQLite database of another application)");
  db.exec((kernels_table("kernels") + kTuningTables).c_str());
  txn.commit();
}

void migrate(sql::Db& db) {
  sql::WriteTxn txn(db);
  if (identify(db).user_version != 1) return;  // another process migrated it meanwhile
  db.exec(migration_from_v1().c_str());
  txn.commit();
}

void use_wal(sql::Db& db) {
  if (sql::exec_retrying(db, "PRAGMA journal_mode") != "wal")
    if (sql::exec_retrying(db, "PRAGMA journal_mode=WAL") != "wal")
      fail_open(db.path(), "cannot use WAL mode (a file system without shared memory?)");
}

// A new cache is built under a temporary name and moved into place without replacing anything,
// so no process ever sees a half-made file at `path`.
void create_new(const std::string& path) {
  std::random_device rd;
  std::string tmp = path + ".tmp-" + std::to_string(getpid()) + "-" + std::to_string(rd());
  auto cleanup = [&] {
    for (const char* suffix : {"", "-wal", "-shm", "-journal"}) unlink((tmp + suffix).c_str());
  };
  int fd = open(tmp.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
  if (fd < 0) fail_open(path, "cannot be created: " + tmp + ": " + errno_text());
  close(fd);
  try {
    sql::Db db(tmp, SQLITE_OPEN_READWRITE);
    initialize(db);
    use_wal(db);
  } catch (...) {
    cleanup();
    throw;
  }
  int rc = renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, path.c_str(), RENAME_NOREPLACE);
  if (rc != 0 && (errno == EINVAL || errno == ENOSYS)) {  // no RENAME_NOREPLACE here: link
    rc = link(tmp.c_str(), path.c_str());
  }
  int err = errno;
  cleanup();
  if (rc != 0 && err != EEXIST) fail_open(path, "cannot be created: " + std::string(std::strerror(err)));
}

}  // namespace

void require_writable(Cache::Mode mode, const std::string& path, const char* where) {
  if (mode != Cache::Mode::read_write) throw Error(ErrorKind::cache, where, "cache file " + path + " is open read-only");
}

std::string Cache::default_path() {
  const Options& o = options();
  if (!o.cache.empty()) return o.cache;
  if (!o.xdg_cache_home.empty() && o.xdg_cache_home[0] == '/') return o.xdg_cache_home + "/i8gemm/cache.sqlite";
  if (!o.home.empty()) return o.home + "/.cache/i8gemm/cache.sqlite";
  throw Error(ErrorKind::cache, "i8g::cache::Cache::default_path",
              "no cache location: set I8GEMM_CACHE, XDG_CACHE_HOME or HOME");
}

std::string Cache::not_a_cache_reason(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return "cannot be read: " + errno_text();
  if (!S_ISREG(st.st_mode)) return "is not a regular file";
  unsigned char head[100] = {};
  ssize_t got = 0;
  if (!read_head(path, head, sizeof head, got)) return "cannot be read: " + errno_text();
  if (got < ssize_t(sizeof head) || std::memcmp(head, "SQLite format 3", 16) != 0)
    return "is not a SQLite database";
  // The header's application id: a big-endian 32-bit integer at offset 68.
  const uint32_t app = uint32_t(head[68]) << 24 | uint32_t(head[69]) << 16 | uint32_t(head[70]) << 8 | head[71];
  if (app != uint32_t(kApplicationId)) return "is a SQLite database of another application";
  return "";
}

std::string Cache::shared_write_reason(const std::string& path) {
  auto mode_text = [](mode_t m) {
    char b[8];
    std::snprintf(b, sizeof b, "%04o", unsigned(m & 07777));
    return std::string(b);
  };
  struct stat st;
  if (stat(path.c_str(), &st) == 0 && (st.st_mode & (S_IWGRP | S_IWOTH)))
    return "can be written by other users (mode " + mode_text(st.st_mode) + ")";
  const std::string dir = parent_dir(path);
  if (stat(dir.c_str(), &st) == 0 && (st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX))
    return "is in a directory other users can write (" + dir + ", mode " + mode_text(st.st_mode) + ")";
  return "";
}

Cache::Cache(const std::string& path, Mode mode) : impl_(std::make_unique<Impl>()) {
  if (path.empty()) throw Error(ErrorKind::cache, "i8g::cache::Cache", "empty cache file path");
  impl_->path = path;
  impl_->mode = mode;
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    if (errno != ENOENT) fail_open(path, "cannot be opened: " + errno_text());
    if (mode == Mode::read_only) fail_open(path, "does not exist (opened read-only)");
    make_dirs(parent_dir(path), path);
    create_new(path);
  } else if (!S_ISREG(st.st_mode)) {
    fail_open(path, "is not a regular file");
  }
  bool has_content = check_header(path);
  if (!has_content && mode == Mode::read_only) fail_open(path, "is empty, not an i8gemm cache");
  // A file refused below (another application's, a newer schema, damaged) must be left as found:
  // a read-only handle cannot checkpoint, so SQLite leaves the -wal and -shm it created beside
  // it. Remove the ones this open created, once the handle is closed and if the log is empty.
  const bool had_wal = exists(path + "-wal"), had_shm = exists(path + "-shm");
  try {
    open_checked(path, mode, has_content);
  } catch (...) {
    impl_->db.reset();
    const bool wal_gone = had_wal || !exists(path + "-wal") ||
                          (file_size(path + "-wal") == 0 && unlink((path + "-wal").c_str()) == 0);
    if (!had_shm && wal_gone && exists(path + "-shm")) unlink((path + "-shm").c_str());
    throw;
  }
}

void Cache::open_checked(const std::string& path, Mode mode, bool has_content) {
  int flags = mode == Mode::read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE;
  impl_->db = std::make_unique<sql::Db>(path, flags);  // never SQLITE_OPEN_CREATE
  if (mode == Mode::read_write && sqlite3_db_readonly(impl_->db->handle(), "main") == 1)
    fail_open(path, "is not writable by this user (open it read-only to use it)");
  Identity id;
  try {
    id = identify(*impl_->db);
  } catch (const Error&) {
    const int code = sqlite3_errcode(impl_->db->handle()) & 0xff;
    if (mode == Mode::read_only && (code == SQLITE_READONLY || code == SQLITE_CANTOPEN)) {
      // A WAL-mode cache where this user cannot create the -shm index SQLite reads through (a
      // read-only mount, a directory of another user): the normal deployment of a tuned cache.
      // With no -wal beside it nothing is pending, and the file alone is the whole database.
      if (file_size(path + "-wal") > 0)
        fail_open(path, "has a write-ahead log (" + path + "-wal) this user cannot read through; open the "
                        "cache once where it is writable (e.g. `i8gemm inspect list` as its owner) to fold it in");
      impl_->db = std::make_unique<sql::Db>(immutable_uri(path), SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, path);
      id = identify(*impl_->db);
    } else if (code != SQLITE_CORRUPT && code != SQLITE_NOTADB) {
      throw;
    } else {
      fail_open(path, std::string("is damaged (") + sqlite3_errmsg(impl_->db->handle()) + ")");
    }
  }
  sql::Db& db = *impl_->db;
  if (is_empty_db(id) && mode == Mode::read_write) {
    initialize(db);
    id = identify(db);
  }
  if (id.application_id != kApplicationId)
    fail_open(path, "is not an i8gemm cache (a SQLite database of another application)");
  if (id.user_version > kSchemaVersion)
    fail_open(path, "was written by a newer i8gemm (schema " + std::to_string(id.user_version) +
                        ", this build reads " + std::to_string(kSchemaVersion) + ")");
  if (id.user_version < 1) fail_open(path, "is damaged (no schema version)");
  if (mode == Mode::read_write) {
    use_wal(db);
    db.exec("PRAGMA synchronous = NORMAL");  // WAL + NORMAL: a crash may lose the last write, never corrupts
    if (id.user_version == 1) {
      migrate(db);
      id = identify(db);
    }
  } else if (id.user_version == 1) {
    // A read-only handle cannot migrate: it reads version-1 kernels through a view (temp
    // objects live outside the file) that gives each the empty options hash of a stale row.
    db.exec("CREATE TEMP VIEW kernels AS SELECT *, '' AS options_hash FROM main.kernels");
  }
  impl_->schema = int(id.user_version);
}

Cache::~Cache() = default;

const std::string& Cache::path() const { return impl_->path; }
int Cache::schema_version() const { return impl_->schema; }
Cache::Mode Cache::mode() const { return impl_->mode; }

bool BinaryKey::operator==(const BinaryKey& o) const {
  return name == o.name && arch == o.arch && compiler_version == o.compiler_version &&
         generator_hash == o.generator_hash && options_hash == o.options_hash;
}

bool TuneKey::operator==(const TuneKey& o) const {
  return problem_key == o.problem_key && m_bucket == o.m_bucket && arch == o.arch &&
         sm_count == o.sm_count && gpu_name == o.gpu_name && compiler_version == o.compiler_version &&
         driver_version == o.driver_version && generator_hash == o.generator_hash;
}

std::string BinaryKey::to_string() const {
  return name + " [" + arch + ", " + compiler_version + ", gen " + generator_hash.substr(0, 12) + ", opts " +
         (options_hash.empty() ? std::string("none") : options_hash.substr(0, 12)) + "]";
}

std::string tune_key_mismatch(const TuneKey& have, const TuneKey& want) {
  if (have.problem_key != want.problem_key) return "";
  std::string out;
  auto differ = [&](bool same, const char* field, const std::string& a, const std::string& b) {
    if (same) return;
    if (!out.empty()) out += "; ";
    out += std::string(field) + " " + a + " (this one: " + b + ")";
  };
  differ(have.arch == want.arch, "arch", have.arch, want.arch);
  differ(have.sm_count == want.sm_count, "SM count", std::to_string(have.sm_count), std::to_string(want.sm_count));
  differ(have.gpu_name == want.gpu_name, "GPU", "'" + have.gpu_name + "'", "'" + want.gpu_name + "'");
  differ(have.compiler_version == want.compiler_version, "NVRTC", "'" + have.compiler_version + "'",
         "'" + want.compiler_version + "'");
  differ(have.driver_version == want.driver_version, "driver", have.driver_version, want.driver_version);
  differ(have.generator_hash == want.generator_hash, "generator", have.generator_hash.substr(0, 12),
         want.generator_hash.substr(0, 12));
  return out;
}

std::string TuneKey::to_string() const {
  return problem_key + " m_bucket=" + std::to_string(m_bucket) + " arch=" + arch +
         " sm_count=" + std::to_string(sm_count) + " gpu='" + gpu_name + "' compiler='" +
         compiler_version + "' driver=" + driver_version + " gen=" + generator_hash.substr(0, 12);
}

std::ostream& operator<<(std::ostream& os, const BinaryKey& k) { return os << k.to_string(); }
std::ostream& operator<<(std::ostream& os, const TuneKey& k) { return os << k.to_string(); }

}  // namespace i8g::cache

// The cache schema as version 1 wrote it (i8gemm before compile options joined the key), kept
// verbatim so that tests can make the files older builds left behind.
#pragma once
#include <sqlite3.h>

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "cache/cache.hpp"

namespace i8g::cache::testing {

inline constexpr const char* kSchemaV1 = R"sql(
CREATE TABLE kernels (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  arch TEXT NOT NULL,
  compiler_version TEXT NOT NULL,
  generator_hash TEXT NOT NULL,
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
  UNIQUE (name, arch, compiler_version, generator_hash)
) STRICT;
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
PRAGMA user_version = 1;
)sql";

// A cache file as a version-1 build leaves it: that schema, and `kernels` stored as it stored
// them (no options hash; their key's options_hash is ignored).
inline void write_v1_cache(const std::string& path, const std::vector<StoredKernel>& kernels) {
  sqlite3* db = nullptr;
  auto check = [&](int rc, const char* what) {
    if (rc != SQLITE_OK && rc != SQLITE_DONE) throw std::runtime_error(std::string(what) + ": " + sqlite3_errmsg(db));
  };
  check(sqlite3_open(path.c_str(), &db), "open");
  check(sqlite3_exec(db, kSchemaV1, nullptr, nullptr, nullptr), "schema");
  for (const StoredKernel& k : kernels) {
    sqlite3_stmt* s = nullptr;
    check(sqlite3_prepare_v2(db,
                             "INSERT INTO kernels (name, arch, compiler_version, generator_hash, family, problem_key, "
                             "config, n, k, entry, lowered_name, options, binary_size, binary_sha256, registers, "
                             "stack_bytes, spill_bytes, smem_bytes, occupancy, compile_ms, created_at, report_json, "
                             "source, ir, log, isa, binary) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                             -1, &s, nullptr),
          "prepare");
    int i = 0;
    auto text = [&](const std::string& v) { sqlite3_bind_text(s, ++i, v.c_str(), int(v.size()), SQLITE_TRANSIENT); };
    for (const std::string* t : {&k.key.name, &k.key.arch, &k.key.compiler_version, &k.key.generator_hash, &k.family,
                                 &k.problem_key, &k.config})
      text(*t);
    sqlite3_bind_int64(s, ++i, k.n);
    sqlite3_bind_int64(s, ++i, k.k);
    text(k.entry);
    text(k.lowered_name);
    text(nlohmann::json(k.options).dump());
    sqlite3_bind_int64(s, ++i, int64_t(k.binary.size()));
    text(k.binary_sha256);
    for (int v : {k.registers, k.stack_bytes, k.spill_bytes, k.smem_bytes}) sqlite3_bind_int64(s, ++i, v);
    sqlite3_bind_double(s, ++i, k.occupancy);
    sqlite3_bind_double(s, ++i, k.compile_ms);
    sqlite3_bind_int64(s, ++i, k.created_at);
    for (const std::string* t : {&k.report_json, &k.source, &k.ir, &k.log, &k.isa}) text(*t);
    sqlite3_bind_blob(s, ++i, k.binary.data(), int(k.binary.size()), SQLITE_TRANSIENT);
    check(sqlite3_step(s), "insert");
    sqlite3_finalize(s);
  }
  check(sqlite3_exec(db, "PRAGMA journal_mode=WAL", nullptr, nullptr, nullptr), "wal");
  sqlite3_close(db);
}

// The schema version a cache file declares (PRAGMA user_version), -1 when unreadable.
inline int64_t user_version(const std::string& path) {
  sqlite3* db = nullptr;
  sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  sqlite3_stmt* s = nullptr;
  sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &s, nullptr);
  const int64_t v = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int64(s, 0) : -1;
  sqlite3_finalize(s);
  sqlite3_close(db);
  return v;
}

}  // namespace i8g::cache::testing

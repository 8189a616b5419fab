// Thin RAII over the SQLite C API for the cache: a connection, prepared statements with bound
// parameters only, and a write transaction that starts with BEGIN IMMEDIATE (retried on
// SQLITE_BUSY) and rolls back unless committed. Internal to cache/.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

struct sqlite3;
struct sqlite3_stmt;

namespace i8g::cache::sql {

class Db {
 public:
  // flags: SQLITE_OPEN_* ; `label` names the file in messages (default: `path`, which may be
  // a file: URI when flags has SQLITE_OPEN_URI).
  Db(const std::string& path, int flags, const std::string& label = {});
  ~Db();
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;

  sqlite3* handle() const { return db_; }
  const std::string& path() const { return path_; }
  void exec(const char* sql);  // statements without values only
  int64_t last_insert_rowid() const;
  int64_t changes() const;  // rows changed by the last statement
  // Throws Error("<where>", "cache file <path>: <sqlite message>") unless rc is ok/row/done.
  void check(int rc, const char* where) const;
  [[noreturn]] void fail(int rc, const char* where) const;

 private:
  sqlite3* db_ = nullptr;
  std::string path_;
};

class Stmt {
 public:
  Stmt(Db& db, const char* sql);
  ~Stmt();
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;

  // Parameters are 1-based, as in SQLite.
  Stmt& bind(int i, int64_t v);
  Stmt& bind(int i, int v) { return bind(i, int64_t(v)); }
  Stmt& bind(int i, double v);
  Stmt& bind(int i, const std::string& v);
  Stmt& bind_blob(int i, const void* data, size_t size);
  Stmt& bind_null(int i);

  bool step();  // true: a row is ready; false: done. Throws Error otherwise.
  void run();   // steps to completion
  void reset();

  int64_t i64(int col) const;
  double f64(int col) const;
  std::string text(int col) const;  // NULL reads as ""
  std::vector<uint8_t> blob(int col) const;
  bool is_null(int col) const;

 private:
  Db& db_;
  sqlite3_stmt* st_ = nullptr;
  const char* sql_;
};

// BEGIN IMMEDIATE with busy_timeout and a bounded retry on top; rollback unless commit().
class WriteTxn {
 public:
  explicit WriteTxn(Db& db);
  ~WriteTxn();
  WriteTxn(const WriteTxn&) = delete;
  WriteTxn& operator=(const WriteTxn&) = delete;
  void commit();

 private:
  Db& db_;
  bool open_ = false;
};

// Runs `sql` (no values) retrying while SQLite answers BUSY/LOCKED; for PRAGMAs that take locks
// outside a transaction (journal_mode). Returns the first column of the first row, or "".
std::string exec_retrying(Db& db, const char* sql);

}  // namespace i8g::cache::sql

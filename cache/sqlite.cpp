#include "cache/sqlite.hpp"

#include <sqlite3.h>

#include <chrono>
#include <random>
#include <thread>

#include "core/error.hpp"

namespace i8g::cache::sql {
namespace {

constexpr int kBusyTimeoutMs = 10000;
// On top of busy_timeout: a writer that still finds the file locked tries again for this long.
constexpr auto kRetryBudget = std::chrono::seconds(60);

bool is_busy(int rc) {
  int primary = rc & 0xff;
  return primary == SQLITE_BUSY || primary == SQLITE_LOCKED;
}

void backoff(int attempt) {
  thread_local std::minstd_rand rng(std::random_device{}());
  int cap = std::min(200, 5 << std::min(attempt, 5));
  std::this_thread::sleep_for(std::chrono::milliseconds(1 + int(rng() % unsigned(cap))));
}

}  // namespace

Db::Db(const std::string& path, int flags, const std::string& label) : path_(label.empty() ? path : label) {
  int rc = sqlite3_open_v2(path.c_str(), &db_, flags | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    sqlite3_close_v2(db_);
    db_ = nullptr;
    throw Error(ErrorKind::cache, "sqlite3_open_v2", "cache file " + path_ + ": " + msg);
  }
  sqlite3_extended_result_codes(db_, 1);
  sqlite3_busy_timeout(db_, kBusyTimeoutMs);
}

Db::~Db() { sqlite3_close_v2(db_); }

void Db::fail(int rc, const char* where) const {
  std::string msg = sqlite3_errstr(rc);
  if (db_ && sqlite3_extended_errcode(db_) == rc) msg = sqlite3_errmsg(db_);
  throw Error(ErrorKind::cache, where, "cache file " + path_ + ": " + msg);
}

void Db::check(int rc, const char* where) const {
  if (rc != SQLITE_OK && rc != SQLITE_ROW && rc != SQLITE_DONE) fail(rc, where);
}

void Db::exec(const char* sql) { check(sqlite3_exec(db_, sql, nullptr, nullptr, nullptr), "sqlite3_exec"); }

int64_t Db::last_insert_rowid() const { return sqlite3_last_insert_rowid(db_); }
int64_t Db::changes() const { return sqlite3_changes64(db_); }

Stmt::Stmt(Db& db, const char* sql) : db_(db), sql_(sql) {
  db_.check(sqlite3_prepare_v2(db.handle(), sql, -1, &st_, nullptr), "sqlite3_prepare_v2");
}

Stmt::~Stmt() { sqlite3_finalize(st_); }

Stmt& Stmt::bind(int i, int64_t v) {
  db_.check(sqlite3_bind_int64(st_, i, v), "sqlite3_bind_int64");
  return *this;
}

Stmt& Stmt::bind(int i, double v) {
  db_.check(sqlite3_bind_double(st_, i, v), "sqlite3_bind_double");
  return *this;
}

Stmt& Stmt::bind(int i, const std::string& v) {
  db_.check(sqlite3_bind_text64(st_, i, v.data(), v.size(), SQLITE_TRANSIENT, SQLITE_UTF8),
            "sqlite3_bind_text64");
  return *this;
}

Stmt& Stmt::bind_blob(int i, const void* data, size_t size) {
  // A zero-length blob must still be a blob, not NULL (the column is NOT NULL).
  static const char empty = 0;
  db_.check(sqlite3_bind_blob64(st_, i, size ? data : &empty, size, SQLITE_TRANSIENT),
            "sqlite3_bind_blob64");
  return *this;
}

Stmt& Stmt::bind_null(int i) {
  db_.check(sqlite3_bind_null(st_, i), "sqlite3_bind_null");
  return *this;
}

bool Stmt::step() {
  int rc = sqlite3_step(st_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  db_.fail(rc, "sqlite3_step");
}

void Stmt::run() {
  while (step()) {
  }
}

void Stmt::reset() {
  sqlite3_reset(st_);
  sqlite3_clear_bindings(st_);
}

int64_t Stmt::i64(int col) const { return sqlite3_column_int64(st_, col); }
double Stmt::f64(int col) const { return sqlite3_column_double(st_, col); }
bool Stmt::is_null(int col) const { return sqlite3_column_type(st_, col) == SQLITE_NULL; }

std::string Stmt::text(int col) const {
  auto* p = reinterpret_cast<const char*>(sqlite3_column_text(st_, col));
  return p ? std::string(p, size_t(sqlite3_column_bytes(st_, col))) : std::string();
}

std::vector<uint8_t> Stmt::blob(int col) const {
  auto* p = static_cast<const uint8_t*>(sqlite3_column_blob(st_, col));
  int n = sqlite3_column_bytes(st_, col);
  return p ? std::vector<uint8_t>(p, p + n) : std::vector<uint8_t>();
}

WriteTxn::WriteTxn(Db& db) : db_(db) {
  auto deadline = std::chrono::steady_clock::now() + kRetryBudget;
  for (int attempt = 0;; ++attempt) {
    int rc = sqlite3_exec(db_.handle(), "BEGIN IMMEDIATE", nullptr, nullptr, nullptr);
    if (rc == SQLITE_OK) break;
    if (!is_busy(rc) || std::chrono::steady_clock::now() > deadline) db_.fail(rc, "BEGIN IMMEDIATE");
    backoff(attempt);
  }
  open_ = true;
}

WriteTxn::~WriteTxn() {
  if (open_) sqlite3_exec(db_.handle(), "ROLLBACK", nullptr, nullptr, nullptr);
}

void WriteTxn::commit() {
  // COMMIT can answer BUSY while readers hold the WAL; the transaction stays open, so retry.
  auto deadline = std::chrono::steady_clock::now() + kRetryBudget;
  for (int attempt = 0;; ++attempt) {
    int rc = sqlite3_exec(db_.handle(), "COMMIT", nullptr, nullptr, nullptr);
    if (rc == SQLITE_OK) break;
    if (!is_busy(rc) || std::chrono::steady_clock::now() > deadline) db_.fail(rc, "COMMIT");
    backoff(attempt);
  }
  open_ = false;
}

std::string exec_retrying(Db& db, const char* sql) {
  auto deadline = std::chrono::steady_clock::now() + kRetryBudget;
  for (int attempt = 0;; ++attempt) {
    sqlite3_stmt* st = nullptr;
    int rc = sqlite3_prepare_v2(db.handle(), sql, -1, &st, nullptr);
    std::string first;
    if (rc == SQLITE_OK) {
      rc = sqlite3_step(st);
      if (rc == SQLITE_ROW) {
        auto* p = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
        if (p) first = p;
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        }
      }
      int frc = sqlite3_finalize(st);
      if (rc == SQLITE_DONE) rc = frc;
    }
    if (rc == SQLITE_OK || rc == SQLITE_DONE) return first;
    if (!is_busy(rc) || std::chrono::steady_clock::now() > deadline) db.fail(rc, sql);
    backoff(attempt);
  }
}

}  // namespace i8g::cache::sql

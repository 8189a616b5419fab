// Running the i8gemm CLI as a child process: arguments in; exit code (or signal), stdout and
// stderr out. Every child gets I8GEMM_CACHE (and XDG_CACHE_HOME) pointing into the test's own
// temporary directory, so no test can touch the user's real cache.
#pragma once
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/files.hpp"

extern char** environ;

namespace i8g::clitest {

inline std::string cli_path() { return std::string(I8G_BINARY_DIR) + "/tools/i8gemm"; }
inline std::string source_path(const std::string& rel) { return std::string(I8G_SOURCE_DIR) + "/" + rel; }

using testsupport::exists;
using testsupport::random_bytes;
using testsupport::read_bytes;
using testsupport::TempDir;
using testsupport::write_bytes;

// Names of the entries of a directory, sorted.
inline std::vector<std::string> list_dir(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

struct Result {
  std::string command;  // for messages
  int exit_code = -1;   // when exited normally
  bool exited = false;
  bool signaled = false;
  int signal = 0;
  bool timed_out = false;
  std::string out, err;

  bool ok() const { return exited && exit_code == 0; }
  // A normal, non-zero exit: the contract for every refused input.
  bool failed_cleanly() const { return exited && exit_code != 0; }
  std::string describe() const {
    std::ostringstream os;
    os << "command: " << command << "\n";
    if (timed_out) os << "TIMED OUT\n";
    if (signaled) os << "killed by signal " << signal << " (" << strsignal(signal) << ")\n";
    if (exited) os << "exit code " << exit_code << "\n";
    os << "--- stdout (" << out.size() << " bytes) ---\n" << out.substr(0, 6000)
       << "\n--- stderr (" << err.size() << " bytes) ---\n" << err.substr(0, 6000) << "\n";
    return os.str();
  }
  // stderr without its final newline(s).
  std::string err_trimmed() const {
    std::string e = err;
    while (!e.empty() && (e.back() == '\n' || e.back() == '\r')) e.pop_back();
    return e;
  }
};

struct RunOptions {
  RunOptions(std::string cache) : cache_env(std::move(cache)) {}  // NOLINT: implicit on purpose
  std::string cache_env;                 // I8GEMM_CACHE for the child (required)
  std::vector<std::string> extra_env;    // "NAME=value"
  std::string cwd;                       // empty: inherit
  int timeout_s = 300;
};

// Starts argv[0] with exactly `env`, stdin from /dev/null, stdout and stderr into the given
// files (created 0600), in `cwd` when not empty; returns the pid, throws when it cannot start.
inline pid_t spawn_child(std::vector<std::string> argv_s, std::vector<std::string> env, const std::string& out_path,
                         const std::string& err_path, const std::string& cwd = {}) {
  std::vector<char*> argv, envp;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&fa, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (!cwd.empty()) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 29))
    posix_spawn_file_actions_addchdir_np(&fa, cwd.c_str());
#else
#error "posix_spawn_file_actions_addchdir_np needed"
#endif
  }
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) throw std::runtime_error("posix_spawn " + argv_s[0] + ": " + strerror(rc));
  return pid;
}

// Runs `i8gemm args...`; stdout and stderr go to files in `scratch`, stdin is /dev/null.
inline Result run_cli(const std::vector<std::string>& args, const RunOptions& o, const std::string& scratch) {
  static int counter = 0;
  Result r;
  r.command = cli_path();
  for (const auto& a : args) r.command += " '" + a + "'";
  const std::string tag = scratch + "/.run" + std::to_string(getpid()) + "_" + std::to_string(++counter);
  const std::string out_path = tag + ".out", err_path = tag + ".err";

  std::vector<std::string> env;
  // extra_env replaces an inherited variable of the same name (getenv would find the first).
  auto overridden = [&](const std::string& v) {
    const std::string name = v.substr(0, v.find('=') + 1);
    for (const auto& e : o.extra_env)
      if (e.rfind(name, 0) == 0) return true;
    return false;
  };
  for (char** e = environ; *e; ++e) {
    std::string v = *e;
    if (v.rfind("I8GEMM_CACHE=", 0) == 0 || v.rfind("XDG_CACHE_HOME=", 0) == 0 || overridden(v)) continue;
    env.push_back(v);
  }
  if (o.cache_env.empty()) throw std::runtime_error("run_cli: no I8GEMM_CACHE given");
  env.push_back("I8GEMM_CACHE=" + o.cache_env);
  env.push_back("XDG_CACHE_HOME=" + scratch + "/xdg");
  for (const auto& e : o.extra_env) env.push_back(e);

  std::vector<std::string> argv_s;
  argv_s.push_back(cli_path());
  for (const auto& a : args) argv_s.push_back(a);
  const pid_t pid = spawn_child(argv_s, env, out_path, err_path, o.cwd);

  int status = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(o.timeout_s);
  for (;;) {
    pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    if (w < 0 && errno != EINTR) throw std::runtime_error("waitpid failed");
    if (std::chrono::steady_clock::now() > deadline && !r.timed_out) {
      r.timed_out = true;
      kill(pid, SIGKILL);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (WIFEXITED(status)) {
    r.exited = true;
    r.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    r.signaled = true;
    r.signal = WTERMSIG(status);
  }
  r.out = read_bytes(out_path);
  r.err = read_bytes(err_path);
  unlink(out_path.c_str());
  unlink(err_path.c_str());
  return r;
}

// ---------------------------------------------------------------------------------------------
// Direct SQLite access, for copying a populated cache and for damaging one on purpose.

inline void sqlite_check(int rc, sqlite3* db, const std::string& what) {
  if (rc != SQLITE_OK && rc != SQLITE_DONE && rc != SQLITE_ROW)
    throw std::runtime_error(what + ": " + (db ? sqlite3_errmsg(db) : sqlite3_errstr(rc)));
}

// Runs `sql` on the database at `path` (read-write), e.g. to damage an entry on purpose.
inline void exec_sql(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  sqlite_check(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr), db, "open " + path);
  sqlite3_busy_timeout(db, 5000);
  sqlite_check(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), db, sql);
  sqlite3_close(db);
}

// A consistent copy of a cache file (WAL content included) through the backup API.
inline void copy_database(const std::string& from, const std::string& to) {
  sqlite3* src = nullptr;
  sqlite3* dst = nullptr;
  sqlite_check(sqlite3_open_v2(from.c_str(), &src, SQLITE_OPEN_READONLY, nullptr), src, "open " + from);
  sqlite_check(sqlite3_open_v2(to.c_str(), &dst, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr), dst, "open " + to);
  sqlite3_backup* b = sqlite3_backup_init(dst, "main", src, "main");
  if (!b) throw std::runtime_error(std::string("backup: ") + sqlite3_errmsg(dst));
  sqlite_check(sqlite3_backup_step(b, -1), dst, "backup step");
  sqlite_check(sqlite3_backup_finish(b), dst, "backup finish");
  sqlite3_close(src);
  sqlite3_close(dst);
}

// Flips one byte in the middle of the stored binary of the kernel with the lowest id; returns
// that kernel's name.
inline std::string corrupt_one_binary(const std::string& path) {
  sqlite3* db = nullptr;
  sqlite_check(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr), db, "open " + path);
  sqlite3_busy_timeout(db, 5000);
  sqlite3_stmt* s = nullptr;
  sqlite_check(sqlite3_prepare_v2(db, "SELECT id, name, binary FROM kernels ORDER BY id LIMIT 1", -1, &s, nullptr), db, "select");
  if (sqlite3_step(s) != SQLITE_ROW) throw std::runtime_error("no kernel to corrupt in " + path);
  const int64_t id = sqlite3_column_int64(s, 0);
  const std::string name = reinterpret_cast<const char*>(sqlite3_column_text(s, 1));
  const auto* p = static_cast<const unsigned char*>(sqlite3_column_blob(s, 2));
  std::string blob(reinterpret_cast<const char*>(p), size_t(sqlite3_column_bytes(s, 2)));
  sqlite3_finalize(s);
  if (blob.empty()) throw std::runtime_error("empty binary");
  blob[blob.size() / 2] = char(blob[blob.size() / 2] ^ 0x5a);
  sqlite_check(sqlite3_prepare_v2(db, "UPDATE kernels SET binary = ?1 WHERE id = ?2", -1, &s, nullptr), db, "update");
  sqlite3_bind_blob(s, 1, blob.data(), int(blob.size()), SQLITE_TRANSIENT);
  sqlite3_bind_int64(s, 2, id);
  sqlite_check(sqlite3_step(s), db, "update step");
  sqlite3_finalize(s);
  if (sqlite3_changes(db) != 1) throw std::runtime_error("update changed no row");
  sqlite3_close(db);
  return name;
}

}  // namespace i8g::clitest

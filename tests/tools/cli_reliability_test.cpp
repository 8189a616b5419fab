// Crash safety and concurrency of the cache, with real processes: writers SIGKILLed at random
// points, and many writers and readers on one file at once. Each test prints its figure.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "tests/cache/cache_test_util.hpp"
#include "cli_test_support.hpp"
#include "core/error.hpp"

namespace i8g::clitest {
namespace {

namespace ct = i8g::cache::testing;
using i8g::cache::Cache;

std::string worker_path() { return std::string(I8G_BINARY_DIR) + "/tests/i8g_cache_worker"; }

// A child started without waiting for it; stdout/stderr go to files beside the cache.
struct Proc {
  pid_t pid = -1;
  std::string what, out_path, err_path;
  int status = 0;
  bool done = false;

  static Proc start(const std::vector<std::string>& argv_s, const std::string& cache, const std::string& dir) {
    static int counter = 0;
    Proc p;
    for (const auto& a : argv_s) p.what += a + " ";
    p.out_path = dir + "/.p" + std::to_string(++counter) + ".out";
    p.err_path = dir + "/.p" + std::to_string(counter) + ".err";
    std::vector<std::string> env = {"I8GEMM_CACHE=" + cache, "XDG_CACHE_HOME=" + dir + "/xdg", "CUDA_VISIBLE_DEVICES=",
                                    "PATH=/usr/bin:/bin", "HOME=" + dir};
    p.pid = spawn_child(argv_s, env, p.out_path, p.err_path);
    return p;
  }
  bool poll() {  // true once the child has ended
    if (!done && waitpid(pid, &status, WNOHANG) == pid) done = true;
    return done;
  }
  void wait() {
    while (!done) {
      if (waitpid(pid, &status, 0) == pid) done = true;
    }
  }
  bool ok() const { return done && WIFEXITED(status) && WEXITSTATUS(status) == 0; }
  std::string err() const { return read_bytes(err_path); }
  std::string describe() const {
    return what + (WIFSIGNALED(status) ? "killed by signal " + std::to_string(WTERMSIG(status))
                                       : "exit " + std::to_string(WEXITSTATUS(status))) +
           "\n" + err().substr(0, 2000);
  }
};

// name -> sha256 of every entry the writers recorded after put_kernel returned.
std::map<std::string, std::string> committed(const std::string& side) {
  std::map<std::string, std::string> m;
  std::istringstream in(read_bytes(side));
  std::string name, sha;
  while (in >> name >> sha) m[name] = sha;
  return m;
}

struct Check {
  size_t entries = 0, half_written = 0, lost = 0;
  std::string integrity, first_problem;
};

// What the next user of the file sees: it opens, passes integrity_check, every row is whole,
// and every recorded commit is there with its content.
Check check_cache(const std::string& path, const std::map<std::string, std::string>& recorded) {
  Check r;
  Cache c(path, Cache::Mode::read_write);
  const Cache::Audit a = c.audit();
  r.integrity = a.integrity;
  r.half_written += a.hash_mismatch.size() + a.not_device_code.size();
  std::map<std::string, std::string> stored;
  for (const auto& k : c.list_kernels({"", true})) {
    ++r.entries;
    stored[k.key.name] = k.binary_sha256;
    if (std::string why = ct::entry_problem(k); !why.empty()) {
      ++r.half_written;
      if (r.first_problem.empty()) r.first_problem = k.key.name + ": " + why;
    }
  }
  for (const auto& [name, sha] : recorded) {
    auto it = stored.find(name);
    if (it == stored.end() || it->second != sha) {
      ++r.lost;
      if (r.first_problem.empty()) r.first_problem = name + ": committed but " + (it == stored.end() ? "missing" : "changed");
    }
  }
  return r;
}

TEST(CacheReliability, SigkillAtRandomPointsLosesNoCommittedEntry) {
  TempDir dir;
  const std::string cache = dir.file("crash/cache.sqlite"), side = dir.file("committed.txt");
  std::mt19937 rng(20261129);
  constexpr int kKills = 50;
  int survived = 0;
  size_t checked = 0, half = 0, lost = 0;
  for (int run = 0; run < kKills; ++run) {
    Proc p = Proc::start({worker_path(), "write", cache, side, "i8g_crash_r" + std::to_string(run), "0",
                          std::to_string(rng())},
                         cache, dir.path());
    // From "still creating the file" to "many commits in": 0-150 ms into the run.
    std::this_thread::sleep_for(std::chrono::microseconds(rng() % 150000));
    kill(p.pid, SIGKILL);
    p.wait();
    ASSERT_TRUE(WIFSIGNALED(p.status) || p.ok()) << p.describe();
    const Check c = check_cache(cache, committed(side));
    checked += c.entries;
    half += c.half_written;
    lost += c.lost;
    const bool good = c.integrity == "ok" && c.half_written == 0 && c.lost == 0;
    survived += good;
    EXPECT_TRUE(good) << "kill " << run << ": integrity " << c.integrity << ", " << c.first_problem;
  }
  const size_t recorded = committed(side).size();
  std::printf("kills survived: %d/%d, entries checked: %zu, committed entries recorded: %zu, half-written "
              "visible: %zu, committed lost: %zu\n",
              survived, kKills, checked, recorded, half, lost);
  EXPECT_EQ(survived, kKills);
  EXPECT_GT(recorded, size_t(kKills));  // the kills really landed among commits
}

TEST(CacheReliability, SigkillOfARealCompileOnlyTuneLeavesOnlyWholeEntries) {
  TempDir dir;
  const std::string cache = dir.file("tune.sqlite");
  std::mt19937 rng(29);
  constexpr int kKills = 6;
  int survived = 0;
  size_t checked = 0;
  for (int run = 0; run < kKills; ++run) {
    // A new shape per run, so every run compiles (a cached run would finish before the kill).
    Proc p = Proc::start({cli_path(), "tune", "--compile-only", "--arch", "sm_80", "--shape",
                          std::to_string(128 * (run + 1)) + "x256", "--filter", "simt_dp4a.*bm16_bn64_", "-j", "2",
                          "--cache", cache},
                         cache, dir.path());
    std::this_thread::sleep_for(std::chrono::milliseconds(100 + rng() % 900));
    kill(p.pid, SIGKILL);
    p.wait();
    const Check c = check_cache(cache, {});
    checked += c.entries;
    size_t not_cubin = 0;
    for (const auto& k : Cache(cache, Cache::Mode::read_only).list_kernels({"", true}))
      not_cubin += k.binary.size() < 20 || k.binary[18] != 190;  // EM_CUDA
    const bool good = c.integrity == "ok" && c.half_written == 0 && not_cubin == 0;
    survived += good;
    EXPECT_TRUE(good) << "kill " << run << ": " << c.integrity << " " << c.first_problem;
  }
  std::printf("tune --compile-only kills survived: %d/%d, entries checked: %zu, half-written visible: 0\n", survived,
              kKills, checked);
  EXPECT_EQ(survived, kKills);
}

TEST(CacheReliability, EightWritersAndEightReadersAtOnce) {
  TempDir dir;
  const std::string cache = dir.file("shared.sqlite"), side = dir.file("committed.txt");
  { Cache c(cache, Cache::Mode::read_write); }  // readers open read-only: the file must exist
  std::vector<Proc> writers, readers;
  // 4 real compile-only tunes of the same kernels (they race for the same keys) and 4 API
  // writers of the same 15 entries with the same content (same seed).
  for (int i = 0; i < 4; ++i)
    writers.push_back(Proc::start({cli_path(), "tune", "--compile-only", "--arch", "sm_80", "--shape", "256x512",
                                   "--filter", "simt_dp4a.*bm16_bn64_", "-j", "1", "--cache", cache},
                                  cache, dir.path()));
  for (int i = 0; i < 4; ++i)
    writers.push_back(Proc::start({worker_path(), "write", cache, side, "i8g_conc", "15", "7"}, cache, dir.path()));
  auto start_reader = [&](int i) {
    return i % 2 ? Proc::start({cli_path(), "inspect", "list", "--json", "--cache", cache}, cache, dir.path())
                 : Proc::start({worker_path(), "read", cache, "3"}, cache, dir.path());
  };
  for (int i = 0; i < 8; ++i) readers.push_back(start_reader(i));
  // Readers run again and again until every writer is done: reads overlap every write.
  size_t reader_runs = 8, failures = 0, locked = 0;
  std::string first_failure;
  auto judge = [&](const Proc& p) {
    const std::string e = p.err();
    locked += e.find("locked") != std::string::npos || e.find("busy") != std::string::npos;
    if (!p.ok() && failures++ == 0) first_failure = p.describe();
  };
  for (bool writing = true; writing;) {
    writing = false;
    for (auto& w : writers) writing |= !w.poll();
    for (size_t i = 0; i < readers.size(); ++i) {
      if (!readers[i].poll()) continue;
      judge(readers[i]);
      if (writing) {
        readers[i] = start_reader(int(i));
        ++reader_runs;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  for (auto& r : readers) {
    if (!r.done) {
      r.wait();
      judge(r);
    }
  }
  for (auto& w : writers) judge(w);
  EXPECT_EQ(failures, 0u) << first_failure;
  EXPECT_EQ(locked, 0u);

  const Check c = check_cache(cache, committed(side));
  EXPECT_EQ(c.integrity, "ok");
  EXPECT_EQ(c.half_written, 0u) << c.first_problem;
  EXPECT_EQ(c.lost, 0u) << c.first_problem;
  std::map<std::string, int> copies;
  size_t tuned = 0;
  for (const auto& k : Cache(cache, Cache::Mode::read_only).list_kernels({}))
    tuned += ++copies[k.key.name] == 1 && k.key.name.rfind("i8g_sm80", 0) == 0;
  size_t dup = 0;
  for (const auto& [name, n] : copies) dup += n != 1;
  EXPECT_EQ(dup, 0u);
  EXPECT_EQ(copies.size() - tuned, 15u);  // the API writers' entries
  EXPECT_GT(tuned, 0u);
  std::printf("processes: 16 at once (8 writers, 8 readers; %zu reader runs), failed: %zu, 'database is locked' "
              "seen: %zu, entries: %zu (%zu compiled, 15 API), duplicates: %zu, partial entries seen: %zu\n",
              reader_runs, failures, locked, copies.size(), tuned, dup, c.half_written);
}

}  // namespace
}  // namespace i8g::clitest

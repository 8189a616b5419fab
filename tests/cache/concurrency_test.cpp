// Several processes writing one cache file at once, including creating it.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <map>
#include <thread>

#include "cache/cache.hpp"
#include "cache_test_util.hpp"
#include "core/error.hpp"

namespace i8g::cache {
namespace {
using namespace testing;

constexpr int kChildren = 8;
constexpr int kPerChild = 20;

std::string kernel_name(int child, int i) { return "i8g_child" + std::to_string(child) + "_k" + std::to_string(i); }

// Exit codes: 0 ok, 1 a cache Error, 2 another exception, 3 a wrong id back.
int child_main(const std::string& path, int child, int start_fd) {
  char go;
  if (read(start_fd, &go, 1) < 0) return 4;  // start together
  try {
    Cache c(path, Cache::Mode::read_write);
    TuneKey key = make_tune_key();
    key.m_bucket = child;
    for (int i = 0; i < kPerChild; ++i) {
      StoredKernel k = make_kernel(kernel_name(child, i), child * 100 + i, 2000);
      int64_t id = c.put_kernel(k);
      // Duplicates: the same kernel again, and a kernel every child puts (same key and content).
      if (c.put_kernel(k) != id) return 3;
      if (i % 5 == 0) c.put_kernel(make_kernel("i8g_shared_k" + std::to_string(i), 7, 2000));
      c.put_timings({Timing{key, k.key.name, id, CandidateStatus::ok, "", 1.0 + i, 2, 1, 1, 1, 1, 0}});
      c.put_winner(Winner{key, k.key.name, id, 1.0 + i, 2.0, 2.0 / (1.0 + i), 0});
    }
    return 0;
  } catch (const Error& e) {
    std::fprintf(stderr, "child %d: %s\n", child, e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "child %d: %s\n", child, e.what());
    return 2;
  }
}

// Forks the writers (none opens the file before all are running), then collects exit codes.
std::vector<int> run_writers(const std::string& path) {
  int start[2];
  if (pipe(start) != 0) return {};
  std::vector<pid_t> pids;
  for (int child = 0; child < kChildren; ++child) {
    pid_t pid = fork();
    if (pid == 0) {
      close(start[1]);
      _exit(child_main(path, child, start[0]));
    }
    pids.push_back(pid);
  }
  close(start[0]);
  char go[kChildren] = {};
  if (write(start[1], go, sizeof go) != ssize_t(sizeof go)) std::perror("write");
  close(start[1]);
  std::vector<int> codes;
  for (pid_t pid : pids) {
    int status = 0;
    waitpid(pid, &status, 0);
    codes.push_back(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
  }
  return codes;
}

void expect_all_present_once(const std::string& path) {
  Cache c(path, Cache::Mode::read_only);
  std::map<std::string, int> seen;
  for (const StoredKernel& k : c.list_kernels()) ++seen[k.key.name];
  EXPECT_EQ(seen.size(), size_t(kChildren * kPerChild + kPerChild / 5));
  for (int child = 0; child < kChildren; ++child)
    for (int i = 0; i < kPerChild; ++i) EXPECT_EQ(seen[kernel_name(child, i)], 1) << kernel_name(child, i);
  for (const auto& [name, count] : seen) EXPECT_EQ(count, 1) << name;
  for (int child = 0; child < kChildren; ++child) {
    TuneKey key = make_tune_key();
    key.m_bucket = child;
    EXPECT_EQ(c.timings(key).size(), size_t(kPerChild));
    auto w = c.get_winner(key);
    ASSERT_TRUE(w);
    EXPECT_EQ(w->candidate, kernel_name(child, kPerChild - 1));
  }
  for (const StoredKernel& k : c.list_kernels({"_k1$", true}))
    EXPECT_EQ(sha256_hex(k.binary.data(), k.binary.size()), k.binary_sha256);
  auto audit = c.audit();
  EXPECT_EQ(audit.integrity, "ok");
  EXPECT_TRUE(audit.hash_mismatch.empty());
}

TEST(CacheConcurrency, EightWritersCreatingTheFileStoreEveryEntryOnce) {
  TempDir dir;
  std::string path = dir.file("new/cache.sqlite");  // nobody has created it yet
  auto codes = run_writers(path);
  ASSERT_EQ(codes.size(), size_t(kChildren));
  for (int child = 0; child < kChildren; ++child) EXPECT_EQ(codes[child], 0) << "child " << child;
  expect_all_present_once(path);
}

TEST(CacheConcurrency, EightWritersOnAnExistingFileStoreEveryEntryOnce) {
  TempDir dir;
  std::string path = dir.file("cache.sqlite");
  { Cache c(path, Cache::Mode::read_write); }
  auto codes = run_writers(path);
  for (int child = 0; child < kChildren; ++child) EXPECT_EQ(codes[child], 0) << "child " << child;
  expect_all_present_once(path);
}

TEST(CacheConcurrency, ThreadsSharingOneCacheStoreEveryEntryOnce) {
  TempDir dir;
  Cache c(dir.file("cache.sqlite"), Cache::Mode::read_write);
  std::vector<std::thread> threads;
  std::vector<int> failures(4, 0);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      try {
        for (int i = 0; i < 10; ++i) {
          c.put_kernel(make_kernel(kernel_name(t, i), t * 100 + i));
          c.put_kernel(make_kernel("i8g_shared", 1));
          if (c.list_kernels().empty()) ++failures[t];
        }
      } catch (const std::exception& e) {
        ADD_FAILURE() << e.what();
        ++failures[t];
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures, std::vector<int>(4, 0));
  EXPECT_EQ(c.list_kernels().size(), 41u);
}

}  // namespace
}  // namespace i8g::cache

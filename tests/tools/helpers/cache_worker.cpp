// A child process for the reliability tests: writes kernels through the cache API in a loop (to
// be killed at random points, or run beside other writers), or reads every entry and checks it
// is whole. After each put_kernel returns, the writer appends "name sha256" to a side file: the
// test then knows exactly which entries were committed before a kill.
//   cache_worker write CACHE SIDE_FILE PREFIX COUNT SEED   (COUNT 0: until killed)
//   cache_worker read CACHE ROUNDS
// Exit codes: 0 ok; 1 an Error reached us (e.g. "database is locked"); 3 a partial entry seen.
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

#include "tests/cache/cache_test_util.hpp"
#include "core/error.hpp"

using namespace i8g::cache;

namespace {

// Appends with one write(2): a SIGKILL after it returns cannot lose the line (it is in the
// kernel's page cache), and lines of concurrent writers do not interleave.
void record(int fd, const std::string& line) {
  if (write(fd, line.data(), line.size()) != ssize_t(line.size())) std::_Exit(4);
}

int write_loop(const std::string& path, const std::string& side, const std::string& prefix, long count,
               unsigned seed) {
  int fd = open(side.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd < 0) return 4;
  std::mt19937 rng(seed);
  Cache c(path, Cache::Mode::read_write);
  TuneKey tk = testing::make_tune_key();
  for (long i = 0; count == 0 || i < count; ++i) {
    // Sizes up to 192 KiB: big rows span many overflow pages, so kills land mid-write.
    const size_t size = 512 + rng() % (192 * 1024);
    StoredKernel k = testing::make_kernel(prefix + "_" + std::to_string(i), int(rng() % 1000), size);
    const int64_t id = c.put_kernel(k);
    record(fd, k.key.name + " " + k.binary_sha256 + "\n");
    if (i % 4 == 0) {
      tk.m_bucket = i;
      c.put_timings({Timing{tk, k.key.name, id, CandidateStatus::ok, "", 1.0, 2, 1, 1, 1, 1, 0}});
      c.put_winner(Winner{tk, k.key.name, id, 1.0, 2.0, 2.0, 0});
    }
  }
  close(fd);
  return 0;
}

int read_loop(const std::string& path, int rounds) {
  size_t seen = 0;
  for (int r = 0; r < rounds; ++r) {
    Cache c(path, Cache::Mode::read_only);
    for (const StoredKernel& k : c.list_kernels({"", true})) {
      ++seen;
      if (std::string why = testing::entry_problem(k); !why.empty()) {
        std::fprintf(stderr, "partial entry %s: %s\n", k.key.name.c_str(), why.c_str());
        return 3;
      }
      auto again = c.get_kernel(k.key);  // the keyed lookup serving code uses
      if (!again || again->binary != k.binary) {
        std::fprintf(stderr, "lookup of %s came back different\n", k.key.name.c_str());
        return 3;
      }
    }
  }
  std::printf("read %zu entries in %d rounds\n", seen, rounds);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const std::string mode = argc > 1 ? argv[1] : "";
    if (mode == "write" && argc == 7)
      return write_loop(argv[2], argv[3], argv[4], std::atol(argv[5]), unsigned(std::atol(argv[6])));
    if (mode == "read" && argc == 4) return read_loop(argv[2], std::atoi(argv[3]));
    std::fprintf(stderr, "usage: cache_worker write CACHE SIDE PREFIX COUNT SEED | read CACHE ROUNDS\n");
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cache_worker: %s\n", e.what());
    return 1;
  }
}

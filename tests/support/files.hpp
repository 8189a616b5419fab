// File helpers every test folder shares: a private temporary directory and whole-file reads
// and writes. Header-only, no dependencies beyond the standard library and POSIX.
#pragma once
#include <stdlib.h>
#include <sys/stat.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace i8g::testsupport {

// A fresh directory under the system temp dir ($TMPDIR, else /tmp), removed with everything in
// it at the end.
class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "i8g_test") {
    std::string t = (std::filesystem::temp_directory_path() / (prefix + "_XXXXXX")).string();
    if (!mkdtemp(t.data())) throw std::runtime_error("mkdtemp failed for " + t);
    path_ = t;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }
  // Where I8GEMM_CACHE points for CLI children started with this directory.
  std::string default_cache() const { return path_ + "/default-cache/cache.sqlite"; }

 private:
  std::string path_;
};

inline std::string read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

inline void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << bytes;
}

// True when anything is at `path`, a dangling symbolic link included.
inline bool exists(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0;
}

inline std::string random_bytes(size_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::string s(n, '\0');
  for (char& c : s) c = char(gen() & 0xff);
  return s;
}

}  // namespace i8g::testsupport

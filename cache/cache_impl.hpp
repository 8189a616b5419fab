// What the cache's .cpp files share: the open connection and the time source. Internal.
#pragma once
#include <ctime>
#include <memory>
#include <mutex>
#include <string>

#include "cache/cache.hpp"
#include "cache/sqlite.hpp"

namespace i8g::cache {

struct Cache::Impl {
  std::mutex mu;  // one connection, used by one call at a time: a Cache may be shared by threads
  std::string path;
  Mode mode = Mode::read_only;
  int schema = 0;
  std::unique_ptr<sql::Db> db;
};

inline int64_t now_unix() { return int64_t(std::time(nullptr)); }

// "cache file <path>: ..." errors for callers that write with a read-only handle.
void require_writable(Cache::Mode mode, const std::string& path, const char* where);

}  // namespace i8g::cache

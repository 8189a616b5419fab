// Parallel compilation: a fixed pool of worker threads pulls indices from an atomic counter,
// so results land in input order whatever finishes first. Failures are outcomes.
#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>

#include "core/cpus.hpp"
#include "runtime/compile/compiler.hpp"

namespace i8g {

std::vector<CompileOutcome> compile_all(const Compiler& compiler, const std::vector<Source>& sources,
                                        const Target& target, int threads,
                                        const std::function<void(size_t, size_t)>& progress,
                                        const std::function<void(size_t, CompileOutcome&)>& finished) {
  std::vector<CompileOutcome> out(sources.size());
  if (sources.empty()) return out;
  size_t workers = threads > 0 ? size_t(threads) : size_t(usable_cpus());  // cgroup quotas included
  workers = std::min(workers, sources.size());

  std::atomic<size_t> next{0};
  std::mutex progress_mutex;  // progress callbacks never run concurrently
  size_t done = 0;
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < sources.size();) {
      try {
        out[i].binary = compiler.compile(sources[i], target);
      } catch (const std::exception& e) {
        out[i].error = e.what();
      } catch (...) {
        out[i].error = "unknown exception";
      }
      std::lock_guard<std::mutex> lock(progress_mutex);
      ++done;
      if (finished) {
        try {
          finished(i, out[i]);
        } catch (...) {
        }
      }
      if (progress) {
        try {
          progress(done, sources.size());
        } catch (...) {
          // A failing observer must not take down a worker thread (std::terminate).
        }
      }
    }
  };
  std::vector<std::thread> pool;
  for (size_t t = 1; t < workers; ++t) pool.emplace_back(work);
  work();  // the calling thread works too
  for (auto& t : pool) t.join();
  return out;
}

}  // namespace i8g

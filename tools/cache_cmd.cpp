// i8gemm cache: maintenance a user asks for by name. Nothing here runs on its own: stale entries
// are unreachable (never wrong) until `gc` removes them, and a damaged file is left exactly where
// it is until `quarantine` moves it aside. Nothing is ever deleted from disk, only renamed.
#include <fcntl.h>
#include <fmt/format.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <map>
#include <memory>

#include "cache/cache.hpp"
#include "core/embedded.hpp"
#include "core/error.hpp"
#include "core/target.hpp"
#include "tools/cli.hpp"

namespace i8g::cli {
namespace {

struct CacheOptions {
  std::string cache;
  bool dry_run = false, force = false;
};

bool exists(const std::string& p) {
  struct stat st;
  return lstat(p.c_str(), &st) == 0;
}

// gc keeps what this build would look up: its NVRTC and hipRTC versions, its generator hash and
// the options it compiles each arch with. A compiler this build cannot make has no known
// version; its entries cannot be judged, so gc refuses rather than guess (a wrong guess would
// delete good entries). An arch this build does not know has no current options: its kernels go.
cache::Current current_for(cache::Cache& c) {
  CurrentBuild build;
  const std::string& nv = build.compiler_version("sm_80");
  const std::string& amd = build.compiler_version("gfx90a");
  bool has_nv = false, has_amd = false;
  // Every arch this build compiles, not only those in the file now: a writer may add one meanwhile.
  std::map<std::string, std::string> options;
  for (const auto& archs : {Target::supported_archs(), Target::supported_amd_archs()})
    for (const std::string& arch : archs) options[arch] = build.options_hash(arch);
  for (const auto& k : c.list_kernels({})) (k.key.arch.rfind("gfx", 0) == 0 ? has_amd : has_nv) = true;
  if ((has_nv && nv.empty()) || (has_amd && amd.empty()))
    throw Error("cache gc", fmt::format("cannot tell which {} entries are stale: this build cannot make its {} "
                                        "compiler; nothing removed",
                                        has_amd && amd.empty() ? "AMD" : "NVIDIA",
                                        has_amd && amd.empty() ? "hipRTC" : "NVRTC"));
  cache::Current cur;
  cur.compiler_version = nv.empty() ? amd : nv;
  if (!nv.empty() && !amd.empty()) cur.other_compiler_versions = {amd};
  cur.generator_hash = generator_hash();
  cur.options_hash_by_arch = options;
  if (cur.compiler_version.empty()) throw Error("cache gc", "no compiler version known to this build; nothing removed");
  return cur;
}

void run_gc(const CacheOptions& o) {
  const std::string path = resolve_cache_path(o.cache);
  // Opening read-only first: gc never creates a cache that was not there.
  std::unique_ptr<cache::Cache> c = std::make_unique<cache::Cache>(path, cache::Cache::Mode::read_only);
  const cache::Current cur = current_for(*c);
  cache::StaleCounts n;
  if (o.dry_run) {
    n = c->count_stale(cur);
  } else {
    c = std::make_unique<cache::Cache>(path, cache::Cache::Mode::read_write);
    c->remove_stale(cur, &n);
  }
  std::string kept = cur.compiler_version;
  for (const auto& v : cur.other_compiler_versions) kept += ", " + v;
  print_safe("{} {} stale entries ({} kernels, {} timings, {} winners) from {}; kept entries of {}, generator {} "
             "and this build's compile options\n",
             o.dry_run ? "would remove" : "removed", n.total(), n.kernels, n.timings, n.winners, path, kept,
             cur.generator_hash.substr(0, 12));
}

std::string utc_stamp() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", &tm);
  return buf;
}

// rename without replacing anything that is already there (no data is ever overwritten).
bool rename_noreplace(const std::string& from, const std::string& to) {
  if (renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0) return true;
  if (errno != EINVAL && errno != ENOSYS) return false;
  if (link(from.c_str(), to.c_str()) != 0) return false;  // no RENAME_NOREPLACE here
  return unlink(from.c_str()) == 0;
}

void run_quarantine(const CacheOptions& o) {
  const std::string path = resolve_cache_path(o.cache);
  if (!exists(path)) throw Error("cache quarantine", fmt::format("{} does not exist; nothing moved", path));
  // Only an i8gemm cache (recognized by its header, however damaged the rest) is moved aside
  // unasked; another file at the path (text, another application's database, bytes with no
  // header left) only with --force, and a directory never.
  const std::string not_cache = cache::Cache::not_a_cache_reason(path);
  struct stat st;
  if (stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    throw Error("cache quarantine", fmt::format("{} is not a regular file; nothing moved", path));
  if (!not_cache.empty() && !o.force)
    throw Error("cache quarantine", fmt::format("{} {}, not recognizably an i8gemm cache; nothing moved (use "
                                                "--force to move it aside anyway)", path, not_cache));
  std::string why;
  try {
    cache::Cache c(path, cache::Cache::Mode::read_only);
    const cache::Cache::Audit a = c.audit();
    if (a.integrity != "ok") why = "integrity check: " + a.integrity;
  } catch (const Error& e) {
    why = e.what();
  }
  if (why.empty() && !o.force)
    throw Error("cache quarantine", fmt::format("{} opens and passes its integrity check; not moved "
                                                "(use --force to move a readable cache aside)", path));
  std::string dest = path + ".broken-" + utc_stamp();
  for (int i = 1; exists(dest) || exists(dest + "-wal") || exists(dest + "-shm"); ++i)
    dest = path + ".broken-" + utc_stamp() + "-" + std::to_string(i);
  if (!rename_noreplace(path, dest))
    throw Error("cache quarantine", fmt::format("cannot move {} to {}: {}; nothing moved", path, dest, std::strerror(errno)));
  // The WAL and its index belong to the file they were written for: they move with it.
  std::string moved_too;
  for (const char* suffix : {"-wal", "-shm", "-journal"}) {
    if (!exists(path + suffix)) continue;
    if (!rename_noreplace(path + suffix, dest + suffix))
      throw Error("cache quarantine", fmt::format("moved {} to {}, but not {}{}: {}", path, dest, path, suffix,
                                                  std::strerror(errno)));
    moved_too += fmt::format(" and {}{}", dest, suffix);
  }
  print_safe("moved {} aside to {}{} ({}); nothing was deleted. The next write starts a new cache at {}\n", path,
             dest, moved_too, why.empty() ? "asked with --force" : why, path);
}

}  // namespace

void setup_cache(CLI::App& app) {
  auto opts = std::make_shared<CacheOptions>();
  CLI::App* cmd = app.add_subcommand("cache", "cache maintenance on request: gc, quarantine, merge, export");
  cmd->require_subcommand(1);
  CLI::App* gc = cmd->add_subcommand(
      "gc", "remove entries made by another compiler, template version or compile options, and source overrides");
  gc->add_flag("--dry-run", opts->dry_run, "only count what would be removed");
  CLI::App* q = cmd->add_subcommand("quarantine", "move an unreadable cache aside to PATH.broken-<time> (never deletes)");
  q->add_flag("--force", opts->force, "move it aside even when it opens and passes its integrity check");
  for (CLI::App* sub : {cmd, gc, q})
    add_cache_option(*sub, opts->cache, "cache file (default: $I8GEMM_CACHE or ~/.cache/i8gemm/cache.sqlite)");
  gc->callback([opts] { run_gc(*opts); });
  q->callback([opts] { run_quarantine(*opts); });
  setup_cache_transfer(*cmd);
}

}  // namespace i8g::cli

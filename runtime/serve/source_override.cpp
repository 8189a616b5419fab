#include "runtime/serve/source_override.hpp"

#include <sys/stat.h>

#include <fstream>
#include <mutex>
#include <set>
#include <sstream>

#include "cache/cache.hpp"
#include "core/embedded.hpp"
#include "core/error.hpp"
#include "core/log.hpp"
#include "core/options.hpp"

namespace i8g {
namespace {

// An override is never silent, and never noisy: one line per kernel per process.
void announce(const std::string& name, const std::string& path) {
  static std::mutex mu;
  static std::set<std::string> announced;
  std::lock_guard<std::mutex> lock(mu);
  if (!announced.insert(name).second) return;
  log_warning(name + " is compiled from the source override " + path +
              " (I8GEMM_SOURCE_OVERRIDE_DIR), not from the generator");
}

}  // namespace

KernelSource with_override(Source generated) {
  KernelSource ks{std::move(generated), {}};
  const std::string& dir = options().source_override_dir;
  if (dir.empty()) return ks;
  // Kernel names are [a-z0-9_]: the name cannot leave the directory.
  const std::string path = dir + "/" + ks.source.name + ".cu";
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return ks;
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  if (S_ISREG(st.st_mode) && in) text << in.rdbuf();
  if (!S_ISREG(st.st_mode) || !in || in.bad())
    throw Error(ErrorKind::invalid_argument, "I8GEMM_SOURCE_OVERRIDE_DIR",
                "the source override " + path + " exists but cannot be read as a file");
  ks.source.code = text.str();
  ks.override_path = path;
  announce(ks.source.name, path);
  return ks;
}

std::string source_origin_hash(const KernelSource& ks) {
  if (!ks.overridden()) return generator_hash();
  const std::string both = std::string(generator_hash()) + '\0' + ks.source.code;
  return cache::kOverridePrefix + cache::sha256_hex(both.data(), both.size());
}

}  // namespace i8g

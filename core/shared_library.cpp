#include "core/shared_library.hpp"

#include <dlfcn.h>
#include <glob.h>
#include <link.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "core/options.hpp"

namespace i8g {
namespace {

// Adds `dir` once, when it is an existing directory.
void add_dir(std::vector<std::string>& dirs, const std::string& dir) {
  std::error_code ec;
  if (dir.empty() || !std::filesystem::is_directory(dir, ec)) return;
  if (std::find(dirs.begin(), dirs.end(), dir) == dirs.end()) dirs.push_back(dir);
}

void add_glob(std::vector<std::string>& dirs, const std::string& pattern) {
  glob_t g{};
  if (::glob(pattern.c_str(), 0, nullptr, &g) == 0)
    for (size_t i = 0; i < g.gl_pathc; ++i) add_dir(dirs, g.gl_pathv[i]);
  ::globfree(&g);
}

// A Python prefix's site-packages (venv, conda, user, system): lib/python3.X/{site,dist}-packages.
void add_prefix(std::vector<std::string>& dirs, const std::string& prefix) {
  if (prefix.empty()) return;
  add_glob(dirs, prefix + "/lib/python3*/site-packages");
  add_glob(dirs, prefix + "/lib/python3*/dist-packages");
}

int add_mapped(dl_phdr_info* info, size_t, void* data) {
  if (info->dlpi_name && *info->dlpi_name)
    add_dir(*static_cast<std::vector<std::string>*>(data), site_packages_of(info->dlpi_name));
  return 0;
}

}  // namespace

std::vector<std::string> library_candidates(const std::vector<LibraryVersion>& versions, const LibrarySearch& where) {
  if (!where.override_path.empty()) return {where.override_path};
  std::vector<LibraryVersion> order = versions;
  if (where.driver_major > 0)
    std::stable_partition(order.begin(), order.end(),
                          [&](const LibraryVersion& v) { return v.major <= where.driver_major; });
  std::vector<std::string> out;
  for (const LibraryVersion& v : order) {
    out.push_back(v.soname);
    for (const std::string& site : where.site_packages) out.push_back(site + "/" + v.wheel_dir + "/" + v.soname);
    for (const std::string& dir : where.toolkit_dirs) out.push_back(dir + "/" + v.soname);
  }
  return out;
}

std::string site_packages_of(const std::string& path) {
  for (const char* name : {"/site-packages", "/dist-packages"}) {
    for (size_t at = path.find(name); at != std::string::npos; at = path.find(name, at + 1)) {
      const size_t end = at + std::char_traits<char>::length(name);
      if (end == path.size() || path[end] == '/') return path.substr(0, end);
    }
  }
  return {};
}

std::vector<std::string> python_site_packages() {
  std::vector<std::string> dirs;
  dl_iterate_phdr(add_mapped, &dirs);
  const Options& o = options();
  for (size_t start = 0; start <= o.pythonpath.size();) {
    const size_t colon = std::min(o.pythonpath.find(':', start), o.pythonpath.size());
    add_dir(dirs, o.pythonpath.substr(start, colon - start));
    start = colon + 1;
  }
  add_prefix(dirs, o.virtual_env);
  add_prefix(dirs, o.conda_prefix);
  if (!o.home.empty()) add_prefix(dirs, o.home + "/.local");
  add_prefix(dirs, "/usr/local");
  add_prefix(dirs, "/usr");
  return dirs;
}

std::vector<std::string> cuda_toolkit_lib_dirs() {
  std::vector<std::string> dirs;
  const Options& o = options();
  for (const std::string& root : {o.cuda_home, o.cuda_path, std::string("/usr/local/cuda")})
    if (!root.empty()) add_dir(dirs, root + "/lib64");
  return dirs;
}

int loaded_driver_major() {
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  if (!lib) return 0;
  int version = 0;
  // cuDriverGetVersion needs no cuInit; CUresult 0 is CUDA_SUCCESS.
  auto get = reinterpret_cast<int (*)(int*)>(dlsym(lib, "cuDriverGetVersion"));
  if (!get || get(&version) != 0) version = 0;
  dlclose(lib);
  return version / 1000;
}

LibrarySearch library_search(const std::string& override_path) {
  LibrarySearch s;
  s.override_path = override_path;
  if (override_path.empty()) {
    s.site_packages = python_site_packages();
    s.toolkit_dirs = cuda_toolkit_lib_dirs();
    s.driver_major = loaded_driver_major();
  }
  return s;
}

OpenedLibrary open_library(const std::vector<LibraryVersion>& versions, const LibrarySearch& where,
                           const std::string& what, const std::string& override_variable) {
  OpenedLibrary lib;
  const bool named = !where.override_path.empty();
  std::string tried;
  for (const std::string& c : library_candidates(versions, where)) {
    const bool is_path = c.find('/') != std::string::npos;
    // A folder's copy that is not there is only listed; dlerror's text is kept where it says
    // more: the named copy, or a file that failed to load (another architecture, a missing
    // dependency).
    if (is_path && !named && ::access(c.c_str(), F_OK) != 0) {
      tried += "\n  " + c + " (absent)";
      continue;
    }
    if ((lib.handle = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL))) {
      lib.path = c;
      return lib;
    }
    const char* err = dlerror();
    tried += "\n  " + c +
             (is_path ? std::string(" (") + (err ? err : "?") + ")" : std::string(" (not found by the dynamic loader)"));
  }
  if (named)
    lib.why = what + " could not be loaded from " + override_variable + ":" + tried +
              "\nUnset it to search the loader's path, Python's site-packages and the CUDA toolkit.";
  else
    lib.why = what + " could not be loaded; tried:" + tried + "\nInstall CUDA 13 or 12 (the toolkit or the pip " +
              "wheels), or set " + override_variable + " to the library's path.";
  return lib;
}

void* library_symbol(void* lib, const char* name, const std::string& what, std::string& why) {
  void* p = dlsym(lib, name);
  if (!p && why.empty()) why = what + " lacks " + name;
  return p;
}

}  // namespace i8g

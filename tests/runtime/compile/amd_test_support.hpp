// Helpers for the AMD backend tests: the seed's TP4 shapes, their untuned default configs, and
// an independent reading of code-object metadata through llvm-readelf-14 (not our parser).
#pragma once
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "generator/generator.hpp"

namespace i8g::test {

inline std::vector<GemmProblem> tp4_problems() {
  std::vector<GemmProblem> out;
  for (auto [n, k] : {std::pair{2560, 4096}, std::pair{4096, 2048}, std::pair{768, 4096}, std::pair{4096, 384}}) {
    GemmProblem p;
    p.n = n;
    p.k = k;
    out.push_back(p);  // nk, per token, per channel, bf16: the seed's contract
  }
  return out;
}

// The heuristic default of every M bucket up to 4096, deduplicated.
inline std::vector<KernelSpec> default_specs(const GemmProblem& p, const Target& t) {
  std::vector<KernelSpec> out;
  std::set<std::string> seen;
  for (int64_t m : m_buckets(4096)) {
    KernelSpec s{p, heuristic_default(p, t, m), t.arch};
    if (seen.insert(s.name()).second) out.push_back(s);
  }
  return out;
}

// "key: value" lines of the kernel whose ".name" is `symbol`, from llvm-readelf-14 --notes.
// Empty when llvm-readelf-14 is absent.
inline std::map<std::string, std::string> readelf_kernel_fields(const std::vector<uint8_t>& elf,
                                                                 const std::string& symbol) {
  std::map<std::string, std::string> out;
  char path[] = "/tmp/i8g_amd_co_XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0) return out;
  close(fd);
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(elf.data()), std::streamsize(elf.size()));
  const std::string cmd = std::string("llvm-readelf-14 --notes ") + path + " 2>/dev/null";
  FILE* f = popen(cmd.c_str(), "r");
  std::string text;
  char buf[4096];
  while (f && fgets(buf, sizeof buf, f)) text += buf;
  if (f) pclose(f);
  unlink(path);
  // Kernels are YAML list items starting with "  - ."; collect each item's scalar fields.
  std::istringstream in(text);
  std::string line;
  std::map<std::string, std::string> cur;
  auto flush = [&] {
    if (cur.count(".name") && cur[".name"] == symbol) out = cur;
    cur.clear();
  };
  while (std::getline(in, line)) {
    if (line.rfind("  - .", 0) == 0) flush();
    if (line.rfind("amdhsa.", 0) == 0) flush();
    const size_t dot = line.find('.'), colon = line.find(':', dot == std::string::npos ? 0 : dot);
    if (dot == std::string::npos || colon == std::string::npos) continue;
    // Only the kernel's own keys (indent 4), not those of its .args items (indent 8).
    if (dot != 4 || !(line.rfind("  - .", 0) == 0 || line.rfind("    .", 0) == 0)) continue;
    std::string value = line.substr(colon + 1);
    value.erase(0, value.find_first_not_of(' '));
    cur[line.substr(dot, colon - dot)] = value;
  }
  flush();
  return out;
}

}  // namespace i8g::test

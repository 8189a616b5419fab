#include "runtime/compile/full_source.hpp"

#include <fmt/format.h>

#include <regex>
#include <set>
#include <sstream>

#include "core/embedded.hpp"
#include "core/error.hpp"

namespace i8g {
namespace {

const EmbeddedFile* find_template(const std::string& path) {
  for (const EmbeddedFile& f : embedded_templates())
    if (path == f.path) return &f;
  return nullptr;
}

bool is_pragma_once(const std::string& line) {
  static const std::regex re(R"(^\s*#\s*pragma\s+once\s*(//.*)?$)");
  return std::regex_match(line, re);
}

// Include-once as the preprocessor sees it: a `#pragma once`, or a guard (the first two
// directives are `#ifndef X` and `#define X`). Inlining such a file a second time adds nothing.
bool include_once(const std::string& text) {
  static const std::regex directive(R"(^\s*#\s*(\w+)\s*(\w*))");
  std::istringstream in(text);
  std::string line, guard;
  int seen = 0;
  while (std::getline(in, line)) {
    if (is_pragma_once(line)) return true;
    std::smatch m;
    if (seen >= 2 || !std::regex_search(line, m, directive)) continue;
    if (seen == 0) {
      if (m[1] != "ifndef") seen = 2;  // the first directive decides: not a guard
      else guard = m[2], seen = 1;
    } else {
      if (m[1] == "define" && m[2] == guard) return true;
      seen = 2;
    }
  }
  return false;
}

void inline_into(const std::string& code, std::set<std::string>& done, int depth, std::string& out) {
  if (depth > 64) throw Error(ErrorKind::internal, "inline_templates", "includes nest more than 64 deep (a cycle?)");
  static const std::regex include(R"re(^\s*#\s*include\s*"([^"]+)".*$)re");
  std::istringstream in(code);
  std::string line;
  while (std::getline(in, line)) {
    std::smatch m;
    const EmbeddedFile* f = std::regex_match(line, m, include) ? find_template(m[1]) : nullptr;
    if (!f) {
      if (depth == 0 || !is_pragma_once(line)) out += line + "\n";
      continue;
    }
    const bool once = include_once(f->text);
    if (once && !done.insert(f->path).second) {
      out += fmt::format("// i8gemm: \"{}\" is inlined above\n", f->path);
      continue;
    }
    out += fmt::format("// ==== begin \"{}\" (inlined by i8gemm) ====\n", f->path);
    inline_into(f->text, done, depth + 1, out);
    out += fmt::format("// ==== end \"{}\" ====\n", f->path);
  }
}

}  // namespace

std::string inline_templates(const std::string& code) {
  std::set<std::string> done;
  std::string out;
  inline_into(code, done, 0, out);
  return out;
}

std::string full_source(const Source& src, const DumpHeader& h, bool inlined) {
  std::string out = fmt::format("// i8gemm kernel {}\n", src.name);
  out += fmt::format("// origin:   {}\n", h.origin);
  out += fmt::format("// arch:     {}\n", h.arch);
  out += fmt::format("// entry:    {} (the name expression to instantiate and look up)\n", src.entry);
  out += fmt::format("// compiler: {}\n", h.compiler);
  out += fmt::format("// options:  {}\n", fmt::join(h.options, " "));
  out += inlined ? "// templates: inlined below; compiles with no include path\n"
                 : "// templates: included from i8gemm's templates/ (give its path with -I)\n";
  out += "\n";
  out += inlined ? inline_templates(src.code) : src.code;
  return out;
}

}  // namespace i8g

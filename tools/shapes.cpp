#include "tools/shapes.hpp"

#include <fmt/format.h>

#include <regex>
#include <sstream>

#include "core/error.hpp"

namespace i8g {

NamedShape parse_shape(const std::string& text) {
  static const std::regex re(R"(^\s*(\d{1,9})\s*[xX]\s*(\d{1,9})\s*$)");
  std::smatch m;
  if (text.size() > 64 || !std::regex_match(text, m, re))
    throw Error("shape", fmt::format("'{}' is not a shape: write NxK, e.g. 2560x4096",
                                     text.substr(0, 64)));
  NamedShape s;
  s.n = std::stoll(m[1].str());
  s.k = std::stoll(m[2].str());
  if (s.n <= 0 || s.k <= 0)
    throw Error("shape", fmt::format("'{}': N and K must be positive", text));
  return s;
}

std::vector<NamedShape> parse_shapes_file(const std::string& text) {
  static const std::regex line_re(R"(^\s*(?:([A-Za-z_][A-Za-z0-9_.\-]{0,63})\s+)?(\S+)\s*$)");
  std::vector<NamedShape> out;
  std::istringstream in(text);
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (auto hash = line.find('#'); hash != std::string::npos) line.erase(hash);
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    std::smatch m;
    if (line.size() > 256 || !std::regex_match(line, m, line_re))
      throw Error("shapes file", fmt::format("line {}: expected '[name] NxK'", number));
    try {
      NamedShape s = parse_shape(m[2].str());
      s.name = m[1].str();
      out.push_back(s);
    } catch (const Error& e) {
      throw Error("shapes file", fmt::format("line {}: {}", number, e.message()));
    }
  }
  if (out.empty()) throw Error("shapes file", "no shapes in the file");
  return out;
}

std::vector<int64_t> parse_m_list(const std::string& text) {
  static const std::regex re(R"(^\s*(\d{1,9})\s*$)");
  std::vector<int64_t> out;
  std::istringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    std::smatch m;
    // The length check comes first: libstdc++'s regex recurses once per character, so a long
    // item (200k spaces) overflowed the stack.
    if (item.size() > 64 || !std::regex_match(item, m, re) || std::stoll(m[1].str()) <= 0)
      throw Error("--m", fmt::format("'{}' is not a positive M", item.substr(0, 64)));
    out.push_back(std::stoll(m[1].str()));
  }
  if (out.empty()) throw Error("--m", "no M values given");
  return out;
}

}  // namespace i8g

// Target shapes: "NxK" on the command line, or a shapes file of one "[name] NxK" per line
// ('#' starts a comment). Pure text in, structs out.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace i8g {

struct NamedShape {
  std::string name;  // may be empty
  int64_t n = 0;
  int64_t k = 0;
};

NamedShape parse_shape(const std::string& text);               // "2560x4096"; throws Error
std::vector<NamedShape> parse_shapes_file(const std::string& text);  // throws Error naming the line
std::vector<int64_t> parse_m_list(const std::string& text);    // "1,16,256"; throws Error

}  // namespace i8g

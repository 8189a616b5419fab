// Line-oriented parser for ptxas -v output. ptxas prints, per function:
//   ptxas info    : Compiling entry function '<sym>' for 'sm_90a'
//   ptxas info    : Function properties for <sym>
//   ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
//   ptxas info    : Used 18 registers, used 1 barriers, 4096 bytes smem, 380 bytes cmem[0]
// The "Used" line has no symbol, so it belongs to the function named last. Fields come and
// go with the arch (no cmem[0] on sm_90+, no smem when 0), so each is parsed on its own as
// "<number> <unit>" pairs separated by commas.
#include "runtime/report/ptxas_log.hpp"

#include <cctype>
#include <climits>
#include <sstream>
#include <vector>

namespace i8g {
namespace {

bool starts_with(const std::string& s, size_t pos, const char* prefix) {
  return s.compare(pos, std::char_traits<char>::length(prefix), prefix) == 0;
}

// Text between the first pair of single quotes after `from`, or "" if unbalanced.
std::string quoted(const std::string& line, size_t from, size_t* end = nullptr) {
  size_t a = line.find('\'', from);
  if (a == std::string::npos) return {};
  size_t b = line.find('\'', a + 1);
  if (b == std::string::npos) return {};
  if (end) *end = b + 1;
  return line.substr(a + 1, b - a - 1);
}

// Leading decimal integer of `s` (after spaces), clamped to int; false when none.
bool leading_int(const std::string& s, int* value, std::string* rest) {
  size_t i = 0;
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  size_t start = i;
  long long v = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
    if (v < INT_MAX) v = v * 10 + (s[i] - '0');
    ++i;
  }
  if (i == start) return false;
  *value = v > INT_MAX ? INT_MAX : static_cast<int>(v);
  size_t j = i;
  while (j < s.size() && std::isspace(static_cast<unsigned char>(s[j]))) ++j;
  *rest = s.substr(j);
  while (!rest->empty() && std::isspace(static_cast<unsigned char>(rest->back()))) rest->pop_back();
  return true;
}

// Applies each "N unit" item of a comma-separated list to the function's fields.
void apply_items(const std::string& list, PtxasFunction* f) {
  std::stringstream ss(list);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (starts_with(item, 0, " used ")) item = item.substr(5);  // "used 1 barriers"
    int v = 0;
    std::string unit;
    if (!leading_int(item, &v, &unit)) continue;
    if (unit == "registers") f->registers = v;
    else if (unit == "barriers") f->barriers = v;
    else if (unit == "bytes smem") f->smem_bytes = v;
    else if (unit == "bytes cmem[0]") f->cmem0_bytes = v;
    else if (unit == "bytes stack frame") f->stack_frame_bytes = v;
    else if (unit == "bytes spill stores") f->spill_store_bytes = v;
    else if (unit == "bytes spill loads") f->spill_load_bytes = v;
    else if (unit == "bytes cumulative stack size") f->cumulative_stack_bytes = v;
  }
}

}  // namespace

std::map<std::string, PtxasFunction> parse_ptxas_log(const std::string& log) {
  std::map<std::string, PtxasFunction> out;
  std::string current;  // the function the next property lines belong to
  std::stringstream ss(log);
  std::string line;
  while (std::getline(ss, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!starts_with(line, 0, "ptxas")) continue;
    size_t body = line.find_first_of(":.", 5);
    if (body == std::string::npos) continue;
    std::string text = line.substr(body + 1);
    size_t lead = text.find_first_not_of(' ');
    text = lead == std::string::npos ? std::string() : text.substr(lead);

    if (starts_with(text, 0, "Compiling entry function ") || starts_with(text, 0, "Function properties for ") ||
        starts_with(text, 0, "Compiling function ")) {
      std::string sym;
      size_t end = 0;
      if (starts_with(text, 0, "Function properties for ")) {
        sym = text.substr(24);
        while (!sym.empty() && (sym.back() == ' ' || sym.back() == ':')) sym.pop_back();
      } else {
        sym = quoted(text, 0, &end);
      }
      if (sym.empty()) {
        current.clear();
        continue;
      }
      current = sym;
      PtxasFunction& f = out[sym];
      f.symbol = sym;
      if (starts_with(text, 0, "Compiling entry function ")) {
        f.entry = true;
        f.arch = quoted(text, end);
      }
    } else if (current.empty()) {
      continue;
    } else if (starts_with(text, 0, "Used ")) {
      apply_items(text.substr(4), &out[current]);
    } else if (text.find("bytes stack frame") != std::string::npos) {
      apply_items(text, &out[current]);
    }
  }
  return out;
}

}  // namespace i8g

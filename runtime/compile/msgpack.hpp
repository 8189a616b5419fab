// A small, bounds-checked MessagePack decoder for the AMDGPU metadata note: a value tree with
// a nesting limit; malformed or truncated input throws Error. Extension and binary payloads
// are skipped over (the note has none that matter).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace i8g::msgpack {

struct Value {
  enum class Kind { nil, boolean, integer, floating, string, array, map, other } kind = Kind::nil;
  bool b = false;
  int64_t i = 0;  // integers; unsigned values above INT64_MAX are clamped
  double f = 0;
  std::string s;
  std::vector<Value> items;                       // array
  std::vector<std::pair<Value, Value>> entries;   // map, in order
  const Value* get(const std::string& key) const;  // map lookup by string key; nullptr if absent
};

Value decode(const uint8_t* data, size_t size);

}  // namespace i8g::msgpack

#include "runtime/compile/msgpack.hpp"

#include <cstring>

#include "core/error.hpp"

namespace i8g::msgpack {
namespace {

constexpr int kMaxDepth = 32;

class Decoder {
 public:
  Decoder(const uint8_t* d, size_t n) : d_(d), n_(n) {}
  Value value(int depth);
  bool done() const { return pos_ == n_; }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw Error("msgpack::decode", what + " at offset " + std::to_string(pos_));
  }
  void need(uint64_t len) const {
    if (len > n_ - pos_) fail("truncated input");
  }
  uint64_t be(int bytes) {
    need(bytes);
    uint64_t v = 0;
    for (int k = 0; k < bytes; ++k) v = (v << 8) | d_[pos_ + k];
    pos_ += bytes;
    return v;
  }
  std::string bytes(uint64_t len) {
    need(len);
    std::string s(reinterpret_cast<const char*>(d_ + pos_), len);
    pos_ += len;
    return s;
  }
  // Every element takes at least one byte: a count beyond what is left is malformed (and
  // would otherwise reserve unbounded memory).
  uint64_t count(uint64_t c, int min_bytes) const {
    if (c > (n_ - pos_) / uint64_t(min_bytes)) fail("element count beyond the input");
    return c;
  }
  Value array(uint64_t c, int depth) {
    Value v;
    v.kind = Value::Kind::array;
    c = count(c, 1);
    v.items.reserve(c);
    for (uint64_t k = 0; k < c; ++k) v.items.push_back(value(depth + 1));
    return v;
  }
  Value map(uint64_t c, int depth) {
    Value v;
    v.kind = Value::Kind::map;
    c = count(c, 2);
    v.entries.reserve(c);
    for (uint64_t k = 0; k < c; ++k) {
      Value key = value(depth + 1);
      v.entries.emplace_back(std::move(key), value(depth + 1));
    }
    return v;
  }
  Value integer(int64_t i) {
    Value v;
    v.kind = Value::Kind::integer;
    v.i = i;
    return v;
  }
  Value string(uint64_t len) {
    Value v;
    v.kind = Value::Kind::string;
    v.s = bytes(len);
    return v;
  }
  Value skip(uint64_t len) {
    need(len);
    pos_ += len;
    Value v;
    v.kind = Value::Kind::other;
    return v;
  }

  const uint8_t* d_;
  size_t n_;
  size_t pos_ = 0;
};

Value Decoder::value(int depth) {
  if (depth > kMaxDepth) fail("nesting deeper than 32");
  const uint8_t t = uint8_t(be(1));
  if (t <= 0x7f) return integer(t);
  if (t >= 0xe0) return integer(int8_t(t));
  if (t >= 0x80 && t <= 0x8f) return map(t & 0x0f, depth);
  if (t >= 0x90 && t <= 0x9f) return array(t & 0x0f, depth);
  if (t >= 0xa0 && t <= 0xbf) return string(t & 0x1f);
  Value v;
  switch (t) {
    case 0xc0: return v;
    case 0xc2: case 0xc3: v.kind = Value::Kind::boolean; v.b = t == 0xc3; return v;
    case 0xc4: return skip(be(1));
    case 0xc5: return skip(be(2));
    case 0xc6: return skip(be(4));
    case 0xc7: { const uint64_t len = be(1); return skip(len + 1); }
    case 0xc8: { const uint64_t len = be(2); return skip(len + 1); }
    case 0xc9: { const uint64_t len = be(4); return skip(len + 1); }
    case 0xca: { const uint32_t u = uint32_t(be(4)); float f; std::memcpy(&f, &u, 4); v.kind = Value::Kind::floating; v.f = f; return v; }
    case 0xcb: { const uint64_t u = be(8); double f; std::memcpy(&f, &u, 8); v.kind = Value::Kind::floating; v.f = f; return v; }
    case 0xcc: return integer(int64_t(be(1)));
    case 0xcd: return integer(int64_t(be(2)));
    case 0xce: return integer(int64_t(be(4)));
    case 0xcf: { const uint64_t u = be(8); return integer(u > uint64_t(INT64_MAX) ? INT64_MAX : int64_t(u)); }
    case 0xd0: return integer(int8_t(be(1)));
    case 0xd1: return integer(int16_t(be(2)));
    case 0xd2: return integer(int32_t(be(4)));
    case 0xd3: return integer(int64_t(be(8)));
    case 0xd4: return skip(2);
    case 0xd5: return skip(3);
    case 0xd6: return skip(5);
    case 0xd7: return skip(9);
    case 0xd8: return skip(17);
    case 0xd9: return string(be(1));
    case 0xda: return string(be(2));
    case 0xdb: return string(be(4));
    case 0xdc: return array(be(2), depth);
    case 0xdd: return array(be(4), depth);
    case 0xde: return map(be(2), depth);
    case 0xdf: return map(be(4), depth);
  }
  fail("unused type byte 0xc1");
}

}  // namespace

const Value* Value::get(const std::string& key) const {
  for (const auto& [k, v] : entries)
    if (k.kind == Kind::string && k.s == key) return &v;
  return nullptr;
}

Value decode(const uint8_t* data, size_t size) {
  Decoder d(data, size);
  Value v = d.value(0);
  return v;  // trailing bytes (note padding) are allowed
}

}  // namespace i8g::msgpack

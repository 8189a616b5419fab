// One table per problem enum: every encoding of a value in one row, so that problem keys,
// kernel names, the CLI, the C ABI, the device templates and buffer sizes cannot drift apart.
// The lookups below are the only conversions; nothing else spells these encodings out.
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "generator/types.hpp"
#include "i8gemm/i8gemm.h"
#include "templates/i8g_codes.h"

namespace i8g {

template <class E>
struct EnumRow {
  E value;
  const char* key;  // in problem keys and kernel names
  const char* cli;  // the CLI's flag value (tools/cli_common.cpp)
  int c_value;      // the C ABI's constant (include/i8gemm/i8gemm.h)
  int device;       // the template argument code (templates/i8g_codes.h)
  int bytes;        // bytes per element of the buffer it describes; 0 where none does
};

inline constexpr EnumRow<WeightLayout> kWeightLayoutRows[] = {
    {WeightLayout::nk, "nk", "nk", I8GEMM_WEIGHT_NK, kLayoutNK, 0},
    {WeightLayout::kn, "kn", "kn", I8GEMM_WEIGHT_KN, kLayoutKN, 0},
};
inline constexpr EnumRow<ActScale> kActScaleRows[] = {
    {ActScale::per_tensor, "tens", "tensor", I8GEMM_SCALE_PER_TENSOR, kActPerTensor, 0},
    {ActScale::per_token, "tok", "token", I8GEMM_SCALE_PER_TOKEN, kActPerToken, 0},
};
inline constexpr EnumRow<WeightScale> kWeightScaleRows[] = {
    {WeightScale::per_tensor, "tens", "tensor", I8GEMM_SCALE_PER_TENSOR, kWeightPerTensor, 0},
    {WeightScale::per_channel, "ch", "channel", I8GEMM_SCALE_PER_CHANNEL, kWeightPerChannel, 0},
};
inline constexpr EnumRow<OutType> kOutTypeRows[] = {
    {OutType::bf16, "bf16", "bf16", I8GEMM_OUT_BF16, kOutBF16, 2},
    {OutType::f16, "f16", "f16", I8GEMM_OUT_F16, kOutF16, 2},
    {OutType::f32, "f32", "f32", I8GEMM_OUT_F32, kOutF32, 4},
    {OutType::i32, "i32", "i32", I8GEMM_OUT_I32, kOutI32, 4},
};

template <class E> struct EnumTable;
template <> struct EnumTable<WeightLayout> { static constexpr const auto& rows = kWeightLayoutRows; };
template <> struct EnumTable<ActScale> { static constexpr const auto& rows = kActScaleRows; };
template <> struct EnumTable<WeightScale> { static constexpr const auto& rows = kWeightScaleRows; };
template <> struct EnumTable<OutType> { static constexpr const auto& rows = kOutTypeRows; };

// The row of a value. Every enumerator has one (tests/generator/problem_enums_test.cpp).
template <class E>
constexpr const EnumRow<E>& row_of(E v) {
  for (const EnumRow<E>& r : EnumTable<E>::rows)
    if (r.value == v) return r;
  return EnumTable<E>::rows[0];
}

template <class E> int device_code(E v) { return row_of(v).device; }
template <class E> int c_value(E v) { return row_of(v).c_value; }
template <class E> const char* cli_text(E v) { return row_of(v).cli; }

// The value whose key / CLI text / C constant is `k`; nullopt when none is.
template <class E>
std::optional<E> from_key(const std::string& k) {
  for (const EnumRow<E>& r : EnumTable<E>::rows)
    if (k == r.key) return r.value;
  return std::nullopt;
}
template <class E>
std::optional<E> from_cli(const std::string& k) {
  for (const EnumRow<E>& r : EnumTable<E>::rows)
    if (k == r.cli) return r.value;
  return std::nullopt;
}
template <class E>
std::optional<E> from_c_value(int v) {
  for (const EnumRow<E>& r : EnumTable<E>::rows)
    if (v == r.c_value) return r.value;
  return std::nullopt;
}

template <class E>
std::vector<std::string> cli_choices() {
  std::vector<std::string> out;
  for (const EnumRow<E>& r : EnumTable<E>::rows) out.push_back(r.cli);
  return out;
}

// "nk|kn": the keys as a regular-expression alternation (problem keys, kernel names).
template <class E>
std::string key_alternation() {
  std::string out;
  for (const EnumRow<E>& r : EnumTable<E>::rows) out += (out.empty() ? "" : "|") + std::string(r.key);
  return out;
}

}  // namespace i8g

// docs/quantization.md written out on the CPU, for comparison with i8gemm_quantize: true
// float division, round half to even (std::nearbyint in the default rounding mode), explicit
// clamps. Compiled without contraction concerns: there is no multiply-add here.
//
// One reading of the docs is pinned here and should be stated there: the asymmetric range is
// taken over the values AND zero (min(x, 0) .. max(x, 0)), as the device code does; the docs'
// literal "(max(x) - min(x)) / 255" breaks down for an all-positive row (z clamps to -128 and
// q saturates). For data that straddles zero (all random data below) the two readings agree.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "runtime/tune/reference.hpp"

namespace i8g::gputest {

struct HostQuantized {
  std::vector<int8_t> q;
  std::vector<float> scale;
  std::vector<int32_t> zero_point;  // empty when symmetric
};

// Input element i as the device reads it (bf16/f16 are widened exactly).
inline float input_value(int in_type, const std::vector<uint8_t>& raw, size_t i) {
  if (in_type == 2) {
    float f;
    std::memcpy(&f, raw.data() + i * 4, 4);
    return f;
  }
  uint16_t h;
  std::memcpy(&h, raw.data() + i * 2, 2);
  return in_type == 0 ? bf16_to_f32(h) : f16_to_f32(h);
}

inline int32_t rne_int(float v) { return int32_t(std::nearbyint(v)); }

// Scale and zero point of one group (a row, or the whole tensor) with range [lo, hi] that
// includes 0.
inline void host_scale(float lo, float hi, bool asym, float* s, int32_t* z) {
  if (asym) {
    *s = hi > lo ? (hi - lo) / 255.0f : 1.0f;
    *z = std::clamp(-128 - rne_int(lo / *s), -128, 127);
  } else {
    const float amax = std::max(-lo, hi);
    *s = amax > 0.0f ? amax / 127.0f : 1.0f;
    *z = 0;
  }
}

inline int8_t host_quantize_one(float x, float s, int32_t z, bool asym) {
  const int32_t q = rne_int(x / s) + z;
  return int8_t(asym ? std::clamp(q, -128, 127) : std::clamp(q, -127, 127));
}

inline HostQuantized host_quantize(int in_type, const std::vector<uint8_t>& raw, int64_t m, int64_t k,
                                   bool per_token, bool asym) {
  HostQuantized out;
  out.q.resize(size_t(m * k));
  const int64_t groups = per_token ? m : 1;
  const int64_t per_group = per_token ? k : m * k;
  out.scale.resize(size_t(groups));
  if (asym) out.zero_point.resize(size_t(groups));
  for (int64_t g = 0; g < groups; ++g) {
    float lo = 0.0f, hi = 0.0f;
    for (int64_t i = g * per_group; i < (g + 1) * per_group; ++i) {
      const float v = input_value(in_type, raw, size_t(i));
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
    float s;
    int32_t z;
    host_scale(lo, hi, asym, &s, &z);
    out.scale[size_t(g)] = s;
    if (asym) out.zero_point[size_t(g)] = z;
    for (int64_t i = g * per_group; i < (g + 1) * per_group; ++i)
      out.q[size_t(i)] = host_quantize_one(input_value(in_type, raw, size_t(i)), s, z, asym);
  }
  return out;
}

// Raw input bytes for in_type (0 bf16, 1 f16, 2 f32) from float values (rounded to nearest even).
inline std::vector<uint8_t> encode_input(int in_type, const std::vector<float>& v) {
  const size_t es = in_type == 2 ? 4 : 2;
  std::vector<uint8_t> raw(v.size() * es);
  for (size_t i = 0; i < v.size(); ++i) {
    if (in_type == 2) {
      std::memcpy(raw.data() + i * 4, &v[i], 4);
    } else {
      const uint16_t h = in_type == 0 ? f32_to_bf16_rne(v[i]) : f32_to_f16_rne(v[i]);
      std::memcpy(raw.data() + i * 2, &h, 2);
    }
  }
  return raw;
}

}  // namespace i8g::gputest

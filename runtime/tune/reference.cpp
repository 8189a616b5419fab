// Compiled with -ffp-contract=off (runtime/CMakeLists.txt): every multiply and add rounds
// on its own, as the device epilogue's __fmul_rn / __fadd_rn do.
#include "runtime/tune/reference.hpp"

#include <algorithm>
#include <cstring>
#include <functional>
#include <thread>

#include "core/cpus.hpp"

namespace i8g {

namespace {
// Rows [m0, m1) of the int32 product.
void accumulate_rows(const GemmProblem& p, const HostOperands& in, int64_t m0, int64_t m1, int32_t* acc) {
  const int64_t N = p.n, K = p.k;
  for (int64_t m = m0; m < m1; ++m) {
    const int8_t* xr = in.x.data() + m * K;
    for (int64_t n = 0; n < N; ++n) {
      int32_t s = 0;
      if (p.layout == WeightLayout::nk) {
        const int8_t* wr = in.w.data() + n * K;
        for (int64_t k = 0; k < K; ++k) s += int32_t(xr[k]) * int32_t(wr[k]);
      } else {
        for (int64_t k = 0; k < K; ++k) s += int32_t(xr[k]) * int32_t(in.w[size_t(k * N + n)]);
      }
      acc[size_t(m * N + n)] = s;
    }
  }
}
}  // namespace

// Rows are independent: large products are split by rows over the usable CPUs (the GPU tests'
// references for thousands of rows took seconds each on one core).
std::vector<int32_t> reference_accumulate(const GemmProblem& p, const HostOperands& in) {
  const int64_t M = in.m, N = p.n, K = p.k;
  std::vector<int32_t> acc(size_t(M * N), 0);
  constexpr int64_t kWorkPerThread = int64_t(1) << 26;  // multiply-adds; below this one thread
  const int64_t want = std::max<int64_t>(1, M * N * K / kWorkPerThread);
  const int64_t threads = std::min<int64_t>({want, int64_t(usable_cpus()), M});
  if (threads <= 1) {
    accumulate_rows(p, in, 0, M, acc.data());
    return acc;
  }
  std::vector<std::thread> pool;
  const int64_t per = (M + threads - 1) / threads;
  for (int64_t m0 = 0; m0 < M; m0 += per)
    pool.emplace_back(accumulate_rows, std::cref(p), std::cref(in), m0, std::min(M, m0 + per), acc.data());
  for (std::thread& t : pool) t.join();
  return acc;
}

std::vector<int32_t> weight_colsum(const GemmProblem& p, const std::vector<int8_t>& w) {
  std::vector<int32_t> cs(size_t(p.n), 0);
  for (int64_t n = 0; n < p.n; ++n)
    for (int64_t k = 0; k < p.k; ++k)
      cs[size_t(n)] += p.layout == WeightLayout::nk ? w[size_t(n * p.k + k)] : w[size_t(k * p.n + n)];
  return cs;
}

uint16_t f32_to_bf16_rne(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return uint16_t((u >> 16) | 0x40u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return uint16_t(u >> 16);
}

uint16_t f32_to_f16_rne(float f) {
  _Float16 h = static_cast<_Float16>(f);  // IEEE round to nearest even
  uint16_t bits;
  std::memcpy(&bits, &h, 2);
  return bits;
}

float bf16_to_f32(uint16_t h) {
  uint32_t u = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

float f16_to_f32(uint16_t h) {
  _Float16 v;
  std::memcpy(&v, &h, 2);
  return static_cast<float>(v);
}

std::vector<uint8_t> reference_output(const GemmProblem& p, const HostOperands& in) {
  const std::vector<int32_t> acc = reference_accumulate(p, in);
  const int64_t M = in.m, N = p.n;
  const size_t es = out_element_size(p.out);
  std::vector<uint8_t> out(size_t(M * N) * es);
  for (int64_t m = 0; m < M; ++m) {
    for (int64_t n = 0; n < N; ++n) {
      int32_t a = acc[size_t(m * N + n)];
      if (p.asymmetric) {
        const int32_t zp = in.x_zero_point[p.act_scale == ActScale::per_token ? size_t(m) : 0];
        a = int32_t(uint32_t(a) - uint32_t(zp) * uint32_t(in.w_colsum[size_t(n)]));
      }
      uint8_t* dst = out.data() + size_t(m * N + n) * es;
      if (p.out == OutType::i32) {
        std::memcpy(dst, &a, 4);
        continue;
      }
      const float sx = in.x_scale[p.act_scale == ActScale::per_token ? size_t(m) : 0];
      const float sw = in.w_scale[p.weight_scale == WeightScale::per_channel ? size_t(n) : 0];
      float y = float(a);  // round to nearest even, as __int2float_rn
      y = y * sx;
      y = y * sw;
      if (p.bias) y = y + in.bias[size_t(n)];
      if (p.out == OutType::f32) {
        std::memcpy(dst, &y, 4);
      } else {
        const uint16_t h = p.out == OutType::bf16 ? f32_to_bf16_rne(y) : f32_to_f16_rne(y);
        std::memcpy(dst, &h, 2);
      }
    }
  }
  return out;
}

}  // namespace i8g

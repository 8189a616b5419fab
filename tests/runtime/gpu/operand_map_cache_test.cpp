// OperandMapCache (runtime/gpu/tensor_map.hpp) with a stand-in encoder, no GPU: a map is encoded
// once per x address and M and once per w address, what comes back is what the encoder made for
// exactly those arguments, the oldest entry is replaced when a ring is full, a failed encode
// stores nothing, and launches on several threads share one cache safely.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#include "core/error.hpp"
#include "generator/generator.hpp"
#include "runtime/gpu/tensor_map.hpp"

namespace i8g {
namespace {

struct Made {
  const void* base;
  int64_t rows, k;
  int box_rows;
};
std::atomic<int> g_calls{0};

// A "map" whose bytes say what it was made from; throws for a base of 0x10 (a refused operand).
CUtensorMap fake_encode(const void* base, int64_t rows, int64_t k, int box_rows) {
  ++g_calls;
  if (reinterpret_cast<uintptr_t>(base) == 0x10) throw Error(ErrorKind::invalid_argument, "tensor map", "refused");
  CUtensorMap m{};
  const Made made{base, rows, k, box_rows};
  static_assert(sizeof(made) <= sizeof(m));
  std::memcpy(&m, &made, sizeof(made));
  return m;
}

Made made_of(const CUtensorMap& m) {
  Made made{};
  std::memcpy(&made, &m, sizeof(made));
  return made;
}

KernelSpec tma_spec() {  // a wgmma_tma kernel for 2560 x 4096 with a register store (no output map)
  const GemmProblem p{2560, 4096};
  Target t = Target::from_arch("sm_90a");
  return KernelSpec{p, heuristic_default(p, t, 1024), t.arch};
}

I8gArgs args(uintptr_t x, uintptr_t w, int64_t m) {
  I8gArgs a{};
  a.x = reinterpret_cast<const int8_t*>(x);
  a.w = reinterpret_cast<const int8_t*>(w);
  a.m = m;
  a.n = 2560;
  a.k = 4096;
  return a;
}

TEST(OperandMapCache, EncodesEachAddressOnceAndReturnsItsOwnMap) {
  const KernelSpec spec = tma_spec();
  ASSERT_EQ(spec.config.family, Family::wgmma_tma);
  ASSERT_EQ(spec.config.epilogue_store, 0);
  OperandMapCache cache(spec, 4, 8, fake_encode);
  const OperandMaps a = cache.maps(args(0x1000, 0x8000, 1024));
  EXPECT_EQ(cache.encodes(), 2u);
  EXPECT_EQ(made_of(a.x).base, reinterpret_cast<const void*>(0x1000));
  EXPECT_EQ(made_of(a.x).rows, 1024);
  EXPECT_EQ(made_of(a.x).k, 4096);
  EXPECT_EQ(made_of(a.x).box_rows, tma_box_rows(spec.config, 1024).x);
  EXPECT_EQ(made_of(a.w).base, reinterpret_cast<const void*>(0x8000));
  EXPECT_EQ(made_of(a.w).rows, 2560);
  EXPECT_EQ(made_of(a.w).box_rows, tma_box_rows(spec.config, 1024).w);

  // The same operands again: nothing encoded, the same maps.
  const OperandMaps b = cache.maps(args(0x1000, 0x8000, 1024));
  EXPECT_EQ(cache.encodes(), 2u);
  EXPECT_EQ(std::memcmp(&a.x, &b.x, sizeof(CUtensorMap)), 0);
  EXPECT_EQ(std::memcmp(&a.w, &b.w, sizeof(CUtensorMap)), 0);

  // Another M over the same x: its own map (x's rows and, below one tile, its box follow M);
  // the weight's is reused.
  const OperandMaps c = cache.maps(args(0x1000, 0x8000, 40));
  EXPECT_EQ(cache.encodes(), 3u);
  EXPECT_EQ(made_of(c.x).rows, 40);
  EXPECT_EQ(made_of(c.x).box_rows, tma_box_rows(spec.config, 40).x);
  // Another weight (the next layer of the same shape) with the first x: one encode, for w.
  const OperandMaps d = cache.maps(args(0x1000, 0x9000, 1024));
  EXPECT_EQ(cache.encodes(), 4u);
  EXPECT_EQ(made_of(d.w).base, reinterpret_cast<const void*>(0x9000));
  EXPECT_EQ(made_of(d.x).rows, 1024);
}

TEST(OperandMapCache, AFullRingReplacesItsOldestAndAFailedEncodeStoresNothing) {
  OperandMapCache cache(tma_spec(), 2, 2, fake_encode);
  cache.maps(args(0x1000, 0x8000, 64));
  cache.maps(args(0x2000, 0x8000, 64));
  EXPECT_EQ(cache.encodes(), 3u);  // x twice, w once
  cache.maps(args(0x3000, 0x8000, 64));  // replaces x 0x1000
  EXPECT_EQ(cache.encodes(), 4u);
  cache.maps(args(0x2000, 0x8000, 64));  // still there
  EXPECT_EQ(cache.encodes(), 4u);
  const OperandMaps again = cache.maps(args(0x1000, 0x8000, 64));  // gone: encoded again, right
  EXPECT_EQ(cache.encodes(), 5u);
  EXPECT_EQ(made_of(again.x).base, reinterpret_cast<const void*>(0x1000));

  EXPECT_THROW(cache.maps(args(0x10, 0x8000, 64)), Error);
  const size_t after = cache.encodes();
  EXPECT_THROW(cache.maps(args(0x10, 0x8000, 64)), Error) << "a refused operand is refused every time";
  EXPECT_EQ(cache.encodes(), after) << "a failed encode is not counted as stored";
}

TEST(OperandMapCache, ThreadsSharingOneCacheGetTheirOwnMaps) {
  OperandMapCache cache(tma_spec(), 32, 8, fake_encode);  // room for every (x, M) and w used below
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 2000; ++i) {
        const uintptr_t x = 0x1000 * uintptr_t(1 + (i + t) % 6), w = 0x100000 * uintptr_t(1 + i % 3);
        const int64_t m = 64 * (1 + t);
        const OperandMaps got = cache.maps(args(x, w, m));
        const Made mx = made_of(got.x), mw = made_of(got.w);
        if (mx.base != reinterpret_cast<const void*>(x) || mx.rows != m || mw.base != reinterpret_cast<const void*>(w))
          ++wrong;
      }
    });
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
  // 6 x addresses x 4 M and 3 weights: each encoded once (a miss encodes and stores under the
  // lock, so two threads never both encode one key).
  EXPECT_EQ(cache.encodes(), 6u * 4u + 3u);
}

}  // namespace
}  // namespace i8g

// OperandMapCache (runtime/gpu/tensor_map.hpp) with a stand-in encoder, no GPU: a map is encoded
// once per x address and M and once per w address, what comes back is what the encoder made for
// exactly those arguments, the oldest entry is replaced when a ring is full, and a failed encode
// stores nothing. (Several threads sharing one cache: tests/threads/.)
#include <gtest/gtest.h>

#include <cstring>

#include "tests/runtime/gpu/fake_tensor_map.hpp"

namespace i8g {
namespace {
using namespace test;

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

}  // namespace
}  // namespace i8g

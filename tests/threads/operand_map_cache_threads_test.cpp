// OperandMapCache (runtime/gpu/tensor_map.hpp) shared by several threads, as launches of one
// kernel from several serving threads share it: every thread gets the maps of its own operands,
// and each (address, M) is encoded once. No GPU (a stand-in encoder).
//
// In a test program of its own: linked into test_runtime, a test that starts threads moved that
// program's layout so that LeakSanitizer's stop-the-world tracer crashed at the exit of the
// NVRTC sm_90a tests after they passed ("DTLS 6 at 0x1033-…", "Tracer caught signal 11"), every
// run (google/sanitizers#1353; session 30, scripts/sanitize.sh).
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "tests/runtime/gpu/fake_tensor_map.hpp"

namespace i8g {
namespace {
using namespace test;

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

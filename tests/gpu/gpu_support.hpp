// Shared by the GPU tests: device buffers and streams over the dlopen'ed driver API, a fixture
// that makes device 0's primary context current and seeds a fresh RNG (printed on failure),
// one i8gemm context per process (kernels compiled once), random operands, a runner through
// the C ABI and a bit-exact comparison. Every GPU test skips where Driver::get() is null.
#pragma once
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "i8gemm/i8gemm.h"
#include "runtime/gpu/cuda_driver.hpp"
#include "runtime/tune/reference.hpp"

namespace i8g::gputest {

constexpr uint8_t kPoison = 0xA5;

// Device memory, freed on scope exit. Sizes of 0 allocate one byte so that pointers are valid.
class DevBuf {
 public:
  DevBuf() = default;
  explicit DevBuf(size_t bytes) : bytes_(bytes) { I8G_CU(cuMemAlloc(&p_, bytes ? bytes : 1)); }
  template <class T>
  explicit DevBuf(const std::vector<T>& v) : DevBuf(v.size() * sizeof(T)) { upload(v); }
  ~DevBuf() { reset(); }
  DevBuf(DevBuf&& o) noexcept : p_(o.p_), bytes_(o.bytes_) { o.p_ = 0; }
  DevBuf& operator=(DevBuf&& o) noexcept {
    if (this != &o) { reset(); p_ = o.p_; bytes_ = o.bytes_; o.p_ = 0; }
    return *this;
  }
  DevBuf(const DevBuf&) = delete;
  DevBuf& operator=(const DevBuf&) = delete;

  void reset() { if (p_) driver().cuMemFree(p_); p_ = 0; }
  CUdeviceptr ptr() const { return p_; }
  size_t bytes() const { return bytes_; }
  template <class T> T* as() const { return reinterpret_cast<T*>(p_); }
  template <class T> void upload(const std::vector<T>& v) {
    if (!v.empty()) I8G_CU(cuMemcpyHtoD(p_, v.data(), v.size() * sizeof(T)));
  }
  template <class T> std::vector<T> download(size_t count) const {
    std::vector<T> v(count);
    if (count) I8G_CU(cuMemcpyDtoH(v.data(), p_, count * sizeof(T)));
    return v;
  }
  void fill(uint8_t byte) { I8G_CU(cuMemsetD8(p_, byte, bytes_ ? bytes_ : 1)); }

 private:
  CUdeviceptr p_ = 0;
  size_t bytes_ = 0;
};

class Stream {
 public:
  Stream() { I8G_CU(cuStreamCreate(&s_, CU_STREAM_NON_BLOCKING)); }
  ~Stream() { if (s_) driver().cuStreamDestroy(s_); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  CUstream get() const { return s_; }
  void* handle() const { return s_; }
  void sync() const { I8G_CU(cuStreamSynchronize(s_)); }

 private:
  CUstream s_ = nullptr;
};

// The process-wide i8gemm context (one cache file: $I8GEMM_TEST_CACHE, else a fresh temp file
// removed at exit), so that each kernel is compiled once per run. Created on first use.
i8gemm_context* shared_ctx();
// The cache path shared_ctx() uses (for tests that create their own context).
std::string test_cache_path();
// The seed of the running test (for threads that derive their own generators).
uint32_t current_seed();

// Makes device 0's primary context current (retained for the test) and seeds rng_ from
// std::random_device, or from $I8GEMM_TEST_SEED to reproduce a failure; the seed is traced.
class GpuTest : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;
  std::mt19937 rng_;
  uint32_t seed_ = 0;
  CUcontext ctx_ = nullptr;
  CUdevice dev_ = 0;

 private:
  std::optional<::testing::ScopedTrace> trace_;
};

// Skips the calling test (from a fixture's SetUp or a test body) when there is no device.
#define I8G_REQUIRE_GPU()                                                               \
  do {                                                                                  \
    std::string why_;                                                                   \
    if (!::i8g::Driver::get(&why_)) GTEST_SKIP() << "no CUDA device: " << why_;         \
  } while (0)

// ---- problems and operands ------------------------------------------------------------------

i8gemm_problem make_problem(int64_t n, int64_t k, i8gemm_weight_layout layout = I8GEMM_WEIGHT_NK,
                            i8gemm_scale act = I8GEMM_SCALE_PER_TOKEN,
                            i8gemm_scale wsc = I8GEMM_SCALE_PER_CHANNEL,
                            i8gemm_out out = I8GEMM_OUT_BF16, bool bias = false, bool asym = false);
GemmProblem to_gemm_problem(const i8gemm_problem& p);
std::string describe(const i8gemm_problem& p);  // the problem key, e.g. n100_k68_nk_tok_ch_bf16

std::vector<int8_t> random_i8(std::mt19937& rng, size_t n, int lo = -127, int hi = 127);
std::vector<float> random_f32(std::mt19937& rng, size_t n, float lo, float hi);
std::vector<int32_t> random_i32(std::mt19937& rng, size_t n, int lo, int hi);

// Random operands for m rows of p: x, w in [-127,127] (x in [-128,127] when asymmetric),
// positive scales, bias in [-4,4], zero points in [-128,127]; w_colsum left empty.
HostOperands random_operands(const i8gemm_problem& p, int64_t m, std::mt19937& rng);

// reference_output, transposing [K,N] weights to [N,K] first when the problem is large (same
// values w(n,k), so the same bytes; the transposed walk is cache-friendly).
std::vector<uint8_t> reference_bytes(const i8gemm_problem& p, const HostOperands& h);

// Empty when got == want byte for byte; else a report: the number of differing elements, the
// first few (m,n) with both values decoded, and how many still hold the poison pattern.
std::string compare_outputs(const i8gemm_problem& p, int64_t m, const std::vector<uint8_t>& got,
                            const std::vector<uint8_t>& want);

// Operands on the device for one problem; asymmetric weights get their colsum from
// i8gemm_weight_colsum (checked against the CPU's, exactly, by upload()).
class DeviceGemm {
 public:
  DeviceGemm(i8gemm_context* ctx, const i8gemm_problem& p, HostOperands& h, const Stream& s);
  i8gemm_args args() const;
  void poison_out(const Stream& s);  // async, kPoison in every byte
  std::vector<uint8_t> out_bytes() const;
  // Replaces x contents (and per-row operands) in place: the addresses stay.
  void update(const HostOperands& h);
  size_t out_bytes_count() const { return out_size_; }
  DevBuf x, w, xs, ws, bias, zp, colsum, out;

 private:
  i8gemm_problem p_;
  int64_t m_;
  size_t out_size_;
};

// One step of a repeated-run or graph-replay test: new random activations and per-row
// operands for m rows uploaded into d in place (the weights and their scales stay `h`'s),
// poison, `launch` on s (an eager run or a graph launch of d's addresses), sync, and the
// comparison with the reference of what was uploaded (empty when exact).
std::string rerun_with_new_activations(const i8gemm_problem& p, int64_t m, const HostOperands& h, DeviceGemm& d,
                                       const Stream& s, std::mt19937& rng, const std::function<void()>& launch);

// Stores a tuned winner `candidate` ("cublaslt:algo=0" or a kernel name) for p covering every M
// up to m_bucket, under the key prepare computes on device 0 and this toolchain (with another
// generator hash where one is given: a winner tuned before an upgrade).
void put_winner(const std::string& cache_path, const i8gemm_problem& p, int64_t m_bucket,
                const std::string& candidate, const std::string& generator_hash = "");
// A winner "cublaslt:algo=0": prepare then takes the cuBLASLt path (an int32 accumulator of
// max_m x N allocated in prepare, cuBLASLt, then the dequant kernel).
void put_cublaslt_winner(const std::string& cache_path, const i8gemm_problem& p, int64_t m_bucket);

// Prepares, poisons, runs through the C ABI, syncs and compares against the reference.
// Returns the comparison report (empty when exact); fails the test on a non-success status.
std::string run_and_compare(i8gemm_context* ctx, const i8gemm_problem& p, int64_t m,
                            std::mt19937& rng, HostOperands* operands = nullptr);

#define I8G_OK(call)                                                                      \
  do {                                                                                    \
    const i8gemm_status st_ = (call);                                                     \
    ASSERT_EQ(st_, I8GEMM_SUCCESS) << #call << ": " << i8gemm_status_string(st_) << ": " \
                                   << i8gemm_last_error();                                \
  } while (0)

}  // namespace i8g::gputest

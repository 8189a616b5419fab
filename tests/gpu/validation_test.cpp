// Argument validation through the C ABI with a real device (every refusal names the argument
// in i8gemm_last_error()), and concurrent use of one context from several threads.
#include <fmt/format.h>

#include <cstdlib>
#include <thread>

#include "tests/gpu/gpu_support.hpp"

namespace i8g::gputest {
namespace {

class Validation : public GpuTest {
 protected:
  void SetUp() override {
    GpuTest::SetUp();
    if (IsSkipped()) return;
    I8G_OK(i8gemm_prepare(shared_ctx(), &p_, 32));
    h_ = random_operands(p_, 32, rng_);
    stream_.emplace();
    d_ = std::make_unique<DeviceGemm>(shared_ctx(), p_, h_, s_());
  }
  void TearDown() override {
    d_.reset();
    stream_.reset();
    GpuTest::TearDown();
  }
  i8gemm_status run(const i8gemm_args& a) { return i8gemm_run(shared_ctx(), &p_, &a, s_().handle()); }

  // K = 4096: the kernel uses 16-byte loads, so x and w must be 16-byte aligned.
  i8gemm_problem p_ = make_problem(256, 4096);
  HostOperands h_;
  std::optional<Stream> stream_;  // made in SetUp: constructing it needs a device
  const Stream& s_() const { return *stream_; }
  std::unique_ptr<DeviceGemm> d_;
};

#define EXPECT_REFUSED(call, status, needle)                                                    \
  do {                                                                                          \
    const i8gemm_status st_ = (call);                                                           \
    const std::string err_ = i8gemm_last_error();                                               \
    EXPECT_EQ(st_, status) << #call << " -> " << i8gemm_status_string(st_) << ": " << err_;     \
    EXPECT_NE(err_.find(needle), std::string::npos) << #call << ": last_error \"" << err_        \
                                                    << "\" should mention \"" << needle << "\""; \
  } while (0)

#define EXPECT_INVALID(call, needle) EXPECT_REFUSED(call, I8GEMM_ERROR_INVALID_ARGUMENT, needle)

TEST_F(Validation, NullPointersAreRefusedByName) {
  EXPECT_INVALID(i8gemm_run(shared_ctx(), &p_, nullptr, s_().handle()), "args");
  const i8gemm_args good = d_->args();
  EXPECT_INVALID(i8gemm_run(shared_ctx(), nullptr, &good, s_().handle()), "problem");
  struct Field { const char* name; void (*clear)(i8gemm_args&); };
  const Field fields[] = {
      {"x", [](i8gemm_args& a) { a.x = nullptr; }},
      {"w", [](i8gemm_args& a) { a.w = nullptr; }},
      {"out", [](i8gemm_args& a) { a.out = nullptr; }},
      {"x_scale", [](i8gemm_args& a) { a.x_scale = nullptr; }},
      {"w_scale", [](i8gemm_args& a) { a.w_scale = nullptr; }},
  };
  for (const Field& f : fields) {
    i8gemm_args a = good;
    f.clear(a);
    EXPECT_INVALID(run(a), fmt::format("{} is null", f.name));
  }
  I8G_OK(run(good));
  EXPECT_STREQ(i8gemm_last_error(), "") << "a success clears the thread's last error";
}

TEST_F(Validation, NullBiasZeroPointAndColsumAreRefusedWhenTheProblemUsesThem) {
  const i8gemm_problem p = make_problem(64, 64, I8GEMM_WEIGHT_NK, I8GEMM_SCALE_PER_TOKEN,
                                        I8GEMM_SCALE_PER_CHANNEL, I8GEMM_OUT_F32, true, true);
  I8G_OK(i8gemm_prepare(shared_ctx(), &p, 4));
  HostOperands h = random_operands(p, 4, rng_);
  DeviceGemm d(shared_ctx(), p, h, s_());
  i8gemm_args a = d.args();
  a.bias = nullptr;
  EXPECT_INVALID(i8gemm_run(shared_ctx(), &p, &a, s_().handle()), "bias");
  a = d.args();
  a.x_zero_point = nullptr;
  EXPECT_INVALID(i8gemm_run(shared_ctx(), &p, &a, s_().handle()), "x_zero_point");
  a = d.args();
  a.w_colsum = nullptr;
  EXPECT_INVALID(i8gemm_run(shared_ctx(), &p, &a, s_().handle()), "w_colsum");
}

TEST_F(Validation, RowCountOutsidePreparedRangeIsRefused) {
  i8gemm_args a = d_->args();
  a.m = -1;
  EXPECT_INVALID(run(a), "m=-1");
  a.m = 33;
  EXPECT_INVALID(run(a), "m=33");
  a.m = int64_t(1) << 40;
  EXPECT_INVALID(run(a), "m=");
}

TEST_F(Validation, MisalignedPointersAreRefused) {
  i8gemm_args a = d_->args();
  a.x = d_->x.as<int8_t>() + 1;
  EXPECT_INVALID(run(a), "aligned");
  EXPECT_NE(std::string(i8gemm_last_error()).find("x "), std::string::npos) << i8gemm_last_error();
  a = d_->args();
  a.w = d_->w.as<int8_t>() + 8;
  EXPECT_INVALID(run(a), "w is not 16-byte aligned");
  a = d_->args();
  a.out = d_->out.as<uint8_t>() + 1;
  EXPECT_INVALID(run(a), "out is not 2-byte aligned");
  a = d_->args();
  a.x_scale = reinterpret_cast<const float*>(d_->xs.as<uint8_t>() + 2);
  EXPECT_INVALID(run(a), "x_scale");
}

TEST_F(Validation, HostPointersAreRefused) {
  void* host = std::aligned_alloc(64, 32 * 4096);
  ASSERT_NE(host, nullptr);
  std::memset(host, 1, 32 * 4096);
  i8gemm_args a = d_->args();
  a.x = static_cast<const int8_t*>(host);
  EXPECT_INVALID(run(a), "x is not a CUDA device pointer");
  a = d_->args();
  a.out = host;
  EXPECT_INVALID(run(a), "out is not a CUDA device pointer");
  const float stack_scale[1] = {1.0f};
  a = d_->args();
  a.w_scale = stack_scale;
  EXPECT_INVALID(run(a), "w_scale is not a CUDA device pointer");
  std::free(host);
}

TEST_F(Validation, RunBeforePrepareIsNotPrepared) {
  const i8gemm_problem other = make_problem(256, 4096, I8GEMM_WEIGHT_KN, I8GEMM_SCALE_PER_TENSOR,
                                            I8GEMM_SCALE_PER_TENSOR, I8GEMM_OUT_F16, true);
  const i8gemm_args a = d_->args();
  EXPECT_REFUSED(i8gemm_run(shared_ctx(), &other, &a, s_().handle()), I8GEMM_ERROR_NOT_PREPARED, "prepare");
  // Prepared for max_m = 32 only: a larger m is refused, not compiled on the fly.
  i8gemm_args big = a;
  big.m = 4096;
  EXPECT_INVALID(run(big), "max_m");
}

TEST_F(Validation, BadEnumValuesAreRefused) {
  const i8gemm_args a = d_->args();
  struct Bad { const char* field; void (*spoil)(i8gemm_problem&); };
  const Bad bads[] = {
      {"weight_layout", [](i8gemm_problem& p) { p.weight_layout = static_cast<i8gemm_weight_layout>(7); }},
      {"act_scale", [](i8gemm_problem& p) { p.act_scale = I8GEMM_SCALE_PER_CHANNEL; }},
      {"act_scale", [](i8gemm_problem& p) { p.act_scale = static_cast<i8gemm_scale>(-1); }},
      {"weight_scale", [](i8gemm_problem& p) { p.weight_scale = I8GEMM_SCALE_PER_TOKEN; }},
      {"out", [](i8gemm_problem& p) { p.out = static_cast<i8gemm_out>(4); }},
  };
  for (const Bad& b : bads) {
    i8gemm_problem p = p_;
    b.spoil(p);
    EXPECT_INVALID(i8gemm_prepare(shared_ctx(), &p, 4), b.field);
    EXPECT_INVALID(i8gemm_run(shared_ctx(), &p, &a, s_().handle()), b.field);
    EXPECT_INVALID(i8gemm_weight_colsum(shared_ctx(), &p, a.w, d_->colsum.as<int32_t>(), s_().handle()), b.field);
  }
  DevBuf qx(2 * 64 * 4), qq(2 * 64), qs(2 * 4);  // sized for the call, should one get through
  i8gemm_quantize_args q{};
  q.m = 2, q.k = 64, q.x = qx.as<void>(), q.x_q = qq.as<int8_t>(), q.scale = qs.as<float>();
  q.granularity = I8GEMM_SCALE_PER_TOKEN;
  q.in_type = static_cast<i8gemm_in>(3);
  EXPECT_INVALID(i8gemm_quantize(shared_ctx(), &q, s_().handle()), "in_type");
  q.in_type = I8GEMM_IN_F32;
  q.granularity = I8GEMM_SCALE_PER_CHANNEL;
  EXPECT_INVALID(i8gemm_quantize(shared_ctx(), &q, s_().handle()), "granularity");
  q.granularity = I8GEMM_SCALE_PER_TOKEN;
  q.k = 0;
  EXPECT_INVALID(i8gemm_quantize(shared_ctx(), &q, s_().handle()), "k=0");
  q.k = 64;
  q.asymmetric = 1;  // zero_point stays null
  EXPECT_INVALID(i8gemm_quantize(shared_ctx(), &q, s_().handle()), "zero_point");
  EXPECT_INVALID(i8gemm_quantize(shared_ctx(), nullptr, s_().handle()), "args");
}

TEST_F(Validation, ShapesBeyondTheOverflowBoundAreRefused) {
  i8gemm_problem p = make_problem(64, 133145);
  EXPECT_INVALID(i8gemm_prepare(shared_ctx(), &p, 1), "K=133145");
  p = make_problem(64, 66312, I8GEMM_WEIGHT_NK, I8GEMM_SCALE_PER_TOKEN, I8GEMM_SCALE_PER_CHANNEL,
                   I8GEMM_OUT_BF16, false, true);
  EXPECT_INVALID(i8gemm_prepare(shared_ctx(), &p, 1), "K=66312");
  p = make_problem(0, 64);
  EXPECT_INVALID(i8gemm_prepare(shared_ctx(), &p, 1), "N=0");
  p = make_problem(64, -5);
  EXPECT_INVALID(i8gemm_prepare(shared_ctx(), &p, 1), "K=-5");
  p = make_problem(64, 64, I8GEMM_WEIGHT_NK, I8GEMM_SCALE_PER_TOKEN, I8GEMM_SCALE_PER_CHANNEL,
                   I8GEMM_OUT_I32, /*bias=*/true);
  EXPECT_INVALID(i8gemm_prepare(shared_ctx(), &p, 1), "bias");
  EXPECT_INVALID(i8gemm_prepare(shared_ctx(), &p_, 0), "max_m");
  i8gemm_context* c = nullptr;
  EXPECT_INVALID(i8gemm_create(99, test_cache_path().c_str(), &c), "device 99");
  EXPECT_EQ(c, nullptr);
}

// Raw i32 output reads no scales: null scales are accepted and the result is exact.
TEST_F(Validation, I32OutputAcceptsNullScales) {
  const i8gemm_problem p = make_problem(80, 96, I8GEMM_WEIGHT_KN, I8GEMM_SCALE_PER_TOKEN,
                                        I8GEMM_SCALE_PER_CHANNEL, I8GEMM_OUT_I32);
  I8G_OK(i8gemm_prepare(shared_ctx(), &p, 5));
  HostOperands h = random_operands(p, 5, rng_);
  DeviceGemm d(shared_ctx(), p, h, s_());
  i8gemm_args a = d.args();
  a.x_scale = nullptr;
  a.w_scale = nullptr;
  d.poison_out(s_());
  I8G_OK(i8gemm_run(shared_ctx(), &p, &a, s_().handle()));
  s_().sync();
  const std::string r = compare_outputs(p, 5, d.out_bytes(), reference_bytes(p, h));
  EXPECT_TRUE(r.empty()) << r;
}

// ---- threads ---------------------------------------------------------------------------------

class Threads : public GpuTest {};

// Four threads, four problems, one context, a stream each; prepare concurrently, then 50
// poisoned runs each, every result exact.
TEST_F(Threads, FourThreadsRunDifferentProblemsOnOneContextExactly) {
  const i8gemm_problem problems[4] = {
      make_problem(2560, 1024, I8GEMM_WEIGHT_KN),
      make_problem(1000, 4095, I8GEMM_WEIGHT_NK, I8GEMM_SCALE_PER_TENSOR, I8GEMM_SCALE_PER_CHANNEL, I8GEMM_OUT_F32, true),
      make_problem(384, 2048, I8GEMM_WEIGHT_NK, I8GEMM_SCALE_PER_TOKEN, I8GEMM_SCALE_PER_TENSOR, I8GEMM_OUT_F16, false, true),
      make_problem(4096, 384, I8GEMM_WEIGHT_KN, I8GEMM_SCALE_PER_TOKEN, I8GEMM_SCALE_PER_CHANNEL, I8GEMM_OUT_I32)};
  const int64_t ms[4] = {16, 7, 65, 1};
  std::vector<std::string> errors(4);
  std::vector<std::thread> threads;
  i8gemm_context* ctx = shared_ctx();
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      try {
        I8G_CU(cuCtxSetCurrent(ctx_));
        const i8gemm_problem& p = problems[t];
        const i8gemm_status ps = i8gemm_prepare(ctx, &p, ms[t]);
        if (ps != I8GEMM_SUCCESS) throw std::runtime_error(fmt::format("prepare: {}", i8gemm_last_error()));
        std::mt19937 rng(current_seed() + unsigned(t));
        HostOperands h = random_operands(p, ms[t], rng);
        Stream s;
        DeviceGemm d(ctx, p, h, s);
        const std::vector<uint8_t> want = reference_bytes(p, h);
        const i8gemm_args a = d.args();
        for (int i = 0; i < 50 && errors[t].empty(); ++i) {
          d.poison_out(s);
          const i8gemm_status st = i8gemm_run(ctx, &p, &a, s.handle());
          if (st != I8GEMM_SUCCESS) throw std::runtime_error(fmt::format("run {}: {}", i, i8gemm_last_error()));
          s.sync();
          const std::string r = compare_outputs(p, ms[t], d.out_bytes(), want);
          if (!r.empty()) errors[t] = fmt::format("run {}: {}", i, r);
        }
      } catch (const std::exception& e) {
        errors[t] = e.what();
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(errors[t], "") << "thread " << t << " (" << describe(problems[t]) << ")";
}

// Serving threads need not make a context current first: i8gemm_run does it (the pointer and
// stream checks must not depend on the calling thread's current context either).
TEST_F(Threads, RunFromAThreadWithNoCurrentContextWorks) {
  const i8gemm_problem p = make_problem(512, 1024);
  I8G_OK(i8gemm_prepare(shared_ctx(), &p, 8));
  HostOperands h = random_operands(p, 8, rng_);
  Stream s;
  DeviceGemm d(shared_ctx(), p, h, s);
  d.poison_out(s);
  s.sync();
  const i8gemm_args a = d.args();
  i8gemm_status st = I8GEMM_ERROR_INTERNAL;
  std::string err;
  std::thread worker([&] {
    CUcontext cur = reinterpret_cast<CUcontext>(0x1);
    driver().cuCtxGetCurrent(&cur);
    if (cur != nullptr) err = "the new thread unexpectedly has a current context; ";
    st = i8gemm_run(shared_ctx(), &p, &a, s.handle());
    err += i8gemm_last_error();
  });
  worker.join();
  ASSERT_EQ(st, I8GEMM_SUCCESS) << err;
  s.sync();
  const std::string r = compare_outputs(p, 8, d.out_bytes(), reference_bytes(p, h));
  EXPECT_TRUE(r.empty()) << r;
}

}  // namespace
}  // namespace i8g::gputest

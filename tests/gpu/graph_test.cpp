// Graph safety: prepare, capture i8gemm_quantize + i8gemm_run on a non-default stream in
// CU_STREAM_CAPTURE_MODE_GLOBAL, instantiate, then change the input CONTENTS and replay; each
// replay must match the new reference bit for bit.
//
// Evidence that the run path neither allocates nor synchronizes: in global capture mode a
// cuMemAlloc, a synchronous memcpy/memset, cuStreamSynchronize/cuCtxSynchronize or a launch on
// the legacy stream fails (and invalidates the capture), so a capture that ends cleanly with
// exactly one kernel node per i8gemm_run (and one per per-token quantize) shows the launch went
// to the caller's stream and nothing else was enqueued (a memset or memory node would add to
// the count). A stream-ordered alloc (cuMemAllocAsync) would add a node as well.
#include <fmt/format.h>

#include <memory>

#include "tests/gpu/gpu_support.hpp"
#include "tests/gpu/quantize_host.hpp"

namespace i8g::gputest {
namespace {

class GraphSafe : public GpuTest {
 protected:
  void TearDown() override {
    if (exec_) driver().cuGraphExecDestroy(exec_);
    if (graph_) driver().cuGraphDestroy(graph_);
    GpuTest::TearDown();
  }
  void begin(const Stream& s) { I8G_CU(cuStreamBeginCapture(s.get(), CU_STREAM_CAPTURE_MODE_GLOBAL)); }
  // Ends the capture and instantiates; returns the node count.
  size_t end_and_instantiate(const Stream& s) {
    I8G_CU(cuStreamEndCapture(s.get(), &graph_));
    size_t nodes = 0;
    I8G_CU(cuGraphGetNodes(graph_, nullptr, &nodes));
    I8G_CU(cuGraphInstantiateWithFlags(&exec_, graph_, 0));
    return nodes;
  }
  void replay(const Stream& s) {
    I8G_CU(cuGraphLaunch(exec_, s.get()));
    s.sync();
  }
  CUgraph graph_ = nullptr;
  CUgraphExec exec_ = nullptr;
};

std::vector<float> gaussian(std::mt19937& rng, size_t n, float sigma) {
  std::normal_distribution<float> g(0.0f, sigma);
  std::vector<float> v(n);
  for (auto& e : v) e = g(rng);
  return v;
}

// bf16 hidden states -> per-token quantize -> GEMM (TP4 gate_up, [K,N] weights), as SGLang runs it.
TEST_F(GraphSafe, QuantizeAndRunReplayWithNewInputContents) {
  const int64_t M = 16, N = 768, K = 4096;
  const i8gemm_problem p = make_problem(N, K, I8GEMM_WEIGHT_KN);
  I8G_OK(i8gemm_prepare(shared_ctx(), &p, M));
  HostOperands h = random_operands(p, M, rng_);
  Stream s;
  DeviceGemm d(shared_ctx(), p, h, s);
  DevBuf dxf(size_t(M * K) * 2);
  i8gemm_quantize_args q{};
  q.m = M;
  q.k = K;
  q.in_type = I8GEMM_IN_BF16;
  q.x = dxf.as<void>();
  q.granularity = I8GEMM_SCALE_PER_TOKEN;
  q.x_q = d.x.as<int8_t>();
  q.scale = d.xs.as<float>();
  const i8gemm_args a = d.args();

  d.out.fill(kPoison);
  begin(s);
  const i8gemm_status qs = i8gemm_quantize(shared_ctx(), &q, s.handle());
  const i8gemm_status rs = i8gemm_run(shared_ctx(), &p, &a, s.handle());
  const size_t nodes = end_and_instantiate(s);
  ASSERT_EQ(qs, I8GEMM_SUCCESS) << i8gemm_last_error();
  ASSERT_EQ(rs, I8GEMM_SUCCESS) << i8gemm_last_error();
  EXPECT_EQ(nodes, 2u) << "expected one kernel node for quantize and one for run";
  const std::vector<uint8_t> untouched = d.out_bytes();
  EXPECT_EQ(std::count(untouched.begin(), untouched.end(), kPoison), std::ptrdiff_t(untouched.size()))
      << "capturing must not execute anything";

  for (int replay_no = 0; replay_no < 3; ++replay_no) {
    SCOPED_TRACE(fmt::format("replay {}", replay_no));
    const std::vector<uint8_t> raw = encode_input(0, gaussian(rng_, size_t(M * K), 0.5f + replay_no));
    dxf.upload(raw);
    h.w_scale = random_f32(rng_, size_t(N), 1e-3f, 1e-2f);
    d.ws.upload(h.w_scale);
    d.out.fill(kPoison);
    replay(s);
    const HostQuantized want = host_quantize(0, raw, M, K, true, false);
    h.x = d.x.download<int8_t>(size_t(M * K));
    h.x_scale = d.xs.download<float>(size_t(M));
    EXPECT_EQ(h.x, want.q) << "quantized x after replay";
    EXPECT_EQ(h.x_scale, want.scale) << "scales after replay";
    const std::string r = compare_outputs(p, M, d.out_bytes(), reference_bytes(p, h));
    EXPECT_TRUE(r.empty()) << r;
  }
}

// GEMM only, with every per-row operand changed between replays: per-tensor asymmetric
// activations, bias, f32 output; and a second problem in the same graph.
TEST_F(GraphSafe, TwoRunsReplayWithChangedScalesZeroPointsAndBias) {
  const int64_t M = 65;
  const i8gemm_problem p1 = make_problem(1000, 4095, I8GEMM_WEIGHT_NK, I8GEMM_SCALE_PER_TENSOR,
                                         I8GEMM_SCALE_PER_CHANNEL, I8GEMM_OUT_F32, true, true);
  const i8gemm_problem p2 = make_problem(4096, 384, I8GEMM_WEIGHT_KN, I8GEMM_SCALE_PER_TOKEN,
                                         I8GEMM_SCALE_PER_TENSOR, I8GEMM_OUT_BF16);
  I8G_OK(i8gemm_prepare(shared_ctx(), &p1, M));
  I8G_OK(i8gemm_prepare(shared_ctx(), &p2, M));
  HostOperands h1 = random_operands(p1, M, rng_), h2 = random_operands(p2, M, rng_);
  Stream s;
  DeviceGemm d1(shared_ctx(), p1, h1, s), d2(shared_ctx(), p2, h2, s);
  const i8gemm_args a1 = d1.args(), a2 = d2.args();
  begin(s);
  const i8gemm_status r1 = i8gemm_run(shared_ctx(), &p1, &a1, s.handle());
  const i8gemm_status r2 = i8gemm_run(shared_ctx(), &p2, &a2, s.handle());
  const size_t nodes = end_and_instantiate(s);
  ASSERT_EQ(r1, I8GEMM_SUCCESS) << i8gemm_last_error();
  ASSERT_EQ(r2, I8GEMM_SUCCESS) << i8gemm_last_error();
  EXPECT_EQ(nodes, 2u) << "one kernel node per i8gemm_run";
  for (int replay_no = 0; replay_no < 3; ++replay_no) {
    SCOPED_TRACE(fmt::format("replay {}", replay_no));
    std::vector<int32_t> keep1 = h1.w_colsum, keep2 = h2.w_colsum;
    std::vector<int8_t> w1 = h1.w, w2 = h2.w;
    h1 = random_operands(p1, M, rng_);
    h2 = random_operands(p2, M, rng_);
    h1.w = w1, h2.w = w2, h1.w_colsum = keep1, h2.w_colsum = keep2;  // weights stay
    d1.update(h1);
    d2.update(h2);
    d1.out.fill(kPoison);
    d2.out.fill(kPoison);
    replay(s);
    std::string r = compare_outputs(p1, M, d1.out_bytes(), reference_bytes(p1, h1));
    EXPECT_TRUE(r.empty()) << r;
    r = compare_outputs(p2, M, d2.out_bytes(), reference_bytes(p2, h2));
    EXPECT_TRUE(r.empty()) << r;
  }
}

// Per-tensor quantization reduces into the scale slot with atomics; the reset of that slot
// must be part of the graph, or a replay with smaller inputs would keep the old maximum.
TEST_F(GraphSafe, PerTensorQuantizeResetsItsReductionOnEveryReplay) {
  const int64_t M = 33, K = 2048;
  const i8gemm_problem any = make_problem(64, 64);
  I8G_OK(i8gemm_prepare(shared_ctx(), &any, 1));  // loads the utility kernels
  for (bool asym : {false, true}) {
    SCOPED_TRACE(fmt::format("asym={}", asym));
    Stream s;
    DevBuf dxf(size_t(M * K) * 4), dq(size_t(M * K)), ds(4), dz(4);
    i8gemm_quantize_args q{};
    q.m = M, q.k = K, q.in_type = I8GEMM_IN_F32, q.x = dxf.as<void>();
    q.granularity = I8GEMM_SCALE_PER_TENSOR, q.asymmetric = asym;
    q.x_q = dq.as<int8_t>(), q.scale = ds.as<float>(), q.zero_point = asym ? dz.as<int32_t>() : nullptr;
    begin(s);
    const i8gemm_status st = i8gemm_quantize(shared_ctx(), &q, s.handle());
    const size_t nodes = end_and_instantiate(s);
    ASSERT_EQ(st, I8GEMM_SUCCESS) << i8gemm_last_error();
    EXPECT_LE(nodes, 5u);
    for (float sigma : {4.0f, 0.25f, 1.0f}) {  // shrinking range first: a stale max would show
      SCOPED_TRACE(fmt::format("sigma={}", sigma));
      std::vector<float> x = gaussian(rng_, size_t(M * K), sigma);
      if (asym) {
        for (auto& v : x) v += sigma;  // off-centre range
      }
      const std::vector<uint8_t> raw = encode_input(2, x);
      dxf.upload(raw);
      replay(s);
      const HostQuantized want = host_quantize(2, raw, M, K, false, asym);
      EXPECT_EQ(ds.download<float>(1), want.scale);
      if (asym) {
        EXPECT_EQ(dz.download<int32_t>(1), want.zero_point);
      }
      EXPECT_EQ(dq.download<int8_t>(size_t(M * K)), want.q);
    }
    driver().cuGraphExecDestroy(exec_);
    driver().cuGraphDestroy(graph_);
    exec_ = nullptr;
    graph_ = nullptr;
  }
}

// A run of something prepare never saw, while capturing: NOT_PREPARED (never a compile inside
// the capture); the capture then ends cleanly or reports itself invalidated, and the stream
// works afterwards.
TEST_F(GraphSafe, UnpreparedRunWhileCapturingReturnsNotPrepared) {
  const i8gemm_problem p = make_problem(123, 456, I8GEMM_WEIGHT_NK, I8GEMM_SCALE_PER_TOKEN,
                                        I8GEMM_SCALE_PER_TENSOR, I8GEMM_OUT_F16, true);
  i8gemm_context* fresh = nullptr;  // its own context: nothing prepared there for sure
  I8G_OK(i8gemm_create(0, test_cache_path().c_str(), &fresh));
  const std::unique_ptr<i8gemm_context, void (*)(i8gemm_context*)> owner(fresh, i8gemm_destroy);
  HostOperands h = random_operands(p, 8, rng_);
  Stream s;
  DeviceGemm d(fresh, p, h, s);
  const i8gemm_args a = d.args();
  begin(s);
  const i8gemm_status st = i8gemm_run(fresh, &p, &a, s.handle());
  const std::string err = i8gemm_last_error();
  CUgraph g = nullptr;
  const CUresult end = driver().cuStreamEndCapture(s.get(), &g);
  EXPECT_TRUE(end == CUDA_SUCCESS || end == CUDA_ERROR_STREAM_CAPTURE_INVALIDATED) << int(end);
  if (g) {
    size_t nodes = 99;
    I8G_CU(cuGraphGetNodes(g, nullptr, &nodes));
    EXPECT_EQ(nodes, 0u) << "a refused run must enqueue nothing";
    driver().cuGraphDestroy(g);
  }
  EXPECT_EQ(st, I8GEMM_ERROR_NOT_PREPARED);
  EXPECT_NE(err.find("not prepared"), std::string::npos) << err;
  EXPECT_NE(err.find("capturing"), std::string::npos) << "should say the stream is capturing: " << err;
  CUstreamCaptureStatus cs = CU_STREAM_CAPTURE_STATUS_ACTIVE;
  I8G_CU(cuStreamIsCapturing(s.get(), &cs));
  EXPECT_EQ(cs, CU_STREAM_CAPTURE_STATUS_NONE);

  // Utility kernels are not loaded in this context either: quantize/colsum refuse to compile
  // inside a capture.
  DevBuf dxf(size_t(8 * 456) * 2);
  i8gemm_quantize_args q{};
  q.m = 8, q.k = 456, q.in_type = I8GEMM_IN_BF16, q.x = dxf.as<void>(), q.granularity = I8GEMM_SCALE_PER_TOKEN;
  q.x_q = d.x.as<int8_t>(), q.scale = d.xs.as<float>();
  begin(s);
  const i8gemm_status qst = i8gemm_quantize(fresh, &q, s.handle());
  g = nullptr;
  driver().cuStreamEndCapture(s.get(), &g);
  if (g) driver().cuGraphDestroy(g);
  EXPECT_EQ(qst, I8GEMM_ERROR_NOT_PREPARED) << i8gemm_last_error();

  // After a prepare, the same stream and context run exactly.
  I8G_OK(i8gemm_prepare(fresh, &p, 8));
  d.poison_out(s);
  I8G_OK(i8gemm_run(fresh, &p, &a, s.handle()));
  s.sync();
  const std::string r = compare_outputs(p, 8, d.out_bytes(), reference_bytes(p, h));
  EXPECT_TRUE(r.empty()) << r;
}

}  // namespace
}  // namespace i8g::gputest

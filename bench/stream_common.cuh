// What the weight-stream measurement programs share (bench/stream_patterns.cu, bench/tma_stream.cu;
// not part of i8gemm): an error check, the flat grid-stride read that stands for the read
// ceiling (bench/ceiling.cu's pattern), and the graph-replay timer (median of 20 replays of a
// graph of launches rotated over buffers past L2, per launch).
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <utility>
#include <vector>

#define CK(x)                                                                  \
  do {                                                                         \
    cudaError_t e = (x);                                                       \
    if (e != cudaSuccess) {                                                    \
      std::printf("CUDA %s at line %d\n", cudaGetErrorString(e), __LINE__);    \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

__global__ void flat(const int4* __restrict__ p, size_t n16, int* out) {
  int acc = 0;
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x, s = (size_t)gridDim.x * blockDim.x;
#pragma unroll 4
  for (; i < n16; i += s) {
    int4 v = __ldg(p + i);
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x7fffffff) out[0] = acc;
}

template <typename F>
double time_graph(F launch, int nb, cudaStream_t st) {
  const int reps = std::max(20, nb);
  cudaGraph_t g;
  cudaGraphExec_t ge;
  CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
  for (int r = 0; r < reps; ++r) launch(r % nb);
  CK(cudaStreamEndCapture(st, &g));
  CK(cudaGraphInstantiate(&ge, g, 0));
  for (int w = 0; w < 3; ++w) CK(cudaGraphLaunch(ge, st));
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  std::vector<float> ts;
  for (int s = 0; s < 20; ++s) {
    CK(cudaEventRecord(e0, st));
    CK(cudaGraphLaunch(ge, st));
    CK(cudaEventRecord(e1, st));
    CK(cudaEventSynchronize(e1));
    float ms;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    ts.push_back(ms * 1e3f / reps);
  }
  std::sort(ts.begin(), ts.end());
  CK(cudaGraphExecDestroy(ge));
  CK(cudaGraphDestroy(g));
  CK(cudaEventDestroy(e0));
  CK(cudaEventDestroy(e1));
  return ts[ts.size() / 2];
}

// Enough buffers of `bytes` (at least 2, at most 64, 512 MB in all) that a graph's launches,
// rotated over them, never find their operand in L2; filled with ones.
inline std::vector<signed char*> rotation_buffers(size_t bytes) {
  const int nb = int(std::max<size_t>(2, std::min<size_t>(64, (512ull << 20) / bytes + 1)));
  std::vector<signed char*> bufs(nb);
  for (auto& b : bufs) {
    CK(cudaMalloc(&b, bytes));
    CK(cudaMemset(b, 1, bytes));
  }
  return bufs;
}

// The fastest flat read of `bytes` over 1, 2, 4 or 8 blocks per SM of 256, 512 or 1024 threads.
inline double best_flat_us(const std::vector<signed char*>& bufs, size_t bytes, int sms, int* o, cudaStream_t st) {
  double best = 1e30;
  for (int bps : {1, 2, 4, 8})
    for (int thr : {256, 512, 1024}) {
      if (bps * thr > 2048) continue;
      const double us = time_graph(
          [&](int b) { flat<<<sms * bps, thr, 0, st>>>((const int4*)bufs[b], bytes / 16, o); }, int(bufs.size()), st);
      best = std::min(best, us);
    }
  return best;
}

// The shapes NxK named on the command line, or `defaults` when none is; K must be a multiple of
// `k_multiple`. Prints why and returns false for a malformed one.
inline bool parse_shapes(int argc, char** argv, std::vector<std::pair<long long, long long>>& shapes,
                         long long k_multiple) {
  if (argc <= 1) return true;
  shapes.clear();
  for (int i = 1; i < argc; ++i) {
    long long n, k;
    if (std::sscanf(argv[i], "%lldx%lld", &n, &k) != 2 || n <= 0 || k <= 0 || k % k_multiple) {
      if (k_multiple > 1)
        std::printf("bad shape %s (want NxK, K a multiple of %lld)\n", argv[i], k_multiple);
      else
        std::printf("bad shape %s (want NxK)\n", argv[i]);
      return false;
    }
    shapes.push_back({n, k});
  }
  return true;
}

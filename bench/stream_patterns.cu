// Weight-stream access patterns (a measurement program, not part of i8gemm; issue 13): how fast
// can a kernel read an [N, K] int8 weight once when each block owns 16 rows, as decode_mma's
// blocks do, against a flat grid-stride read of the same bytes (bench/ceiling.cu's pattern)?
// Every kernel only loads and XORs; no math, no output but one guarded word. Graph replay of
// launches rotated over buffers past L2, median of 20 samples per launch.
//   build/bench/stream_patterns [NxK ...]   (built with i8gemm_peers where nvcc is found)
// Patterns (a warp's chunk is 16 rows x BK bytes of k; warp w of a block takes chunks w, w + WK,
// ... of its rows, S chunks in flight per warp, as in templates/decode_mma.cuh):
//   frag    lane (g, t) loads rows g and g + 8, 16 bytes at k = 16t + 64u (decode_mma's loads:
//           one instruction covers 8 rows x 64 bytes)
//   frag256 the same with the .L2::256B prefetch hint
//   rowwise one instruction covers 2 rows x 256 bytes (lane l: row 2i + l / 16, k = 16 (l % 16))
//   packed  the 16 rows of a block stored tile by tile, so a warp's chunk is 16 x BK contiguous
//           bytes and one instruction covers 512 of them (a pre-packed weight)
#include "stream_common.cuh"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

enum Pattern { kFrag = 0, kFrag256 = 1, kRowwise = 2, kPacked = 3 };
static const char* kNames[] = {"frag", "frag256", "rowwise", "packed"};

// 16 bytes, not allocated in L1; HINT adds the .L2::256B prefetch size.
template <bool HINT>
__device__ __forceinline__ int4 ld_stream(const signed char* p) {
  int4 v;
  if constexpr (HINT)
    asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.s32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  else
    asm volatile("ld.global.nc.L1::no_allocate.v4.s32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  return v;
}

// One block: 16 rows [16 b, 16 b + 16) over K slice blockIdx.y of SK; WK warps; chunks of BK bytes.
template <int P, int WK, int BK, int S, int SK>
__global__ void __launch_bounds__(32 * WK) rows16(const signed char* __restrict__ w, long long K, int* out) {
  constexpr int L = 16 * BK / 512;  // 16-byte loads per lane per chunk
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, t = lane & 3;
  const long long chunks = K / BK, per = (chunks + SK - 1) / SK;
  const long long c0 = per * blockIdx.y, c1 = min(chunks, c0 + per);
  const signed char* base = w + (long long)blockIdx.x * 16 * K;
  auto addr = [&](long long c, int i) -> const signed char* {
    const long long kb = c * BK;
    if (P == kPacked) return base + kb * 16 + i * 512 + lane * 16;
    if (P == kRowwise) {
      constexpr int PER_ROW = BK / 256 > 0 ? BK / 256 : 1;  // instructions per row pair
      const int pair = i / PER_ROW, part = i % PER_ROW;
      return base + (2 * pair + (lane >> 4)) * K + kb + part * 256 + 16 * (lane & 15);
    }
    const int u = i >> 1, h = i & 1;  // frag: 64-byte step u, row half h
    return base + (g + 8 * h) * K + kb + 64 * u + 16 * t;
  };
  int4 ring[S][L];
  int acc = 0;
  auto load = [&](int4(&r)[L], long long c) {
#pragma unroll
    for (int i = 0; i < L; ++i) r[i] = ld_stream<P == kFrag256>(addr(c, i));
  };
  auto use = [&](const int4(&r)[L]) {
#pragma unroll
    for (int i = 0; i < L; ++i) acc ^= r[i].x ^ r[i].y ^ r[i].z ^ r[i].w;
  };
  const long long first = c0 + warp;
  const int iters = first < c1 ? int((c1 - first + WK - 1) / WK) : 0;
#pragma unroll
  for (int s = 0; s < S - 1; ++s)
    if (s < iters) load(ring[s], first + (long long)s * WK);
  for (int i0 = 0; i0 < iters; i0 += S) {
#pragma unroll
    for (int s = 0; s < S; ++s) {
      const int i = i0 + s;
      if (i < iters) {
        if (i + S - 1 < iters) load(ring[(s + S - 1) % S], first + (long long)(i + S - 1) * WK);
        use(ring[s]);
      }
    }
  }
  if (acc == 0x7fffffff) out[0] = acc;
}

struct Run {
  std::string name;
  double us;
};

template <int P, int WK, int BK, int S, int SK>
void add(std::vector<Run>& runs, const std::vector<signed char*>& bufs, long long N, long long K, int* o,
         cudaStream_t st) {
  if (N % 16 || K % (BK * SK)) return;
  const dim3 grid(unsigned(N / 16), SK);
  const double us = time_graph(
      [&](int b) { rows16<P, WK, BK, S, SK><<<grid, 32 * WK, 0, st>>>(bufs[b], K, o); }, int(bufs.size()), st);
  CK(cudaGetLastError());
  char name[96];
  std::snprintf(name, sizeof name, "%s_wk%d_bk%d_s%d_sk%d", kNames[P], WK, BK, S, SK);
  runs.push_back({name, us});
}

template <int P>
void patterns(std::vector<Run>& runs, const std::vector<signed char*>& bufs, long long N, long long K, int* o,
              cudaStream_t st) {
  add<P, 4, 256, 2, 1>(runs, bufs, N, K, o, st);  // decode_mma's M = 1 winner's shape
  add<P, 8, 256, 2, 1>(runs, bufs, N, K, o, st);
  add<P, 4, 256, 3, 1>(runs, bufs, N, K, o, st);
  add<P, 4, 256, 4, 1>(runs, bufs, N, K, o, st);
  add<P, 4, 512, 2, 1>(runs, bufs, N, K, o, st);
  add<P, 4, 256, 2, 2>(runs, bufs, N, K, o, st);
  add<P, 8, 256, 4, 1>(runs, bufs, N, K, o, st);
}

int main(int argc, char** argv) {
  std::vector<std::pair<long long, long long>> shapes = {{2560, 4096}, {6144, 4096}, {4096, 14336}, {8192, 8192},
                                                         {28672, 4096}};
  if (!parse_shapes(argc, argv, shapes, 1)) return 2;
  int sms;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  int* o;
  CK(cudaMalloc(&o, 4));
  cudaStream_t st;
  CK(cudaStreamCreate(&st));
  std::printf("shape,pattern,us,TBps,vs_flat\n");
  for (auto [N, K] : shapes) {
    const size_t bytes = size_t(N * K);
    std::vector<signed char*> bufs = rotation_buffers(bytes);
    std::vector<Run> runs;
    const double best_flat = best_flat_us(bufs, bytes, sms, o, st);
    runs.push_back({"flat_best", best_flat});
    patterns<kFrag>(runs, bufs, N, K, o, st);
    patterns<kFrag256>(runs, bufs, N, K, o, st);
    patterns<kRowwise>(runs, bufs, N, K, o, st);
    patterns<kPacked>(runs, bufs, N, K, o, st);
    for (const Run& r : runs)
      std::printf("%lldx%lld,%s,%.2f,%.3f,%.3f\n", N, K, r.name.c_str(), r.us, bytes / r.us / 1e6, r.us / best_flat);
    for (auto& b : bufs) CK(cudaFree(b));
  }
  return 0;
}

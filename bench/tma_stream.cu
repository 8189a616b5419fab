// TMA weight-stream patterns (a measurement program, not part of i8gemm; issues 12 and 13): how
// fast does a persistent TMA ring read an [N, K] int8 weight once, when each block walks tiles of
// R weight rows in k boxes of 128 bytes as wgmma_tma's producer does, against a flat grid-stride
// read of the same bytes and against layouts where each stage's bytes are contiguous? Session 15
// (bench/stream_patterns.cu) found short row pieces cost 8-21% against flat with register loads;
// this asks the same of TMA boxes, whose rows are 128 bytes.
//   build/bench/tma_stream [NxK ...]   (built beside i8gemm_peers where nvcc is found)
// One block per SM (grid = SMs), tiles t = block, block + grid, ...; one producer thread issues
// each stage's copy into an S-stage ring (full/empty mbarriers, templates/tma.cuh), one consumer
// warp waits for it, touches 512 of its bytes and frees the slot after SPIN cycles (0: pure
// stream; >0: a stand-in for a consumer's multiply time). Modes (a stage holds R rows x KB bytes):
//   box128     wgmma_tma's w load: 2-D map, box {128 bytes, R rows}, 128B swizzle, L2 promotion 256B
//   box128np   the same without L2 promotion
//   box128x2   two such boxes per stage, k and k + 128 (KB 256: a row's 256 bytes asked back to back)
//   box256     one box {256 bytes, R rows}, no swizzle (wgmma cannot read it; DRAM side only)
//   packed     a pre-packed weight: each stage's R x 128 bytes contiguous, one cp.async.bulk
//   packed2    the same with R x 256 contiguous bytes per stage
//   atoms      a pre-packed weight in a layout every tile width can read: [N/8][K/128][8 rows][128
//              bytes] (1 KB atoms, the 128B swizzle's unit); a stage is R/8 cp.async.bulk of 1 KB
//   atoms4d    the same layout through one 4-D map, box {128, 8, 1, R/8}: one TMA per stage
//   xw         a GEMM stage at M = 32: an x box {128, 32 rows} of a 32 x K activation (in L2)
//              and the w box {128, R}, as wgmma_tma's producer issues them (one K tile a stage)
//   xw2        the same with two K tiles per stage (x, w of k and of k + 128)
//   xw4        four K tiles per stage
//   xwp2       two K tiles per stage, the w part pre-packed: the two x boxes, then R x 256
//              contiguous bytes of w in one bulk copy (what a packed weight would give the GEMM)
// Each runs with the mbarrier waits' suspend-time hint (templates/tma.cuh, as the kernels) and,
// where marked nohint, with a plain try_wait loop.
// Packed modes read ceil(N / R) * R rows (up to R - 1 rows more than the others); atoms modes
// read the tiles' whole R / 8 atoms, also past N.
#include <cuda.h>

#include <cstring>
#include <string>

#include "../templates/tma.cuh"
#include "stream_common.cuh"

namespace {

enum Mode { kBox128 = 0, kBox128Np, kBox128x2, kBox256, kPacked, kPacked2, kAtoms, kAtoms4d, kXw, kXw2, kXw4, kXwp2, kModes };
const char* kModeNames[] = {"box128", "box128np", "box128x2", "box256", "packed",
                            "packed2", "atoms",    "atoms4d",  "xw",     "xw2", "xw4", "xwp2"};
constexpr int kXRows = 32;
__host__ __device__ bool is_gemm_like(int mode) { return mode == kXw || mode == kXw2 || mode == kXw4 || mode == kXwp2; }
__host__ __device__ int stage_k_bytes(int mode) {
  if (mode == kXw4) return 512;
  return mode == kBox128x2 || mode == kBox256 || mode == kPacked2 || mode == kXw2 || mode == kXwp2 ? 256 : 128;
}
// A stage's bytes: R rows of w (and the x rows of the xw modes) over the stage's k bytes.
__host__ __device__ int stage_bytes_of(int mode, int R) {
  return (R + (is_gemm_like(mode) ? kXRows : 0)) * stage_k_bytes(mode);
}

__device__ __forceinline__ void wait_plain(unsigned bar, unsigned parity) {
  asm volatile(
      "{\n"
      ".reg .pred done;\n"
      "WAIT:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra WAIT;\n"
      "}\n" ::"r"(bar),
      "r"(parity)
      : "memory");
}
__device__ __forceinline__ void wait(bool hint, unsigned bar, unsigned parity) {
  if (hint)
    i8g::tma::mbar_wait(bar, parity);
  else
    wait_plain(bar, parity);
}

using i8g::tma::bulk_load;

__global__ void __launch_bounds__(64) tma_stream(const __grid_constant__ i8g::tma::Desc map,
                                                 const __grid_constant__ i8g::tma::Desc xmap, const signed char* w,
                                                 long long N, long long K, int R, int S, int mode, int spin,
                                                 bool hint, int* out) {
  extern __shared__ __align__(1024) unsigned char smem[];
  const unsigned base = unsigned(__cvta_generic_to_shared(smem));
  const unsigned bars = base, ring = base + 1024;  // full[s] at 16 s, empty[s] at 16 s + 8 (S <= 64)
  const int KB = stage_k_bytes(mode);
  const unsigned stage_bytes = unsigned(stage_bytes_of(mode, R));
  const long long tiles = (N + R - 1) / R, ksteps = K / KB;
  if (threadIdx.x == 0) {
    for (int s = 0; s < S; ++s) {
      i8g::tma::mbar_init(bars + 16 * s, 1);
      i8g::tma::mbar_init(bars + 16 * s + 8, 1);
    }
    i8g::tma::mbar_fence_init();
  }
  __syncthreads();
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  // The ring position advances by one stage per K step (no division in the loop: a 64-bit
  // remainder per stage cost ~400 cycles and bounded an earlier version of this program).
  unsigned s = 0, ph = 0;
  int acc = 0;
  for (long long t = blockIdx.x; t < tiles; t += gridDim.x)
    for (long long kt = 0; kt < ksteps; ++kt, s = s + 1 == unsigned(S) ? 0 : s + 1, ph ^= s == 0 ? 1u : 0u) {
      const unsigned dst = ring + s * stage_bytes;
      const unsigned full = bars + 16 * s, empty = full + 8;
      if (warp == 0) {
        if (lane != 0) continue;
        wait(hint, empty, ph ^ 1);
        i8g::tma::mbar_arrive_expect_tx(full, stage_bytes);
        if (mode == kPacked || mode == kPacked2) {
          bulk_load(dst, w + (t * ksteps + kt) * stage_bytes, stage_bytes, full);
        } else if (mode == kXwp2) {
          for (int j = 0; j < 2; ++j) i8g::tma::load_box(dst + unsigned(j * kXRows * 128), &xmap, full, int(kt * 256) + 128 * j, 0);
          bulk_load(dst + 2 * kXRows * 128, w + (t * ksteps + kt) * R * 256, unsigned(R) * 256, full);
        } else if (is_gemm_like(mode)) {
          const int kts = KB / 128;
          for (int j = 0; j < kts; ++j) {
            const unsigned sub = dst + unsigned(j * (kXRows + R) * 128);
            const int k = int(kt * KB) + 128 * j;
            i8g::tma::load_box(sub, &xmap, full, k, 0);
            i8g::tma::load_box(sub + kXRows * 128, &map, full, k, int(t * R));
          }
        } else if (mode == kAtoms) {
          for (int a = 0; a < R / 8; ++a)
            bulk_load(dst + a * 1024, w + ((t * R / 8 + a) * ksteps + kt) * 1024, 1024, full);
        } else if (mode == kAtoms4d) {
          asm volatile(
              "cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5, "
              "%6}], [%2];\n" ::"r"(dst),
              "l"(reinterpret_cast<unsigned long long>(&map)), "r"(full), "r"(0), "r"(0), "r"(int(kt)),
              "r"(int(t * R / 8))
              : "memory");
        } else if (mode == kBox128x2) {
          i8g::tma::load_box(dst, &map, full, int(kt * 256), int(t * R));
          i8g::tma::load_box(dst + R * 128, &map, full, int(kt * 256 + 128), int(t * R));
        } else {
          i8g::tma::load_box(dst, &map, full, int(kt * KB), int(t * R));
        }
      } else {
        wait(hint, full, ph);
        int4 v;
        asm volatile("ld.shared.v4.s32 {%0, %1, %2, %3}, [%4];\n"
                     : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                     : "r"(dst + 16 * lane));
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
        if (spin > 0) {
          const long long t0 = clock64();
          while (clock64() - t0 < spin) {
          }
        }
        __syncwarp();
        if (lane == 0) i8g::tma::mbar_arrive(empty);
      }
    }
  if (acc == 0x7fffffff) out[0] = acc;
}

CUtensorMap weight_map(const signed char* w, long long N, long long K, int R, int mode) {
  CUtensorMap m{};
  if (mode == kAtoms4d) {  // [N/8][K/128][8][128] bytes, innermost first
    const cuuint64_t dims[4] = {128, 8, cuuint64_t(K / 128), cuuint64_t((N + 7) / 8)};
    const cuuint64_t strides[3] = {128, 1024, cuuint64_t(K / 128) * 1024};
    const cuuint32_t box[4] = {128, 8, 1, cuuint32_t(R / 8)};
    const cuuint32_t es[4] = {1, 1, 1, 1};
    const CUresult r = cuTensorMapEncodeTiled(&m, CU_TENSOR_MAP_DATA_TYPE_UINT8, 4, const_cast<signed char*>(w), dims,
                                              strides, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                              CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                              CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) {
      std::printf("cuTensorMapEncodeTiled (4-D) failed (%d) for %lldx%lld box %d rows\n", int(r), N, K, R);
      std::exit(1);
    }
    return m;
  }
  const cuuint64_t dims[2] = {cuuint64_t(K), cuuint64_t(N)};
  const cuuint64_t strides[1] = {cuuint64_t(K)};
  const cuuint32_t box[2] = {cuuint32_t(mode == kBox256 ? 256 : 128), cuuint32_t(R)};  // R: box rows
  const cuuint32_t es[2] = {1, 1};
  const CUresult r = cuTensorMapEncodeTiled(
      &m, CU_TENSOR_MAP_DATA_TYPE_UINT8, 2, const_cast<signed char*>(w), dims, strides, box, es,
      CU_TENSOR_MAP_INTERLEAVE_NONE, mode == kBox256 ? CU_TENSOR_MAP_SWIZZLE_NONE : CU_TENSOR_MAP_SWIZZLE_128B,
      mode == kBox128Np ? CU_TENSOR_MAP_L2_PROMOTION_NONE : CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) {
    std::printf("cuTensorMapEncodeTiled failed (%d) for %lldx%lld box %d rows mode %s\n", int(r), N, K, R,
                kModeNames[mode]);
    std::exit(1);
  }
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::pair<long long, long long>> shapes = {{28672, 4096}, {8192, 8192}, {4096, 14336}, {6144, 4096},
                                                         {2560, 4096}};
  if (!parse_shapes(argc, argv, shapes, 256)) return 2;
  int sms;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  CK(cudaFuncSetAttribute(tma_stream, cudaFuncAttributeMaxDynamicSharedMemorySize, 227 * 1024));
  int* o;
  CK(cudaMalloc(&o, 4));
  cudaStream_t st;
  CK(cudaStreamCreate(&st));
  const int kRing = 160 * 1024;  // ring bytes for every mode and R (wgmma_tma's rings: 150-220 KB)
  std::printf("shape,mode,rows,stages,spin,us,TBps,vs_flat\n");
  for (const auto& shape : shapes) {
    const long long N = shape.first, K = shape.second;
    const size_t bytes = size_t(N * K), padded = size_t((N + 255) * K);
    std::vector<signed char*> bufs = rotation_buffers(padded);
    const double flat_us = best_flat_us(bufs, bytes, sms, o, st);
    std::printf("%lldx%lld,flat_best,,,,%.2f,%.3f,1.000\n", N, K, flat_us, bytes / flat_us / 1e6);
    signed char* x;  // the xw modes' activation, kXRows x K (L2-resident after the first launch)
    CK(cudaMalloc(&x, size_t(kXRows * K)));
    CK(cudaMemset(x, 1, size_t(kXRows * K)));
    i8g::tma::Desc xdesc;
    {
      const CUtensorMap m = weight_map(x, kXRows, K, kXRows, kBox128);
      std::memcpy(&xdesc, &m, sizeof m);
    }
    for (int R : {64, 80, 128})
      for (int mode = 0; mode < kModes; ++mode)
        for (int spin : {0, 300})
          for (int hint = 1; hint >= 0; --hint) {
            const bool gemm_like = is_gemm_like(mode);
            if (spin && mode != kBox128 && mode != kPacked && mode != kAtoms4d && !gemm_like) continue;
            if (!hint && mode != kBox128 && mode != kBox128x2 && !gemm_like) continue;
            const int S = std::min(64, kRing / stage_bytes_of(mode, R));
            std::vector<i8g::tma::Desc> maps(bufs.size());
            for (size_t b = 0; b < bufs.size(); ++b) {
              const CUtensorMap m = weight_map(bufs[b], N, K, R, gemm_like ? kBox128 : mode);
              static_assert(sizeof(m) == sizeof(i8g::tma::Desc), "a CUtensorMap is 128 bytes");
              std::memcpy(&maps[b], &m, sizeof m);
            }
            const int smem = 1024 + S * stage_bytes_of(mode, R);
            const double us = time_graph(
                [&](int b) {
                  tma_stream<<<sms, 64, smem, st>>>(maps[b], xdesc, bufs[b], N, K, R, S, mode, spin, hint != 0, o);
                },
                int(bufs.size()), st);
            CK(cudaGetLastError());
            std::printf("%lldx%lld,%s%s,%d,%d,%d,%.2f,%.3f,%.3f\n", N, K, kModeNames[mode], hint ? "" : "_nohint", R,
                        S, spin, us, bytes / us / 1e6, us / flat_us);
          }
    CK(cudaFree(x));
    for (auto& b : bufs) CK(cudaFree(b));
  }
  return 0;
}

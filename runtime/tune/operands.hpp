// Random operands for timing and verification: several copies of x, w and out that are
// rotated between launches so that weights are not served from L2 (> 256 MB in all), shared
// scales, bias and zero points, and host copies of the first set for CPU checks.
#pragma once
#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <random>
#include <vector>

#include "generator/packed_weight.hpp"
#include "generator/types.hpp"
#include "runtime/gpu/device_buffer.hpp"
#include "runtime/serve/engine.hpp"
#include "runtime/tune/reference.hpp"

namespace i8g {

struct Stream {
  CUstream s = nullptr;
  Stream() { I8G_CU(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING)); }
  ~Stream() { driver().cuStreamDestroy(s); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
};

void fill_random(std::vector<int8_t>& v, std::mt19937_64& rng);  // uniform in [-127, 127]

inline constexpr size_t kRotationBytes = size_t(256) << 20;  // > 4x the H200's 60 MB L2
inline constexpr int kMaxSets = 64;  // 64 sets of the smallest target weight (1.6 MB) still pass L2


// Random operands for one M: `sets` copies of x, w and out (rotated while timing), shared
// scales/bias/zero points, and host copies of set 0 for the CPU spot check.
struct Operands {
  GemmProblem p;
  int64_t m = 0;
  std::vector<DeviceBuffer> x, w, out, colsum;
  DeviceBuffer x_scale, w_scale, bias, zp;
  HostOperands host;  // set 0
  size_t out_bytes = 0;
  std::map<std::string, std::vector<DeviceBuffer>> packed_w;  // by PackedWeightLayout::name()

  // `packs`: the layouts (generator/packed_weight.hpp) whose packs of every weight set to make
  // too, each packed on the CPU from the set's host bytes as it is generated.
  Operands(Engine& e, const GemmProblem& prob, int64_t rows, std::mt19937_64& rng, CUstream st,
           const std::vector<PackedWeightLayout>& packs = {});
  int sets() const { return int(x.size()); }
  // Moves every set's device buffers (x, w, out, the packs, the column sums) into memory allocated
  // anew while every earlier placement is still held (kept until release_moved()), so that each
  // move puts the same operands at a placement not used before; the contents are copied on `st`,
  // which is synchronized. Pointers from args() and packed() taken before go stale (packed()'s
  // vectors stay the same objects). The tuner's final round times its finalists over several
  // placements (TuneOptions::final_placements).
  void move(CUstream st);
  // Frees the placements that move() left behind.
  void release_moved() { moved_.clear(); }
  // The weight sets in layout `l`, set i the pack of w[i]; throws Error when `l` was not among
  // the constructor's `packs`.
  const std::vector<DeviceBuffer>& packed(const PackedWeightLayout& l) const;
  // The arguments of launch `call`: its set of x, w (or of `packed_w`, one of packed()'s) and out.
  I8gArgs args(int call, const std::vector<DeviceBuffer>* packed_w = nullptr) const {
    const size_t i = size_t(call % sets());
    I8gArgs a{};
    a.x = x[i].get<signed char>();
    a.w = (packed_w ? (*packed_w)[i] : w[i]).get<signed char>();
    a.x_scale = x_scale.get<float>();
    a.w_scale = w_scale.get<float>();
    a.bias = p.bias ? bias.get<float>() : nullptr;
    a.x_zero_point = p.asymmetric ? zp.get<int>() : nullptr;
    a.w_colsum = p.asymmetric ? colsum[i].get<int>() : nullptr;
    a.out = out[i].get();
    a.m = m;
    a.n = p.n;
    a.k = p.k;
    return a;
  }

 private:
  std::vector<std::vector<DeviceBuffer>> moved_;  // earlier placements, held so that none is reused
};

}  // namespace i8g

// Source text for one kernel: an include of the family's template and one instantiation.
#include <fmt/format.h>

#include <algorithm>

#include "core/error.hpp"
#include "generator/families.hpp"
#include "generator/generator.hpp"
#include "templates/mma_frag.h"

namespace i8g {

int out_code(OutType o) {
  switch (o) {
    case OutType::bf16: return 0;
    case OutType::f16: return 1;
    case OutType::f32: return 2;
    case OutType::i32: return 3;
  }
  return 0;
}

namespace {

std::string simt_entry(const KernelSpec& s) {
  const GemmProblem& p = s.problem;
  const KernelConfig& c = s.config;
  return fmt::format("i8g::simt_dp4a_kernel<{}, {}, {}, {}, {}, {}, {}LL, {}LL, {}, {}, {}, {}, {}, {}>",
                     c.bm, c.bn, c.bk, c.tm, c.tn, c.vec, p.n, p.k,
                     p.layout == WeightLayout::kn ? 1 : 0,
                     p.act_scale == ActScale::per_token ? 1 : 0,
                     p.weight_scale == WeightScale::per_channel ? 1 : 0, out_code(p.out),
                     p.bias ? 1 : 0, p.asymmetric ? 1 : 0);
}

// Same problem parameters, in the same order, as simt_entry; the tile part follows
// mfma_kernel's template: BM, BN, BK, INSTR, WM, WN, STAGES, VEC.
std::string mfma_entry(const KernelSpec& s) {
  const GemmProblem& p = s.problem;
  const KernelConfig& c = s.config;
  return fmt::format("i8g::mfma_kernel<{}, {}, {}, {}, {}, {}, {}, {}, {}LL, {}LL, {}, {}, {}, {}, {}, {}>",
                     c.bm, c.bn, c.bk, c.tm, c.wm, c.wn, c.stages, c.vec, p.n, p.k,
                     p.layout == WeightLayout::kn ? 1 : 0,
                     p.act_scale == ActScale::per_token ? 1 : 0,
                     p.weight_scale == WeightScale::per_channel ? 1 : 0, out_code(p.out),
                     p.bias ? 1 : 0, p.asymmetric ? 1 : 0);
}

}  // namespace

Source emit(const KernelSpec& spec) {
  spec.problem.validate();
  Source src;
  src.name = spec.name();
  switch (spec.config.family) {
    case Family::simt_dp4a:
      src.entry = simt_entry(spec);
      src.code = fmt::format("// {}\n#include \"simt_dp4a.cuh\"\n\ntemplate __global__ void {}(const __grid_constant__ I8gArgs);\n",
                             src.name, src.entry);
      return src;
    case Family::mfma:
      // HIP has no __grid_constant__: the argument block is passed by value.
      src.entry = mfma_entry(spec);
      src.code = fmt::format("// {}\n#include \"mfma.hip.h\"\n\ntemplate __global__ void {}(const I8gArgs);\n",
                             src.name, src.entry);
      return src;
    case Family::mma_sync:
      src.entry = mma_sync_entry(spec);
      src.code = fmt::format("// {}\n#include \"mma_sync.cuh\"\n\ntemplate __global__ void {}(const __grid_constant__ I8gArgs);\n",
                             src.name, src.entry);
      return src;
    case Family::wgmma:
      src.entry = wgmma_entry(spec);
      src.code = fmt::format("// {}\n#include \"wgmma.cuh\"\n\ntemplate __global__ void {}(const __grid_constant__ I8gArgs);\n",
                             src.name, src.entry);
      return src;
  }
  throw Error("emit", fmt::format("family {} has no template yet", to_string(spec.config.family)));
}

Source emit_utility(const std::string& arch) {
  std::string a = arch;
  a.erase(std::remove(a.begin(), a.end(), '_'), a.end());
  Source src;
  src.name = fmt::format("i8g_{}_utility", a);
  src.entry = "i8g_colsum_nk";
  src.code = fmt::format("// {}\n#define I8G_UTILITY_MODULE\n#include \"utility.cuh\"\n", src.name);
  return src;
}

std::vector<int64_t> m_buckets(int64_t max_m) {
  std::vector<int64_t> out;
  for (int64_t b : {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 3072, 4096, 8192}) {
    out.push_back(b);
    if (b >= max_m) return out;
  }
  out.push_back(max_m);
  return out;
}

size_t workspace_bytes(const KernelSpec& spec, int64_t m) {
  const KernelConfig& c = spec.config;
  if (c.split_k <= 1) return 0;
  const LaunchShape s = launch_shape(spec, m);
  const long long tiles = (long long)s.grid[0] * s.grid[1];
  return size_t(mma::splitk_workspace_words(tiles, c.split_k, c.bm, c.bn)) * 4;
}

LaunchShape launch_shape(const KernelSpec& spec, int64_t m) {
  const KernelConfig& c = spec.config;
  LaunchShape s{};
  s.grid[0] = unsigned((spec.problem.n + c.bn - 1) / c.bn);
  s.grid[1] = unsigned((std::max<int64_t>(m, 1) + c.bm - 1) / c.bm);
  s.grid[2] = unsigned(c.split_k);
  s.block[0] = unsigned(c.threads());
  s.block[1] = s.block[2] = 1;
  s.dynamic_smem = c.family == Family::mma_sync ? unsigned(mma_sync_smem_bytes(c))
                   : c.family == Family::wgmma  ? unsigned(wgmma_smem_bytes(c))
                                                : 0;
  return s;
}

}  // namespace i8g

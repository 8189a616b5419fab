// The CUTLASS peer's API (cutlass_i8.hpp): the configuration table as strings, vLLM's pick, and
// CutlassGemm over the kernel units' runners. No CUTLASS headers here.
#include "cutlass_i8.hpp"

#include <stdexcept>
#include <utility>

#include "configs.hpp"

namespace i8g::peers {
namespace {

std::string dims(int a, int b, int c) {
  return std::to_string(a) + "x" + std::to_string(b) + "x" + std::to_string(c);
}

}  // namespace

const std::vector<CutlassConfig>& cutlass_configs() {
  static const std::vector<CutlassConfig> configs = [] {
    std::vector<CutlassConfig> v;
    for (const detail::Spec& s : detail::kSpecs)
      v.push_back({s.name, s.source == detail::Source::kVllm ? "vllm" : "sglang",
                   dims(s.tile_m, s.tile_n, s.tile_k), dims(s.cluster_m, s.cluster_n, s.cluster_k),
                   s.schedule == detail::Schedule::kPingpong ? "TmaWarpSpecializedPingpong" : "TmaWarpSpecialized",
                   s.when});
    return v;
  }();
  return configs;
}

// vLLM's cutlass_gemm_sm90_int8_dispatch: M rounded up to a power of two (at least 32); N only
// splits the smallest bucket; K plays no part.
std::string cutlass_vllm_pick(int64_t m, int64_t n, int64_t /*k*/) {
  uint64_t mp2 = 32;
  while (mp2 < static_cast<uint64_t>(m)) mp2 <<= 1;
  if (mp2 <= 32) return n < 8192 ? "vllm_M32_NSmall" : "vllm_M32_NBig";
  if (mp2 <= 64) return "vllm_M64";
  if (mp2 <= 128) return "vllm_M128";
  return "vllm_default";
}

struct CutlassGemm::Impl {
  size_t index;
  std::unique_ptr<detail::Runner> runner;
};

CutlassGemm::CutlassGemm(size_t config_index, int64_t m, int64_t n, int64_t k) {
  if (config_index >= detail::kNumSpecs)
    throw std::out_of_range("CUTLASS peer: no configuration " + std::to_string(config_index) + " (there are " +
                            std::to_string(detail::kNumSpecs) + ")");
  const bool vllm = detail::kSpecs[config_index].source == detail::Source::kVllm;
  impl_ = std::make_unique<Impl>(Impl{config_index, vllm ? detail::make_vllm_runner(config_index, m, n, k)
                                                         : detail::make_sglang_runner(config_index, m, n, k)});
}

CutlassGemm::~CutlassGemm() = default;
CutlassGemm::CutlassGemm(CutlassGemm&&) noexcept = default;
CutlassGemm& CutlassGemm::operator=(CutlassGemm&&) noexcept = default;

const CutlassConfig& CutlassGemm::config() const { return cutlass_configs()[impl_->index]; }

size_t CutlassGemm::workspace_bytes() const { return impl_->runner->workspace_bytes(); }

std::string CutlassGemm::run(const int8_t* x, const int8_t* w, const float* xs, const float* ws, void* out_bf16,
                             void* workspace, cudaStream_t stream, bool pdl) const {
  return impl_->runner->run(x, w, xs, ws, out_bf16, workspace, stream, pdl);
}

}  // namespace i8g::peers

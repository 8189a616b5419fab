// SGLang's five sm90 int8 configurations that vLLM does not have (see kernels_vllm.cu).
#include "kernel.cuh"

namespace i8g::peers::detail {
std::unique_ptr<Runner> make_sglang_runner(size_t index, int64_t m, int64_t n, int64_t k) {
  return make_runner<Source::kSglang>(index, m, n, k, std::make_index_sequence<kNumSpecs>{});
}
}  // namespace i8g::peers::detail

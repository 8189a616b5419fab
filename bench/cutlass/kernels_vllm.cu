// vLLM's five sm90 int8 configurations (a translation unit of its own so that builds compile the
// two halves of the table in parallel).
#include "kernel.cuh"

namespace i8g::peers::detail {
std::unique_ptr<Runner> make_vllm_runner(size_t index, int64_t m, int64_t n, int64_t k) {
  return make_runner<Source::kVllm>(index, m, n, k, std::make_index_sequence<kNumSpecs>{});
}
}  // namespace i8g::peers::detail

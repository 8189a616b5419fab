// read_cubin on arbitrary bytes: an Error or a result, never a read out of bounds.
#include <cstdlib>
#include <vector>

#include "fuzz/fuzz_support.hpp"
#include "runtime/report/cubin_elf.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // A copy of exactly `size` bytes, so ASan sees any read past the end of the image.
  const std::vector<uint8_t> image(data, data + size);
  i8g::fuzz::rejects_only_with_error([&] {
    const i8g::CubinInfo info = i8g::read_cubin(image);
    for (const auto& k : info.kernels)
      if (info.find(k.name) == nullptr || k.static_smem_bytes < 0) std::abort();
  });
  return 0;
}

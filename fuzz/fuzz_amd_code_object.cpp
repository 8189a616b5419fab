// The AMD readers on arbitrary bytes: offload bundle -> code object -> metadata note (msgpack)
// and kernel descriptors. An Error or a result, never a read out of bounds.
#include <vector>

#include "fuzz/fuzz_support.hpp"
#include "runtime/compile/amd_code_object.hpp"
#include "runtime/compile/msgpack.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace i8g;
  const std::vector<uint8_t> bytes(data, data + size);
  fuzz::rejects_only_with_error([&] {
    const AmdCodeObject co = read_amd_code_object(extract_code_object(bytes, "gfx90a"));
    for (const auto& k : co.kernels) {
      (void)co.descriptor(k.name);
      (void)co.find_function(k.name);
    }
  });
  fuzz::rejects_only_with_error([&] { (void)msgpack::decode(bytes.data(), bytes.size()); });
  return 0;
}

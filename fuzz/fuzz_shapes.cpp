// The shapes file, one "NxK" shape and the --m list, as a user or a script could write them.
#include <cstdlib>

#include "fuzz/fuzz_support.hpp"
#include "tools/shapes.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace i8g;
  const std::string s = fuzz::text(data, size);
  fuzz::rejects_only_with_error([&] {
    for (const NamedShape& shape : parse_shapes_file(s))
      if (shape.n <= 0 || shape.k <= 0) std::abort();  // the parser promises positive sizes
  });
  fuzz::rejects_only_with_error([&] { (void)parse_shape(s); });
  fuzz::rejects_only_with_error([&] {
    for (int64_t m : parse_m_list(s))
      if (m <= 0) std::abort();
  });
  return 0;
}

// parse_ptxas_log promises never to throw, on any log.
#include "fuzz/fuzz_support.hpp"
#include "runtime/report/ptxas_log.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)i8g::parse_ptxas_log(i8g::fuzz::text(data, size));
  return 0;
}

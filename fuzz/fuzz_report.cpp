// ResourceReport::from_json on arbitrary JSON text (the report column of a cache row).
#include <nlohmann/json.hpp>

#include "fuzz/fuzz_support.hpp"
#include "runtime/report/report.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const nlohmann::json j = nlohmann::json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return 0;
  i8g::fuzz::rejects_only_with_error([&] {
    const i8g::ResourceReport r = i8g::ResourceReport::from_json(j);
    (void)r.to_text();  // a report read back is printed by `inspect`
    (void)r.to_json();
  });
  return 0;
}

// The C ABI with hostile arguments, as far as it is reachable without a GPU: the pure struct
// validation (runtime/capi_args) on arbitrary bytes, then every entry point with those structs
// and a null context. Each must return a status (never throw, never crash); a null-context
// call must say INVALID_ARGUMENT.
#include <cstdlib>
#include <cstring>

#include "fuzz/fuzz_support.hpp"
#include "i8gemm/i8gemm.h"
#include "runtime/capi/capi_args.hpp"

extern "C" const char* i8g_fuzz_status_string_from_c(int status);  // c_caller.c

namespace {

// The struct is filled from the input, bytes past its end are zero: every bit pattern a C
// caller could pass, enum fields included.
template <class T>
T from_bytes(const uint8_t* data, size_t size, size_t* used) {
  T v;
  std::memset(&v, 0, sizeof v);
  const size_t n = size - *used < sizeof v ? size - *used : sizeof v;
  std::memcpy(&v, data + *used, n);
  *used += n;
  return v;
}

void expect_status(i8gemm_status s, i8gemm_status want) {
  if (s != want || std::strlen(i8gemm_last_error()) == 0) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace i8g;
  size_t used = 0;
  const auto problem = from_bytes<i8gemm_problem>(data, size, &used);
  const auto args = from_bytes<i8gemm_args>(data, size, &used);
  const auto qargs = from_bytes<i8gemm_quantize_args>(data, size, &used);
  const auto max_m = from_bytes<int64_t>(data, size, &used);
  const auto status = from_bytes<int>(data, size, &used);

  fuzz::rejects_only_with_error([&] {
    const GemmProblem p = problem_from_c(&problem, "fuzz");
    if (!p.invalid_reason().empty()) std::abort();  // accepted means valid
  });
  fuzz::rejects_only_with_error([&] { (void)problem_from_c(nullptr, "fuzz"); });
  fuzz::rejects_only_with_error([&] { (void)args_from_c(&args, "fuzz"); });
  fuzz::rejects_only_with_error([&] { (void)args_from_c(nullptr, "fuzz"); });
  fuzz::rejects_only_with_error([&] { (void)quantize_request_from_c(&qargs); });
  fuzz::rejects_only_with_error([&] { (void)quantize_request_from_c(nullptr); });

  const i8gemm_status bad = I8GEMM_ERROR_INVALID_ARGUMENT;
  expect_status(i8gemm_prepare(nullptr, &problem, max_m), bad);
  expect_status(i8gemm_prepare(nullptr, nullptr, max_m), bad);
  expect_status(i8gemm_run(nullptr, &problem, &args, nullptr), bad);
  expect_status(i8gemm_run(nullptr, &problem, nullptr, reinterpret_cast<void*>(uintptr_t(max_m))), bad);
  expect_status(i8gemm_weight_colsum(nullptr, &problem, args.w, nullptr, nullptr), bad);
  expect_status(i8gemm_quantize(nullptr, &qargs, nullptr), bad);
  expect_status(i8gemm_quantize(nullptr, nullptr, nullptr), bad);
  expect_status(i8gemm_create(0, nullptr, nullptr), bad);
  i8gemm_destroy(nullptr);
  // Any int a C caller passes as a status has a string.
  if (i8g_fuzz_status_string_from_c(status) == nullptr) std::abort();
  return 0;
}

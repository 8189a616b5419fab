// The C ABI's struct validation (runtime/capi_args), without a device: every bit pattern a C
// caller can pass, enum fields included, is either accepted as a valid problem or rejected
// with INVALID_ARGUMENT. Found by fuzz/fuzz_capi (out-of-range enum values were loaded as
// enums, undefined behaviour that UBSan reports).
#include <gtest/gtest.h>

#include <cstring>
#include <functional>

#include "runtime/capi/capi_args.hpp"

namespace i8g {
namespace {

i8gemm_problem valid_problem() {
  i8gemm_problem p{};
  p.n = 2560;
  p.k = 4096;
  p.weight_layout = I8GEMM_WEIGHT_NK;
  p.act_scale = I8GEMM_SCALE_PER_TOKEN;
  p.weight_scale = I8GEMM_SCALE_PER_CHANNEL;
  p.out = I8GEMM_OUT_BF16;
  return p;
}

// Stores an int a C caller may pass into an enum field without a C++ enum conversion.
template <class E>
void put_int(E* field, int v) {
  static_assert(sizeof(E) == sizeof(int), "C enums are int-sized");
  std::memcpy(field, &v, sizeof v);
}

int status_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return status_for(e.kind());
  }
  return I8GEMM_SUCCESS;
}

TEST(CapiArgs, AValidProblemConvertsFieldByField) {
  i8gemm_problem c = valid_problem();
  c.weight_layout = I8GEMM_WEIGHT_KN;
  c.out = I8GEMM_OUT_F32;
  c.has_bias = 7;  // any non-zero int is true
  const GemmProblem p = problem_from_c(&c, "test");
  EXPECT_EQ(p.key(), "n2560_k4096_kn_tok_ch_f32_bias");
}

TEST(CapiArgs, OutOfRangeEnumValuesAreInvalidArgumentsNotUndefinedBehaviour) {
  for (int v : {-1, 2, 3, 4, 5, 16, 255, 1 << 20, INT32_MIN, INT32_MAX}) {
    i8gemm_problem c = valid_problem();
    put_int(&c.weight_layout, v);
    if (v != 0 && v != 1) {
      EXPECT_EQ(status_of([&] { problem_from_c(&c, "t"); }), I8GEMM_ERROR_INVALID_ARGUMENT) << v;
    }
    c = valid_problem();
    put_int(&c.act_scale, v);
    EXPECT_EQ(status_of([&] { problem_from_c(&c, "t"); }), I8GEMM_ERROR_INVALID_ARGUMENT) << v;
    c = valid_problem();
    put_int(&c.weight_scale, v);
    if (v != 2) {
      EXPECT_EQ(status_of([&] { problem_from_c(&c, "t"); }), I8GEMM_ERROR_INVALID_ARGUMENT) << v;
    }
    c = valid_problem();
    put_int(&c.out, v);
    if (v < 0 || v > 3) {
      EXPECT_EQ(status_of([&] { problem_from_c(&c, "t"); }), I8GEMM_ERROR_INVALID_ARGUMENT) << v;
    }

    i8gemm_quantize_args q{};
    q.m = 1;
    q.k = 16;
    q.granularity = I8GEMM_SCALE_PER_TOKEN;
    put_int(&q.in_type, v);
    if (v < 0 || v > 2) {
      EXPECT_EQ(status_of([&] { quantize_request_from_c(&q); }), I8GEMM_ERROR_INVALID_ARGUMENT) << v;
    }
    q.in_type = I8GEMM_IN_F32;
    put_int(&q.granularity, v);
    if (v != 0 && v != 1) {
      EXPECT_EQ(status_of([&] { quantize_request_from_c(&q); }), I8GEMM_ERROR_INVALID_ARGUMENT) << v;
    }
  }
}

TEST(CapiArgs, NullStructsAreInvalidArguments) {
  EXPECT_EQ(status_of([] { problem_from_c(nullptr, "t"); }), I8GEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(status_of([] { args_from_c(nullptr, "t"); }), I8GEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(status_of([] { quantize_request_from_c(nullptr); }), I8GEMM_ERROR_INVALID_ARGUMENT);
}

TEST(CapiArgs, QuantizeRowsBeyondTheGridLimitAreRejected) {
  i8gemm_quantize_args q{};
  q.k = 16;
  q.granularity = I8GEMM_SCALE_PER_TOKEN;
  q.m = int64_t(1) << 31;  // one block per row: gridDim.x stops at 2^31 - 1
  EXPECT_EQ(status_of([&] { quantize_request_from_c(&q); }), I8GEMM_ERROR_INVALID_ARGUMENT);
  q.m = (int64_t(1) << 31) - 1;
  EXPECT_EQ(status_of([&] { quantize_request_from_c(&q); }), I8GEMM_SUCCESS);
}

TEST(CapiArgs, WorkspaceSizeQueryRefusesNullOutNegativeMaxMAndBadProblems) {
  const i8gemm_problem p = valid_problem();
  EXPECT_EQ(status_of([&] { workspace_query_from_c(&p, 16, nullptr); }), I8GEMM_ERROR_INVALID_ARGUMENT);
  size_t bytes = 77;
  EXPECT_EQ(status_of([&] { workspace_query_from_c(&p, -1, &bytes); }), I8GEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(bytes, 0u) << "a refused query leaves 0, never a stale size";
  bytes = 77;
  EXPECT_EQ(status_of([&] { workspace_query_from_c(nullptr, 16, &bytes); }), I8GEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(bytes, 0u);
  i8gemm_problem bad = p;
  bad.k = 0;
  EXPECT_EQ(status_of([&] { workspace_query_from_c(&bad, 16, &bytes); }), I8GEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(workspace_query_from_c(&p, 0, &bytes).key(), "n2560_k4096_nk_tok_ch_bf16") << "max_m 0 is a question";
}

TEST(CapiArgs, ARunsWorkspaceIsRefusedMisalignedOrNullWithASize) {
  EXPECT_EQ(status_of([] { workspace_from_c(nullptr, 0); }), I8GEMM_SUCCESS);
  EXPECT_EQ(status_of([] { workspace_from_c(reinterpret_cast<void*>(0x20000), 1 << 20); }), I8GEMM_SUCCESS);
  EXPECT_EQ(status_of([] { workspace_from_c(reinterpret_cast<void*>(0x20080), 1 << 20); }),
            I8GEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(status_of([] { workspace_from_c(nullptr, 256); }), I8GEMM_ERROR_INVALID_ARGUMENT);
  try {
    workspace_from_c(reinterpret_cast<void*>(0x20010), 4096);
    ADD_FAILURE() << "a misaligned workspace was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.where(), "i8gemm_run_with_workspace");
    EXPECT_NE(std::string(e.what()).find("256-byte aligned"), std::string::npos) << e.what();
  }
}

TEST(CapiArgs, OptionsAreReadOnlyWithinTheirStructSize) {
  EXPECT_FALSE(engine_options_from_c(nullptr, "t").strict) << "no options: the defaults";
  i8gemm_options o{};
  o.strict = 1;
  try {
    engine_options_from_c(&o, "t");
    ADD_FAILURE() << "struct_size 0 was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("struct_size"), std::string::npos) << e.what();
  }
  o.struct_size = sizeof o;
  EXPECT_TRUE(engine_options_from_c(&o, "t").strict);
  o.strict = 0;
  EXPECT_FALSE(engine_options_from_c(&o, "t").strict);
}

TEST(CapiArgs, AChoiceFillsTheCStructAndCutsALongNameSafely) {
  Choice c;
  c.kernel = "cublaslt:algo=2";
  c.bucket_max_m = 1024;
  c.tuned = true;
  c.binary = Choice::Binary::cublaslt;
  i8gemm_choice out;
  std::memset(&out, 0x5a, sizeof out);
  fill_choice(c, &out);
  EXPECT_STREQ(out.kernel, "cublaslt:algo=2");
  EXPECT_EQ(out.bucket_max_m, 1024);
  EXPECT_EQ(out.origin, I8GEMM_CHOICE_TUNED);
  EXPECT_EQ(out.binary, I8GEMM_BINARY_CUBLASLT);
  c.kernel = std::string(400, 'k');
  c.tuned = false;
  c.binary = Choice::Binary::compiled;
  fill_choice(c, &out);
  EXPECT_EQ(std::strlen(out.kernel), sizeof out.kernel - 1) << "cut to fit and terminated";
  EXPECT_EQ(out.origin, I8GEMM_CHOICE_UNTUNED_DEFAULT);
  EXPECT_EQ(out.binary, I8GEMM_BINARY_COMPILED);
  c.binary = Choice::Binary::cached;
  fill_choice(c, &out);
  EXPECT_EQ(out.binary, I8GEMM_BINARY_CACHED);
}

}  // namespace
}  // namespace i8g

// C ABI behaviour that needs no device: creating a context without a GPU, status strings, and
// argument checks that come before any device work. Runs everywhere.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <thread>

#include "i8gemm/i8gemm.h"
#include "runtime/gpu/cuda_driver.hpp"

namespace {

TEST(CapiNoDevice, CreateWithoutDeviceReturnsNoDeviceAndSaysWhy) {
  std::string why;
  if (i8g::Driver::get(&why)) GTEST_SKIP() << "a CUDA device is present; this pins the no-GPU path";
  i8gemm_context* ctx = reinterpret_cast<i8gemm_context*>(0x1);  // must be overwritten
  EXPECT_EQ(i8gemm_create(0, "/tmp/i8g_no_device_test.sqlite", &ctx), I8GEMM_ERROR_NO_DEVICE);
  EXPECT_EQ(ctx, nullptr) << "a failed create must leave *out null";
  const std::string err = i8gemm_last_error();
  EXPECT_NE(err.find("no CUDA"), std::string::npos) << "last_error: " << err;
  EXPECT_NE(err.find(why), std::string::npos) << "last_error should carry the driver's reason";
  // The default cache path too (NULL): the device check comes first, no file is needed.
  EXPECT_EQ(i8gemm_create(0, nullptr, &ctx), I8GEMM_ERROR_NO_DEVICE);
}

TEST(CapiNoDevice, DestroyOfNullIsHarmless) { i8gemm_destroy(nullptr); }

TEST(CapiStatus, EveryStatusHasItsOwnString) {
  std::set<std::string> seen;
  for (int s = I8GEMM_SUCCESS; s <= I8GEMM_ERROR_NOT_IN_CACHE; ++s) {
    const char* text = i8gemm_status_string(static_cast<i8gemm_status>(s));
    ASSERT_NE(text, nullptr) << s;
    EXPECT_STRNE(text, "") << s;
    EXPECT_STRNE(text, "unknown status") << "status " << s << " has no string";
    EXPECT_TRUE(seen.insert(text).second) << "status " << s << " shares its string: " << text;
  }
  EXPECT_STREQ(i8gemm_status_string(static_cast<i8gemm_status>(99)), "unknown status");
  EXPECT_STREQ(i8gemm_status_string(static_cast<i8gemm_status>(-1)), "unknown status");
}

TEST(CapiArguments, NullContextAndNullOutAreInvalidArguments) {
  const i8gemm_problem p{64, 64, I8GEMM_WEIGHT_NK, I8GEMM_SCALE_PER_TOKEN, I8GEMM_SCALE_PER_CHANNEL,
                         I8GEMM_OUT_BF16, 0, 0};
  EXPECT_EQ(i8gemm_create(0, nullptr, nullptr), I8GEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(i8gemm_last_error()).find("out"), std::string::npos) << i8gemm_last_error();
  EXPECT_EQ(i8gemm_prepare(nullptr, &p, 16), I8GEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(i8gemm_last_error()).find("context"), std::string::npos) << i8gemm_last_error();
  i8gemm_args a{};
  EXPECT_EQ(i8gemm_run(nullptr, &p, &a, nullptr), I8GEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(i8gemm_last_error()).find("context"), std::string::npos) << i8gemm_last_error();
  EXPECT_EQ(i8gemm_weight_colsum(nullptr, &p, nullptr, nullptr, nullptr), I8GEMM_ERROR_INVALID_ARGUMENT);
  i8gemm_quantize_args q{};
  EXPECT_EQ(i8gemm_quantize(nullptr, &q, nullptr), I8GEMM_ERROR_INVALID_ARGUMENT);
}

// The caller-workspace entry points check what needs no device before the context: a size
// query with no place to put the answer or a negative max_m, a workspace null with a size or
// off its 256-byte alignment. Nothing is launched for any of them.
TEST(CapiArguments, WorkspaceSizeAndRunWithWorkspaceRefuseBadInputFirst) {
  const i8gemm_problem p{64, 64, I8GEMM_WEIGHT_NK, I8GEMM_SCALE_PER_TOKEN, I8GEMM_SCALE_PER_CHANNEL,
                         I8GEMM_OUT_BF16, 0, 0};
  size_t bytes = 99;
  EXPECT_EQ(i8gemm_workspace_size(nullptr, &p, 16, nullptr), I8GEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(i8gemm_last_error()).find("bytes is null"), std::string::npos) << i8gemm_last_error();
  EXPECT_EQ(i8gemm_workspace_size(nullptr, &p, -5, &bytes), I8GEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(i8gemm_last_error()).find("max_m=-5"), std::string::npos) << i8gemm_last_error();
  EXPECT_EQ(bytes, 0u);
  EXPECT_EQ(i8gemm_workspace_size(nullptr, nullptr, 16, &bytes), I8GEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(i8gemm_last_error()).find("problem is null"), std::string::npos) << i8gemm_last_error();
  EXPECT_EQ(i8gemm_workspace_size(nullptr, &p, 16, &bytes), I8GEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(i8gemm_last_error()).find("context"), std::string::npos) << i8gemm_last_error();

  i8gemm_args a{};
  a.m = 1;
  EXPECT_EQ(i8gemm_run_with_workspace(nullptr, &p, &a, reinterpret_cast<void*>(0x10040), 4096, nullptr),
            I8GEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(i8gemm_last_error()).find("256-byte aligned"), std::string::npos) << i8gemm_last_error();
  EXPECT_EQ(i8gemm_run_with_workspace(nullptr, &p, &a, nullptr, 4096, nullptr), I8GEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(i8gemm_last_error()).find("workspace is null"), std::string::npos) << i8gemm_last_error();
  EXPECT_EQ(i8gemm_run_with_workspace(nullptr, &p, &a, nullptr, 0, nullptr), I8GEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(i8gemm_last_error()).find("context"), std::string::npos) << i8gemm_last_error();
}

TEST(CapiArguments, OptionsChoiceAndLogLevelRefuseBadInput) {
  i8gemm_context* ctx = nullptr;
  i8gemm_options o{};  // struct_size 0: an uninitialized struct, refused before any device work
  EXPECT_EQ(i8gemm_create_with_options(0, nullptr, &o, &ctx), I8GEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(i8gemm_last_error()).find("struct_size"), std::string::npos) << i8gemm_last_error();
  EXPECT_EQ(ctx, nullptr);
  o.struct_size = sizeof o;
  EXPECT_EQ(i8gemm_create_with_options(0, nullptr, &o, nullptr), I8GEMM_ERROR_INVALID_ARGUMENT);
  const i8gemm_problem p{64, 64, I8GEMM_WEIGHT_NK, I8GEMM_SCALE_PER_TOKEN, I8GEMM_SCALE_PER_CHANNEL,
                         I8GEMM_OUT_BF16, 0, 0};
  i8gemm_choice c{};
  EXPECT_EQ(i8gemm_chosen(nullptr, &p, 1, &c), I8GEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(i8gemm_last_error()).find("context"), std::string::npos) << i8gemm_last_error();
  for (int bad : {-1, 5, 99}) {
    EXPECT_EQ(i8gemm_set_log_level(bad), I8GEMM_ERROR_INVALID_ARGUMENT) << bad;
    EXPECT_NE(std::string(i8gemm_last_error()).find("level"), std::string::npos) << i8gemm_last_error();
  }
  EXPECT_EQ(i8gemm_set_log_level(I8GEMM_LOG_WARNING), I8GEMM_SUCCESS);
}

TEST(CapiArguments, LastErrorIsPerThread) {
  EXPECT_EQ(i8gemm_prepare(nullptr, nullptr, 1), I8GEMM_ERROR_INVALID_ARGUMENT);
  const std::string mine = i8gemm_last_error();
  ASSERT_FALSE(mine.empty());
  std::string other = "unset";
  std::thread t([&] { other = i8gemm_last_error(); });
  t.join();
  EXPECT_EQ(other, "") << "a fresh thread must not see another thread's error";
  EXPECT_EQ(std::string(i8gemm_last_error()), mine);
}

}  // namespace

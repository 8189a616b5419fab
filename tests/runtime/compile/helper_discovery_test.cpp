// Helper programs (the hipRTC worker) are run from explicit configuration or from beside the
// library or program only: never from a path found at build time (issue 14, item 6). In the
// build tree the tests live in build/tests and the worker in build/tools, so without the
// variable it must not be found, and the error must say where it looked and how to choose one.
#include <gtest/gtest.h>

#include <string>

#include "core/error.hpp"
#include "runtime/compile/child_process.hpp"

namespace i8g {
namespace {

TEST(HelperDiscovery, NoBuildTimePathIsEverTried) {
  const std::string worker = std::string(I8G_BINARY_DIR) + "/tools/i8gemm_hiprtc_worker";
  try {
    const std::string found = find_helper("i8gemm_hiprtc_worker", {"", "I8GEMM_HIPRTC_WORKER"});
    FAIL() << "found " << found << " without being told where: only explicit configuration or the "
           << "program's own directory may name a helper";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.find(worker), std::string::npos) << "looked at the build tree's copy: " << what;
    EXPECT_NE(what.find("I8GEMM_HIPRTC_WORKER"), std::string::npos) << what;
    EXPECT_NE(what.find(std::string(I8G_BINARY_DIR) + "/tests/i8gemm_hiprtc_worker"), std::string::npos)
        << "should name the program's directory it searched: " << what;
  }
}

TEST(HelperDiscovery, AnExplicitPathIsUsedAsGiven) {
  const std::string worker = std::string(I8G_BINARY_DIR) + "/tools/i8gemm_hiprtc_worker";
  EXPECT_EQ(find_helper("i8gemm_hiprtc_worker", {worker, "I8GEMM_HIPRTC_WORKER"}), worker);
  EXPECT_THROW(find_helper("i8gemm_hiprtc_worker", {"/nonexistent/worker", "I8GEMM_HIPRTC_WORKER"}), Error);
}

}  // namespace
}  // namespace i8g

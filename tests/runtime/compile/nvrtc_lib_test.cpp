// NVRTC is opened at run time (runtime/compile/nvrtc_lib.hpp): CUDA 13 first, then 12, each
// also from its pip wheel's folder; a copy that cannot be loaded is an error that says what
// was tried, never a crash.
#include <gtest/gtest.h>

#include <string>

#include "core/error.hpp"
#include "runtime/compile/compiler.hpp"
#include "runtime/compile/nvrtc_lib.hpp"

namespace i8g {
namespace {

TEST(NvrtcLib, SearchesCuda13ThenCuda12WithTheirWheelFolders) {
  const std::vector<LibraryVersion>& v = nvrtc_versions();
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].soname, "libnvrtc.so.13");
  EXPECT_EQ(v[0].wheel_dir, "nvidia/cu13/lib");
  EXPECT_EQ(v[1].soname, "libnvrtc.so.12");
  EXPECT_EQ(v[1].wheel_dir, "nvidia/cuda_nvrtc/lib");
  EXPECT_EQ(v[0].major, 13);
  EXPECT_EQ(v[1].major, 12);
}

TEST(NvrtcLib, AnUnloadableOverrideIsAnErrorNamingTheFileAndTheVariable) {
  LibrarySearch s;
  s.override_path = "/nonexistent/libnvrtc.so.13";
  std::string why;
  EXPECT_EQ(load_nvrtc(s, why), nullptr);
  EXPECT_NE(why.find("NVRTC could not be loaded from I8GEMM_NVRTC"), std::string::npos) << why;
  EXPECT_NE(why.find("/nonexistent/libnvrtc.so.13"), std::string::npos) << why;
}

TEST(NvrtcLib, AFileThatIsNotNvrtcIsAnErrorNamingTheMissingFunction) {
  LibrarySearch s;
  s.override_path = "libc.so.6";  // loads, but has no nvrtcVersion
  std::string why;
  EXPECT_EQ(load_nvrtc(s, why), nullptr);
  EXPECT_NE(why.find("libc.so.6 lacks nvrtcVersion"), std::string::npos) << why;
}

// This machine's toolkit is found without being named (the compile tests depend on it).
TEST(NvrtcLib, TheDefaultSearchFindsThisMachinesNvrtc) {
  std::string why;
  const auto n = load_nvrtc(library_search(""), why);
  ASSERT_NE(n, nullptr) << why;
  int major = 0, minor = 0;
  ASSERT_EQ(n->nvrtcVersion(&major, &minor), NVRTC_SUCCESS);
  EXPECT_GE(major, 12);
}

// The compiler reports the version of the NVRTC it loaded: the cache key's compiler field.
TEST(NvrtcLib, TheCompilerReportsTheLoadedVersion) {
  int major = 0, minor = 0;
  ASSERT_EQ(nvrtc().nvrtcVersion(&major, &minor), NVRTC_SUCCESS);
  EXPECT_EQ(make_compiler(Target::from_arch("sm_90a"))->version(),
            "nvrtc " + std::to_string(major) + "." + std::to_string(minor));
}

}  // namespace
}  // namespace i8g

// CUDA libraries opened at run time (core/shared_library.hpp): where they are looked for, in
// which order, and what a failure says.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "core/options.hpp"
#include "core/shared_library.hpp"
#include "tests/support/files.hpp"

namespace i8g {
namespace {

using testsupport::TempDir;

const std::vector<LibraryVersion> kVersions = {{"libx.so.13", "nvidia/cu13/lib", 13}, {"libx.so.12", "nvidia/x/lib", 12}};

bool contains(const std::string& hay, const std::string& needle) { return hay.find(needle) != std::string::npos; }

TEST(LibraryCandidates, NewestVersionFirstThenLoaderThenWheelsThenToolkit) {
  LibrarySearch s;
  s.site_packages = {"/venv/site-packages", "/usr/lib/python3/dist-packages"};
  s.toolkit_dirs = {"/usr/local/cuda/lib64"};
  const std::vector<std::string> want = {
      "libx.so.13",
      "/venv/site-packages/nvidia/cu13/lib/libx.so.13",
      "/usr/lib/python3/dist-packages/nvidia/cu13/lib/libx.so.13",
      "/usr/local/cuda/lib64/libx.so.13",
      "libx.so.12",
      "/venv/site-packages/nvidia/x/lib/libx.so.12",
      "/usr/lib/python3/dist-packages/nvidia/x/lib/libx.so.12",
      "/usr/local/cuda/lib64/libx.so.12",
  };
  EXPECT_EQ(library_candidates(kVersions, s), want);
}

TEST(LibraryCandidates, UnderAnOlderDriverItsOwnVersionComesFirst) {
  LibrarySearch s;
  s.site_packages = {"/site"};
  s.driver_major = 12;
  const std::vector<std::string> want = {"libx.so.12", "/site/nvidia/x/lib/libx.so.12", "libx.so.13",
                                         "/site/nvidia/cu13/lib/libx.so.13"};
  EXPECT_EQ(library_candidates(kVersions, s), want);
  s.driver_major = 13;
  EXPECT_EQ(library_candidates(kVersions, s).front(), "libx.so.13");
}

TEST(LibraryCandidates, AnOverrideIsTheOnlyCandidate) {
  LibrarySearch s;
  s.override_path = "/opt/libx.so.12";
  s.site_packages = {"/venv/site-packages"};
  s.toolkit_dirs = {"/usr/local/cuda/lib64"};
  EXPECT_EQ(library_candidates(kVersions, s), std::vector<std::string>{"/opt/libx.so.12"});
}

TEST(SitePackagesOf, FindsTheSitePackagesComponentOnly) {
  EXPECT_EQ(site_packages_of("/v/lib/python3.11/site-packages/torch/lib/libtorch.so"), "/v/lib/python3.11/site-packages");
  EXPECT_EQ(site_packages_of("/usr/lib/python3/dist-packages/x.so"), "/usr/lib/python3/dist-packages");
  EXPECT_EQ(site_packages_of("/v/lib/python3.11/site-packages"), "/v/lib/python3.11/site-packages");
  EXPECT_EQ(site_packages_of("/opt/my-site-packages-copy/x.so"), "");
  EXPECT_EQ(site_packages_of("/opt/site-packages-old/site-packages/x.so"), "/opt/site-packages-old/site-packages");
  EXPECT_EQ(site_packages_of("/usr/lib/libc.so.6"), "");
}

TEST(PythonSitePackages, ComesFromVirtualEnvCondaAndPythonPathWhenTheyExist) {
  TempDir t;
  const std::string venv_site = t.file("venv/lib/python3.11/site-packages");
  const std::string conda_site = t.file("conda/lib/python3.12/site-packages");
  std::filesystem::create_directories(venv_site);
  std::filesystem::create_directories(conda_site);
  std::filesystem::create_directories(t.file("extra"));
  Options o;
  o.virtual_env = t.file("venv");
  o.conda_prefix = t.file("conda");
  o.pythonpath = t.file("extra") + ":" + t.file("missing");
  ScopedOptions scoped(o);
  const std::vector<std::string> dirs = python_site_packages();
  auto at = [&](const std::string& d) { return std::find(dirs.begin(), dirs.end(), d) - dirs.begin(); };
  ASSERT_LT(at(t.file("extra")), long(dirs.size()));
  ASSERT_LT(at(venv_site), long(dirs.size()));
  ASSERT_LT(at(conda_site), long(dirs.size()));
  EXPECT_LT(at(t.file("extra")), at(venv_site));
  EXPECT_LT(at(venv_site), at(conda_site));
  EXPECT_EQ(at(t.file("missing")), long(dirs.size())) << "a folder that does not exist is not searched";
}

TEST(CudaToolkitLibDirs, CudaHomeComesFirst) {
  TempDir t;
  std::filesystem::create_directories(t.file("cuda/lib64"));
  Options o;
  o.cuda_home = t.file("cuda");
  o.cuda_path = t.file("nowhere");
  ScopedOptions scoped(o);
  const std::vector<std::string> dirs = cuda_toolkit_lib_dirs();
  ASSERT_FALSE(dirs.empty());
  EXPECT_EQ(dirs.front(), t.file("cuda/lib64"));
  EXPECT_EQ(std::find(dirs.begin(), dirs.end(), t.file("nowhere/lib64")), dirs.end());
}

TEST(OpenLibrary, AMissingOverrideSaysWhichFileAndWhichVariable) {
  LibrarySearch s;
  s.override_path = "/nonexistent/libx.so.13";
  const OpenedLibrary lib = open_library(kVersions, s, "X", "I8GEMM_X");
  EXPECT_EQ(lib.handle, nullptr);
  EXPECT_TRUE(contains(lib.why, "X could not be loaded from I8GEMM_X")) << lib.why;
  EXPECT_TRUE(contains(lib.why, "/nonexistent/libx.so.13 (")) << lib.why;
  EXPECT_TRUE(contains(lib.why, "No such file")) << "dlerror's reason is kept: " << lib.why;
}

TEST(OpenLibrary, NothingFoundListsEverySonameAndFolderTried) {
  TempDir t;
  LibrarySearch s;
  s.site_packages = {t.path()};
  const OpenedLibrary lib = open_library(kVersions, s, "X", "I8GEMM_X");
  EXPECT_EQ(lib.handle, nullptr);
  for (const std::string& c : library_candidates(kVersions, s)) EXPECT_TRUE(contains(lib.why, c)) << c << "\n" << lib.why;
  EXPECT_TRUE(contains(lib.why, t.path() + "/nvidia/cu13/lib/libx.so.13 (absent)")) << lib.why;
  EXPECT_TRUE(contains(lib.why, "set I8GEMM_X")) << lib.why;
}

// A wheel's copy is opened from its site-packages folder (libc stands in for the library: a
// name for a file the process has already mapped).
TEST(OpenLibrary, OpensTheCopyInAWheelFolder) {
  Dl_info info{};
  ASSERT_NE(dladdr(reinterpret_cast<void*>(&::dlopen), &info), 0);
  ASSERT_NE(info.dli_fname, nullptr);
  TempDir t;
  std::filesystem::create_directories(t.file("nvidia/x/lib"));
  const std::string copy = t.file("nvidia/x/lib/libx.so.12");
  std::filesystem::create_symlink(std::filesystem::canonical(info.dli_fname), copy);
  LibrarySearch s;
  s.site_packages = {t.path()};
  const OpenedLibrary lib = open_library(kVersions, s, "X", "I8GEMM_X");
  EXPECT_NE(lib.handle, nullptr) << lib.why;
  EXPECT_EQ(lib.path, copy);
}

}  // namespace
}  // namespace i8g

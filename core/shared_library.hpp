// CUDA libraries that are opened at run time by soname, newest major version first, and never
// linked (NVRTC, cuBLASLt): one build then serves where only CUDA 12's copies exist, such as
// those inside pip's nvidia-* wheels, and every command that does not need one (inspect, cache
// operations) runs where it is absent. Where a library is looked for is one pure function,
// library_candidates(), so that the order is testable; opening is dlopen over its list.
#pragma once
#include <string>
#include <vector>

namespace i8g {

// One major version of a library: its soname and the folder, relative to site-packages, in
// which its pip wheel puts it (CUDA 12 wheels: a folder per library, e.g. nvidia/cuda_nvrtc/lib;
// CUDA 13 wheels: all in nvidia/cu13/lib).
struct LibraryVersion {
  std::string soname;     // "libnvrtc.so.13"
  std::string wheel_dir;  // "nvidia/cu13/lib"
  int major = 0;          // the CUDA major version it belongs to: 13
};

struct LibrarySearch {
  std::string override_path;               // e.g. I8GEMM_NVRTC: when set, the only candidate
  std::vector<std::string> site_packages;  // python_site_packages()
  std::vector<std::string> toolkit_dirs;   // cuda_toolkit_lib_dirs()
  // The CUDA major version of the driver already loaded in the process (0: none or unknown).
  // Versions newer than it go last: a CUDA 12 driver may not take CUDA 13's CUBINs or run its
  // cuBLASLt, so a CUDA 12 copy is preferred there when one exists.
  int driver_major = 0;
};

// The names to dlopen, in order: the override alone when set. Otherwise, for each version in
// the order given (newest first; those newer than driver_major moved last): the bare soname (the dynamic loader: a copy the process has
// already loaded, e.g. torch's, then LD_LIBRARY_PATH, RUNPATH, ld.so.cache), then
// <site-packages>/<wheel_dir>/<soname> for each site-packages, then <toolkit dir>/<soname>.
std::vector<std::string> library_candidates(const std::vector<LibraryVersion>& versions, const LibrarySearch& where);

// The site-packages (or dist-packages) folder a path lies in, or "" when it lies in none:
// "/venv/lib/python3.11/site-packages/torch/lib/libtorch.so" -> "/venv/lib/python3.11/site-packages".
std::string site_packages_of(const std::string& path);

// The Python site-packages folders this process can see, existing ones only, each once: those
// of the objects it has mapped (a Python process's extension modules, or a wheel that ships
// libi8gemm.so), then PYTHONPATH, VIRTUAL_ENV, CONDA_PREFIX, the user's and the system's.
std::vector<std::string> python_site_packages();

// $CUDA_HOME/lib64, $CUDA_PATH/lib64 and /usr/local/cuda/lib64, existing ones only, each once.
std::vector<std::string> cuda_toolkit_lib_dirs();

// The CUDA major version of the libcuda.so.1 this process has already loaded (it is not loaded
// here: a compile-only process has no driver), or 0.
int loaded_driver_major();

// The search for a library with this override (site-packages, toolkit folders and the loaded
// driver's version filled in).
LibrarySearch library_search(const std::string& override_path);

struct OpenedLibrary {
  void* handle = nullptr;  // dlopen(RTLD_NOW | RTLD_LOCAL); kept open for the process
  std::string path;        // the candidate that opened
  std::string why;         // when handle is null: what was tried, and how to name a copy
};

// Opens the first of library_candidates() that loads. `what` names the library in the message
// ("NVRTC"), `override_variable` the variable that names a copy ("I8GEMM_NVRTC"). Never throws.
OpenedLibrary open_library(const std::vector<LibraryVersion>& versions, const LibrarySearch& where,
                           const std::string& what, const std::string& override_variable);

// dlsym(lib, name); a missing symbol is recorded in `why` (the first one only).
void* library_symbol(void* lib, const char* name, const std::string& what, std::string& why);

}  // namespace i8g

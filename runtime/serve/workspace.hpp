// A caller's workspace for one run (i8gemm_run_with_workspace): device scratch memory in place
// of the prepared problem's own, so that runs of one problem on several streams never share
// split-K partials or cuBLASLt's accumulator. The checks here need no device (unit-tested on the
// CPU); the engine adds the device-pointer check and says how many bytes a run needs.
#pragma once
#include <cstddef>
#include <string>

namespace i8g {

struct CallerWorkspace {
  void* ptr = nullptr;
  size_t bytes = 0;
};

// The alignment i8gemm_run_with_workspace asks of a workspace: enough for cuBLASLt's workspace
// and the split-K partials' vector stores, and what cudaMalloc gives anyway.
constexpr size_t kWorkspaceAlignment = 256;

// Why `w` cannot serve a run that needs `need` bytes, or "" when it can: a null pointer with a
// non-zero size, a pointer that is not kWorkspaceAlignment-aligned, or fewer bytes than `need`.
// A null workspace of 0 bytes serves a run that needs none. No allocation when it can.
std::string workspace_refusal(const CallerWorkspace& w, size_t need);

}  // namespace i8g

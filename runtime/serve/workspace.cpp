#include "runtime/serve/workspace.hpp"

#include <fmt/format.h>

#include <cstdint>

namespace i8g {

std::string workspace_refusal(const CallerWorkspace& w, size_t need) {
  if (!w.ptr && w.bytes > 0) return fmt::format("workspace is null but workspace_bytes is {}", w.bytes);
  if (reinterpret_cast<uintptr_t>(w.ptr) % kWorkspaceAlignment != 0)
    return fmt::format("workspace {} is not {}-byte aligned", fmt::ptr(w.ptr), kWorkspaceAlignment);
  if (w.bytes < need)
    return fmt::format("workspace_bytes is {}, less than the {} bytes this run needs", w.bytes, need);
  return {};
}

}  // namespace i8g

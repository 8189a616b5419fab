// `i8gemm --version`: what a bug report or an audit needs to name this build.
#include <fmt/format.h>

#include "core/embedded.hpp"
#include "core/error.hpp"
#include "core/target.hpp"
#include "i8gemm/i8gemm.h"
#include "i8gemm_build_info.h"
#include "runtime/compile/compiler.hpp"
#include "runtime/compile/nvrtc_lib.hpp"
#include "tools/cli.hpp"

namespace i8g::cli {

std::string version_text() {
  std::string text = fmt::format("i8gemm {} (commit {}, generator {})", I8GEMM_VERSION_STRING, I8G_GIT_COMMIT,
                                 std::string(generator_hash()).substr(0, 16));
  // One compiler per vendor; a missing one says why instead of failing --version.
  for (const char* arch : {"sm_90a", "gfx90a"}) {
    std::string line;
    try {
      const Target t = Target::from_arch(arch);
      line = make_compiler(t)->version();
      if (!t.amd) line += " (" + nvrtc().path + ")";  // which copy the search found
    } catch (const Error& e) {
      line = fmt::format("{}: unavailable ({})", Target::from_arch(arch).amd ? "hipRTC" : "NVRTC", e.what());
    }
    text += "\n" + line;
  }
  return text;
}

}  // namespace i8g::cli

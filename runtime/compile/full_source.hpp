// A kernel's source as one file that compiles on its own: the embedded templates it includes
// are inlined, and a comment header says what it is and how it was (or would be) compiled. For
// recompiling or diffing a kernel outside i8gemm, and as the starting point of a source
// override (runtime/serve/source_override.hpp).
#pragma once
#include <string>
#include <vector>

#include "core/source.hpp"

namespace i8g {

// `code` with each `#include "x"` that names an embedded template replaced by that template's
// text, recursively, between begin/end marker comments. A template that is include-once
// (`#pragma once`, or an #ifndef/#define guard) is inlined at its first include only, as the
// preprocessor would read it; `#pragma once` lines are dropped. Other includes stay as they
// are. Throws Error when includes nest deeper than any template set could (a cycle).
std::string inline_templates(const std::string& code);

// What the header of a dump says.
struct DumpHeader {
  std::string arch;      // "sm_90a"
  std::string compiler;  // "NVRTC", "nvrtc 13.0", "hipRTC 5.2 ..."
  std::vector<std::string> options;
  std::string origin;  // where the source came from, one line
};

// The header, then `src.code` (inlined when `inlined`).
std::string full_source(const Source& src, const DumpHeader& h, bool inlined);

}  // namespace i8g

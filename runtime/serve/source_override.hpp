// A debugging override, as DeepGEMM users know it: with I8GEMM_SOURCE_OVERRIDE_DIR set,
// <dir>/<kernel name>.cu replaces that kernel's generated source wherever it is compiled.
// Such a kernel is never served as the generated kernel of the same name: its cache key
// carries a hash of the override source instead of the generator hash, so the two never meet,
// and `inspect` marks it. Every overridden kernel is announced on stderr, once per process.
#pragma once
#include <string>

#include "core/source.hpp"

namespace i8g {

// A kernel's source as it will be compiled.
struct KernelSource {
  Source source;
  std::string override_path;  // the file it came from; empty: generated
  bool overridden() const { return !override_path.empty(); }
};

// `generated`, or the override for its name when the override directory holds one (the
// entry, its name expression, stays the generated one: the override must instantiate it).
// Throws Error (invalid_argument) when that file exists but cannot be read.
KernelSource with_override(Source generated);

// The generator_hash part of a binary key: this build's generator hash for generated source,
// else cache::kOverridePrefix and a sha256 of the override text and this build's templates
// (which the override includes).
std::string source_origin_hash(const KernelSource& ks);

}  // namespace i8g

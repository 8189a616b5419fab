// The device templates, embedded at build time (cmake/embed.cmake): nothing reads the
// source tree at run time.
#pragma once
#include <string>
#include <vector>

namespace i8g {

struct EmbeddedFile {
  const char* path;  // include name, e.g. "simt_dp4a.cuh"
  const char* text;
};

const std::vector<EmbeddedFile>& embedded_templates();
// sha256 over the templates and the generator's sources: changes whenever emitted code may.
const char* generator_hash();

}  // namespace i8g

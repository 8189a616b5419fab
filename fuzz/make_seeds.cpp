// Writes the seeds that need a compiler into DIR/<harness>/: real CUBINs and their ptxas logs
// (NVRTC), a real AMD code object (hipRTC), resource reports as JSON, and kernel names from
// the generator. A compiler that fails (no hipRTC, say) costs its seeds only, with a note.
//   fuzz_make_seeds DIR
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "generator/generator.hpp"
#include "runtime/compile/compiler.hpp"
#include "runtime/report/report.hpp"

namespace fs = std::filesystem;
using namespace i8g;

namespace {

void put(const fs::path& dir, const std::string& name, const void* data, size_t size) {
  fs::create_directories(dir);
  std::ofstream(dir / name, std::ios::binary).write(static_cast<const char*>(data), std::streamsize(size));
}
void put(const fs::path& dir, const std::string& name, const std::string& s) { put(dir, name, s.data(), s.size()); }

void seeds_for(const fs::path& out, const std::string& arch, int* written) {
  const Target t = Target::from_arch(arch);
  GemmProblem p;
  p.n = 64;
  p.k = 64;
  p.bias = true;
  const KernelSpec spec{p, heuristic_default(p, t, 1), t.arch};
  put(out / "fuzz_kernel_name", arch + ".txt", spec.name());
  put(out / "fuzz_kernel_name", arch + "_key.txt", p.key());
  ++*written;
  try {
    Binary b = make_compiler(t)->compile(emit(spec), t);
    ResourceReport r = t.amd ? make_amd_report(b, t, 256, 0) : make_report(b, t, 256, 0);
    r.sass.clear();  // the seed stays small; the parser sees the same fields
    put(out / "fuzz_report", arch + ".json", r.to_json().dump());
    if (t.amd) {
      put(out / "fuzz_amd_code_object", arch + ".co", b.image.data(), b.image.size());
      if (!b.ir.empty()) put(out / "fuzz_llvm_ir", arch + ".ll", b.ir);
    } else {
      put(out / "fuzz_cubin", arch + ".cubin", b.image.data(), b.image.size());
      put(out / "fuzz_ptxas_log", arch + ".log", b.log);
    }
    *written += 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz_make_seeds: %s: no compiled seeds (%s)\n", arch.c_str(), e.what());
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: fuzz_make_seeds DIR\n");
    return 2;
  }
  int written = 0;
  for (const char* arch : {"sm_90a", "sm_80", "gfx90a"}) seeds_for(argv[1], arch, &written);
  std::printf("fuzz_make_seeds: %d seed groups in %s\n", written, argv[1]);
  return 0;
}

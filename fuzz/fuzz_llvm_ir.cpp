// The AMD IR reader on arbitrary bytes, through the entry point the hipRTC worker calls
// (i8g_llvm_ir_run, LLVM 15 linked directly: this process loads no other LLVM), then the
// library's reading of its answer and the audit's rules. The reader answers every input with
// facts or a message (rc != 0); the library may reject the answer only with i8g::Error.
#include <cstdlib>
#include <string>

#include "fuzz/fuzz_support.hpp"
#include "runtime/compile/llvm_ir/llvm_ir.hpp"
#include "runtime/report/amd_ir.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace i8g;
  char* out = nullptr;
  size_t out_size = 0;
  const int rc = i8g_llvm_ir_run('F', reinterpret_cast<const char*>(data), size, &out, &out_size);
  if (!out) std::abort();  // the reader must always answer
  const std::string answer(out, out_size);
  i8g_llvm_ir_free(out);
  if (rc == 0) {
    // The reader's own document always parses; the rules then run on whatever it holds.
    const std::vector<AmdIrKernel> kernels = parse_amd_ir_facts(answer);
    AmdIrExpectations e;
    e.symbol = kernels.empty() ? "k" : kernels[0].name;
    e.config_mfma = 1;
    e.isa_mfma = 1;
    e.lds_bytes = 0;
    (void)judge_amd_ir(kernels, e);
  }
  // The same bytes as an (untrusted) answer of the worker.
  fuzz::rejects_only_with_error([&] { (void)parse_amd_ir_facts(fuzz::text(data, size)); });
  return 0;
}

// Every test program names the helpers the library finds only through explicit configuration
// (issue 14, item 6: never a path baked into the library at build time): this build's hipRTC
// worker and the nvdisasm configure found, as I8GEMM_HIPRTC_WORKER and I8GEMM_NVDISASM, unless
// the environment already names them or they are absent (a test tree carried to another
// machine). Before main, so before the library first reads its options; the CLI processes the
// tests start inherit them.
#include <stdlib.h>
#include <unistd.h>

namespace {

void name_if_present(const char* variable, const char* path) {
  if (path[0] != '\0' && ::access(path, X_OK) == 0) ::setenv(variable, path, 0);
}

const bool named = [] {
  name_if_present("I8GEMM_HIPRTC_WORKER", I8G_TEST_HIPRTC_WORKER);
  name_if_present("I8GEMM_NVDISASM", I8G_TEST_NVDISASM);
  return true;
}();

}  // namespace

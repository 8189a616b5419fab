// i8gemm_hiprtc_worker: the AMD backend's helper process. `i8gemm_hiprtc_worker --serve` reads
// one request (runtime/compile/hiprtc_work.hpp) from stdin to its end, runs it with hipRTC/comgr
// (dlopen'ed here, in no other process), writes the answer to stdout and exits. The library
// starts one per compile, version query or disassembly (runtime/compile/child_process.cpp), so a comgr
// abort or hang ends this process only. Not meant to be run by hand.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

#include "core/error.hpp"
#include "runtime/compile/hiprtc_work.hpp"

namespace {

bool write_all(int fd, const std::string& s) {
  const char* p = s.data();
  size_t n = s.size();
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= size_t(w);
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2 || std::strcmp(argv[1], "--serve") != 0) {
    std::fprintf(stderr,
                 "usage: %s --serve < request\n"
                 "The i8gemm library's hipRTC/comgr helper: it starts this program itself (one run per\n"
                 "AMD compile), finding it next to the library or program, or through $I8GEMM_HIPRTC_WORKER.\n",
                 argv[0]);
    return 2;
  }
  std::string request;
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(0, buf, sizeof buf);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      std::fprintf(stderr, "i8gemm_hiprtc_worker: reading the request: %s\n", std::strerror(errno));
      return 3;
    }
    request.append(buf, size_t(n));
  }
  std::string answer = i8g::hiprtc_work::kAnswerMagic;
  try {
    answer += "O" + i8g::hiprtc_work::serve(request);
  } catch (const i8g::Error& e) {
    answer += "E" + e.where() + std::string(1, '\0') + e.message();
  } catch (const std::exception& e) {
    answer += "E" + std::string(1, '\0') + e.what();
  } catch (...) {
    answer += "E" + std::string(1, '\0') + "unknown exception";
  }
  if (!write_all(1, answer)) return 4;
  return 0;
}

// The child gets fresh pipes for its result and its stderr and touches nothing of the
// parent's after fork but memory it owns; it leaves through _exit (no atexit handlers, no
// flushing of the parent's stdio buffers). Result frame: one status byte ('O' ok, 'E' error),
// then for 'E' the where, a NUL and the message; for 'O' the payload.
#include "runtime/child_process.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>

#include "generator/error.hpp"

namespace i8g {
namespace {

void write_all(int fd, const char* p, size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    p += w;
    n -= size_t(w);
  }
}

[[noreturn]] void child_main(int result_fd, int err_fd, const std::function<std::string()>& work) {
  ::dup2(err_fd, 2);
  std::string frame;
  try {
    frame = "O" + work();
  } catch (const Error& e) {
    frame = "E" + e.where() + std::string(1, '\0') + e.message();
  } catch (const std::exception& e) {
    frame = "E" + std::string(1, '\0') + e.what();
  } catch (...) {
    frame = "E" + std::string(1, '\0') + "unknown exception";
  }
  write_all(result_fd, frame.data(), frame.size());
  ::_exit(0);
}

std::string describe(int status) {
  if (WIFSIGNALED(status))
    return fmt::format("died of signal {} ({})", WTERMSIG(status), strsignal(WTERMSIG(status)));
  if (WIFEXITED(status)) return fmt::format("exited with status {} without a result", WEXITSTATUS(status));
  return "ended abnormally";
}

}  // namespace

std::string run_in_child(const std::string& what, const std::function<std::string()>& work, int timeout_s) {
  int res[2], err[2];
  if (::pipe2(res, O_CLOEXEC) != 0) throw Error(what, std::string("pipe: ") + strerror(errno));
  if (::pipe2(err, O_CLOEXEC) != 0) {
    ::close(res[0]);
    ::close(res[1]);
    throw Error(what, std::string("pipe: ") + strerror(errno));
  }
  const pid_t pid = ::fork();
  if (pid < 0) {
    for (int fd : {res[0], res[1], err[0], err[1]}) ::close(fd);
    throw Error(what, std::string("fork: ") + strerror(errno));
  }
  if (pid == 0) {
    ::close(res[0]);
    ::close(err[0]);
    child_main(res[1], err[1], work);
  }
  ::close(res[1]);
  ::close(err[1]);

  std::string out, errtext;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  bool timed_out = false;
  pollfd fds[2] = {{res[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  int open_fds = 2;
  char buf[65536];
  while (open_fds > 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) {
      timed_out = true;
      break;
    }
    const int r = ::poll(fds, 2, int(std::min<long long>(left, 1000)));
    if (r < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
        continue;
      }
      (i == 0 ? out : errtext).append(buf, size_t(n));
      if (errtext.size() > (1 << 20)) errtext.erase(0, errtext.size() - (1 << 20));
    }
  }
  for (auto& f : fds) if (f.fd >= 0) ::close(f.fd);
  if (timed_out) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  const std::string tail = errtext.size() > 4000 ? errtext.substr(errtext.size() - 4000) : errtext;
  const std::string err_note = tail.empty() ? "" : "; its stderr:\n" + tail;
  if (timed_out) throw Error(what, fmt::format("the child process ran past {} s and was killed{}", timeout_s, err_note));
  if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0) || out.empty())
    throw Error(what, "the child process " + describe(status) + err_note);
  if (out[0] == 'E') {
    const size_t nul = out.find('\0', 1);
    if (nul == std::string::npos) throw Error(what, out.substr(1));
    throw Error(out.substr(1, nul - 1), out.substr(nul + 1));
  }
  return out.substr(1);
}

}  // namespace i8g

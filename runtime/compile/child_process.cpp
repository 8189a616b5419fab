// posix_spawn (glibc: clone(CLONE_VM | CLONE_VFORK) + exec, no code of ours runs in between),
// so it is safe from any thread of a multithreaded process. The helper's stdin is one end of a
// socket pair (send(MSG_NOSIGNAL): a helper that dies early cannot raise SIGPIPE here); its
// stdout and stderr are pipes, all read in one poll loop with the request's writes, so no side
// ever waits on a full buffer. Every descriptor made here is close-on-exec.
#include "runtime/compile/child_process.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>

#include "core/error.hpp"

extern char** environ;

namespace i8g {
namespace {

std::string describe(int status) {
  if (WIFSIGNALED(status))
    return fmt::format("died of signal {} ({})", WTERMSIG(status), strsignal(WTERMSIG(status)));
  if (WIFEXITED(status)) return fmt::format("exited with status {} without a result", WEXITSTATUS(status));
  return "ended abnormally";
}

bool executable(const std::string& path) { return !path.empty() && ::access(path.c_str(), X_OK) == 0; }

std::string dir_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash);
}

std::string real(const std::string& path) {
  char buf[PATH_MAX];
  return ::realpath(path.c_str(), buf) ? std::string(buf) : path;
}

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

}  // namespace

std::string find_helper(const std::string& name, const HelperOverride& chosen) {
  if (!chosen.path.empty()) {
    if (executable(chosen.path)) return chosen.path;
    throw Error(name, fmt::format("{}={} is not an executable file", chosen.variable, chosen.path));
  }
  std::vector<std::string> tried;
  auto candidate = [&](const std::string& dir) -> std::string {
    if (dir.empty()) return {};
    const std::string p = dir + "/" + name;
    if (std::find(tried.begin(), tried.end(), p) != tried.end()) return {};
    tried.push_back(p);
    return executable(p) ? p : std::string();
  };
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&find_helper), &info) && info.dli_fname && std::strchr(info.dli_fname, '/'))
    if (std::string p = candidate(dir_of(real(info.dli_fname))); !p.empty()) return p;
  if (std::string p = candidate(dir_of(real("/proc/self/exe"))); !p.empty()) return p;
  std::string list;
  for (const std::string& t : tried) list += (list.empty() ? "" : ", ") + t;
  throw Error(name, fmt::format("the helper executable {} was not found (looked at: {}); install it next to the "
                                "library or program, or set {} to its path",
                                name, list, chosen.variable.empty() ? "its path" : chosen.variable));
}

std::string run_helper(const std::string& what, const std::string& exe, const std::vector<std::string>& args,
                       const std::string& request, const std::string& magic, int timeout_s) {
  int in[2] = {-1, -1}, out[2] = {-1, -1}, err[2] = {-1, -1};
  auto close_all = [&] {
    for (int* p : {in, out, err}) {
      close_fd(p[0]);
      close_fd(p[1]);
    }
  };
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, in) != 0 || ::pipe2(out, O_CLOEXEC) != 0 ||
      ::pipe2(err, O_CLOEXEC) != 0) {
    const int e = errno;
    close_all();
    throw Error(what, std::string("pipe: ") + strerror(e));
  }

  posix_spawn_file_actions_t fa;
  posix_spawnattr_t attr;
  ::posix_spawn_file_actions_init(&fa);
  ::posix_spawnattr_init(&attr);
  // dup2 onto 0/1/2 clears close-on-exec on those; everything else made here closes at exec.
  ::posix_spawn_file_actions_adddup2(&fa, in[1], 0);
  ::posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  ::posix_spawn_file_actions_adddup2(&fa, err[1], 2);
  // The helper starts with no blocked signals and SIGPIPE at its default, whatever this thread has.
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  ::posix_spawnattr_setsigmask(&attr, &none);
  ::posix_spawnattr_setsigdefault(&attr, &defaults);
  ::posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(exe.c_str()));
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = -1;
  const int spawned = ::posix_spawn(&pid, exe.c_str(), &fa, &attr, argv.data(), environ);
  ::posix_spawn_file_actions_destroy(&fa);
  ::posix_spawnattr_destroy(&attr);
  close_fd(in[1]);
  close_fd(out[1]);
  close_fd(err[1]);
  if (spawned != 0) {
    close_all();
    throw Error(what, fmt::format("could not start the child process {}: {}", exe, strerror(spawned)));
  }
  ::fcntl(in[0], F_SETFL, ::fcntl(in[0], F_GETFL) | O_NONBLOCK);

  std::string answer, errtext;
  size_t sent = 0;
  if (request.empty()) {
    ::shutdown(in[0], SHUT_WR);
    close_fd(in[0]);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  bool timed_out = false;
  char buf[65536];
  while (out[0] >= 0 || err[0] >= 0) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) {
      timed_out = true;
      break;
    }
    pollfd fds[3] = {{in[0], POLLOUT, 0}, {out[0], POLLIN, 0}, {err[0], POLLIN, 0}};  // fd -1: ignored
    const int r = ::poll(fds, 3, int(std::min<long long>(left, 1000)));
    if (r < 0 && errno != EINTR) break;
    if (r <= 0) continue;
    if (in[0] >= 0 && fds[0].revents) {
      const ssize_t n = ::send(in[0], request.data() + sent, std::min<size_t>(request.size() - sent, sizeof buf),
                               MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n > 0) sent += size_t(n);
      // All sent: end of input. A helper that closed its stdin early (EPIPE, reset): its exit
      // status or answer tells what happened.
      if (sent == request.size() || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
        ::shutdown(in[0], SHUT_WR);
        close_fd(in[0]);
      }
    }
    for (int i = 1; i < 3; ++i) {
      int& fd = i == 1 ? out[0] : err[0];
      if (fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t n = ::read(fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        close_fd(fd);
        continue;
      }
      (i == 1 ? answer : errtext).append(buf, size_t(n));
      if (errtext.size() > (1 << 20)) errtext.erase(0, errtext.size() - (1 << 20));
    }
  }
  close_all();
  if (timed_out) ::kill(pid, SIGKILL);
  int status = 0;
  pid_t w;
  while ((w = ::waitpid(pid, &status, 0)) < 0 && errno == EINTR) {
  }
  // ECHILD (the host ignores SIGCHLD, so children are reaped for it): judge by the answer alone.
  const bool exited_ok = w != pid || (WIFEXITED(status) && WEXITSTATUS(status) == 0);
  const std::string tail = errtext.size() > 4000 ? errtext.substr(errtext.size() - 4000) : errtext;
  const std::string err_note = tail.empty() ? "" : "; its stderr:\n" + tail;
  const std::string who = fmt::format("the child process {} (pid {})", exe, pid);
  if (timed_out) throw Error(what, fmt::format("{} ran past {} s and was killed{}", who, timeout_s, err_note));
  if (!exited_ok || answer.empty())
    throw Error(what, fmt::format("{} {}{}", who, w == pid ? describe(status) : "ended without a result", err_note));
  if (answer.compare(0, magic.size(), magic) != 0 || answer.size() == magic.size())
    throw Error(what, fmt::format("{} answered without the expected header '{}' (a helper of another build?){}", who,
                                  magic.substr(0, magic.find('\n')), err_note));
  const char kind = answer[magic.size()];
  std::string body = answer.substr(magic.size() + 1);
  if (kind == 'O') return body;
  if (kind == 'E') {
    const size_t nul = body.find('\0');
    if (nul == std::string::npos) throw Error(what, body);
    throw Error(body.substr(0, nul), body.substr(nul + 1));
  }
  throw Error(what, fmt::format("{} answered with an unknown result kind{}", who, err_note));
}

}  // namespace i8g

// Runs a check as a process that may read a cache but not write it or its directory: the
// deployment of a tuned cache shipped in a container, owned by another user or on a read-only
// mount. Root ignores permissions, so as root the check runs in a child process dropped to
// nobody (uid and gid 65534); otherwise here, with the write bits removed.
#pragma once
#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <exception>
#include <functional>
#include <string>

namespace i8g::testsupport {

// `dir` (which holds `file`) and `file` lose their write bits for the duration; `check` returns
// "" when it passed, else what went wrong (so it can cross the process boundary).
inline std::string as_read_only_user(const std::string& dir, const std::string& file,
                                     const std::function<std::string()>& check) {
  if (chmod(file.c_str(), 0444) != 0 || chmod(dir.c_str(), 0555) != 0) return "chmod failed";
  std::string result;
  if (geteuid() != 0) {
    try {
      result = check();
    } catch (const std::exception& e) {
      result = std::string("threw: ") + e.what();
    }
  } else {
    int fds[2];
    if (pipe(fds) != 0) return "pipe failed";
    const pid_t pid = fork();
    if (pid == 0) {
      close(fds[0]);
      std::string msg;
      if (setgroups(0, nullptr) != 0 || setgid(65534) != 0 || setuid(65534) != 0) {
        msg = "could not become nobody";
      } else {
        try {
          msg = check();
        } catch (const std::exception& e) {
          msg = std::string("threw: ") + e.what();
        }
      }
      if (write(fds[1], msg.data(), msg.size()) < 0) _exit(2);
      _exit(0);
    }
    close(fds[1]);
    char buf[512];
    for (ssize_t got; (got = read(fds[0], buf, sizeof buf)) > 0;) result.append(buf, size_t(got));
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) result += " (the reader process died)";
  }
  chmod(dir.c_str(), 0700);
  chmod(file.c_str(), 0644);
  return result;
}

}  // namespace i8g::testsupport

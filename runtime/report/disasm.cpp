// nvdisasm runner. posix_spawn with an argv (no shell, so no quoting of paths); stdout and
// stderr go to temp files, which avoids pipe deadlocks without a poll loop.
#include "runtime/report/disasm.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "core/options.hpp"

#ifndef I8G_NVDISASM_DEFAULT
#define I8G_NVDISASM_DEFAULT ""
#endif

extern char** environ;

namespace i8g {
namespace {

bool executable_file(const std::string& path) {
  struct stat st;
  return !path.empty() && stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
}

// A temp file that removes itself.
class TempFile {
 public:
  explicit TempFile(const char* tag) {
    const std::string& dir = options().tmpdir;
    std::string pattern = (dir.empty() ? std::string("/tmp") : dir) + "/i8g_" + tag + "_XXXXXX";
    std::vector<char> buf(pattern.begin(), pattern.end());
    buf.push_back('\0');
    int fd = mkstemp(buf.data());
    if (fd >= 0) {
      close(fd);
      path_ = buf.data();
    }
  }
  ~TempFile() {
    if (!path_.empty()) unlink(path_.c_str());
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

std::string find_nvdisasm(std::string* note) {
  std::string why;
  if (const std::string& chosen = options().nvdisasm; !chosen.empty()) {
    if (executable_file(chosen)) return chosen;
    if (note) *note = "nvdisasm not found: I8GEMM_NVDISASM=" + chosen + " is not an executable file";
    return {};
  }
  if (const std::string& path = options().path; !path.empty()) {
    std::stringstream ss(path);
    std::string dir;
    while (std::getline(ss, dir, ':'))
      if (!dir.empty() && executable_file(dir + "/nvdisasm")) return dir + "/nvdisasm";
  }
  if (executable_file("/usr/local/cuda/bin/nvdisasm")) return "/usr/local/cuda/bin/nvdisasm";
  if (note) *note = "nvdisasm not found (I8GEMM_NVDISASM, PATH, /usr/local/cuda/bin)";
  return {};
}

Disassembly disassemble(const std::vector<uint8_t>& image, int symbol_index) {
  Disassembly d;
  d.tool = find_nvdisasm(&d.note);
  if (d.tool.empty()) return d;
  TempFile cubin("cubin"), out("sass"), err("err");
  if (cubin.path().empty() || out.path().empty() || err.path().empty()) {
    d.note = std::string("cannot create a temp file: ") + std::strerror(errno);
    return d;
  }
  {
    std::ofstream f(cubin.path(), std::ios::binary);
    f.write(reinterpret_cast<const char*>(image.data()), static_cast<std::streamsize>(image.size()));
    if (!f) {
      d.note = "cannot write " + cubin.path();
      return d;
    }
  }
  std::vector<std::string> args = {d.tool, "-c"};
  if (symbol_index >= 0) {
    args.push_back("-fun");
    args.push_back(std::to_string(symbol_index));
  }
  args.push_back(cubin.path());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(&a[0]);
  argv.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out.path().c_str(), O_WRONLY | O_TRUNC, 0);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err.path().c_str(), O_WRONLY | O_TRUNC, 0);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, d.tool.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    d.note = "cannot run " + d.tool + ": " + std::strerror(rc);
    return d;
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  d.sass = slurp(out.path());
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::string e = slurp(err.path());
    d.note = d.tool + " failed (" +
             (WIFEXITED(status) ? "exit " + std::to_string(WEXITSTATUS(status))
                                : "signal " + std::to_string(WIFSIGNALED(status) ? WTERMSIG(status) : 0)) +
             "): " + e.substr(0, 2000);
    d.sass.clear();
    return d;
  }
  d.ok = true;
  return d;
}

std::map<std::string, int> instruction_mix(const std::string& sass) {
  // Instruction lines look like "        /*0200*/   @!P0 IDP.4A.S8.S8 R11, R0, R8, R11 ;".
  std::map<std::string, int> mix;
  std::stringstream ss(sass);
  std::string line;
  while (std::getline(ss, line)) {
    size_t a = line.find("/*");
    if (a == std::string::npos || line.find_first_not_of(" \t") != a) continue;
    size_t b = line.find("*/", a + 2);
    if (b == std::string::npos || b == a + 2) continue;
    bool hex = true;
    for (size_t i = a + 2; i < b; ++i) hex = hex && std::isxdigit(static_cast<unsigned char>(line[i]));
    if (!hex) continue;
    std::stringstream toks(line.substr(b + 2));
    std::string op;
    toks >> op;
    if (!op.empty() && op[0] == '@') toks >> op;  // predicate guard
    op = op.substr(0, op.find_first_of(".;"));
    if (op.empty() || !std::isupper(static_cast<unsigned char>(op[0]))) continue;
    ++mix[op];
    ++mix["total"];
    if (op.size() >= 3 && op.compare(op.size() - 3, 3, "MMA") == 0) ++mix["tensor_core"];
  }
  return mix;
}

}  // namespace i8g

// Starting and supervising child processes (spawn.hpp).
#include "compas/base/spawn.hpp"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

namespace compas::base {
namespace {

// "" when `path` can be executed, else why not.
std::string why_not_runnable(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return "not found";
  if (S_ISDIR(st.st_mode)) return "is a directory";
  if (!S_ISREG(st.st_mode) || ::access(path.c_str(), X_OK) != 0) return "is not executable";
  return "";
}

}  // namespace

ProgramPath find_program(const std::string& name) {
  if (name.find('/') != std::string::npos) {
    const std::string why = why_not_runnable(name);
    return why.empty() ? ProgramPath{name, ""} : ProgramPath{"", why};
  }
  const char* env = std::getenv("PATH");
  const std::string path = env != nullptr ? env : "/usr/local/bin:/usr/bin:/bin";
  std::string first_problem;
  for (std::size_t from = 0;;) {
    const std::size_t colon = path.find(':', from);
    const std::string dir =
        path.substr(from, colon == std::string::npos ? std::string::npos : colon - from);
    const std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + name;
    const std::string why = why_not_runnable(candidate);
    if (why.empty()) return {candidate, ""};
    if (why != "not found" && first_problem.empty()) first_problem = "'" + candidate + "' " + why;
    if (colon == std::string::npos) break;
    from = colon + 1;
  }
  return {"", first_problem.empty() ? std::string("not found") : first_problem};
}

bool enter_child(const ChildSetup& s) {
  ::setpgid(0, s.pgid);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != s.parent) return false;
  if (s.stdin_fd >= 0) ::dup2(s.stdin_fd, STDIN_FILENO);
  if (s.stdout_fd >= 0) ::dup2(s.stdout_fd, STDOUT_FILENO);
  if (s.stderr_fd >= 0) ::dup2(s.stderr_fd, STDERR_FILENO);
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig)
    if (sig != SIGKILL && sig != SIGSTOP) ::sigaction(sig, &dfl, nullptr);
  ::sigprocmask(SIG_SETMASK, &s.mask, nullptr);
  return true;
}

int signalfd_for(std::initializer_list<int> signals, sigset_t* old) {
  sigset_t set;
  sigemptyset(&set);
  for (int s : signals) sigaddset(&set, s);
  ::sigprocmask(SIG_BLOCK, &set, old);
  const int fd = ::signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    ::sigprocmask(SIG_SETMASK, old, nullptr);
    errno = err;
  }
  return fd;
}

bool signal_group(pid_t leader, int sig) {
  const bool group = ::kill(-leader, sig) == 0;
  if (group && ::getpgid(leader) == leader) return true;
  return ::kill(leader, sig) == 0 || group;
}

}  // namespace compas::base

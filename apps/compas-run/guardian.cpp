#include "guardian.hpp"

#include <fcntl.h>
#include <fmt/core.h>
#include <fmt/ranges.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common.hpp"
#include "compas/base/children.hpp"

namespace compas::run {

namespace {

constexpr const char* kUnguarded =
    ": if compas-run is killed, what the ranks detach from it may outlive it";

// The guardian, after the fork: waits for compas-run's word or its end, then ends the job if
// compas-run is gone. Writes with write(2): compas-run's output queues are not its own.
[[noreturn]] void guard(int fd, const std::string& entry) {
  ::setpgid(0, 0);
  for (int s : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE}) ::signal(s, SIG_IGN);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::prctl(PR_SET_NAME, "compas-guardian");
  const int devnull = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  if (devnull >= 0) {
    ::dup2(devnull, STDIN_FILENO);  // stderr alone is kept, to name what it ends
    ::dup2(devnull, STDOUT_FILENO);
  }
  if (fd > 3) ::close_range(3, static_cast<unsigned>(fd) - 1, 0);
  ::close_range(static_cast<unsigned>(fd) + 1, ~0U, 0);
  char word = 0;
  ssize_t got;
  while ((got = ::read(fd, &word, 1)) < 0 && errno == EINTR) {
  }
  if (got == 1) ::_exit(0);  // dismissed
  try {
    const auto ended = base::end_processes_carrying(
        entry, std::chrono::duration_cast<std::chrono::milliseconds>(kGrace));
    if (!ended.empty()) {
      const std::string line = fmt::format(
          "compas-run: guardian: compas-run ended before its job; ended {} of the job: {}\n",
          plural(static_cast<int>(ended.size()), "process", "processes"), fmt::join(ended, ", "));
      [[maybe_unused]] auto n = ::write(STDERR_FILENO, line.data(), line.size());
    }
  } catch (...) {
    ::_exit(1);
  }
  ::_exit(0);
}

}  // namespace

void Guardian::start(const std::string& entry) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    say(fmt::format("cannot start the job's guardian (pipe: {}){}", std::strerror(errno),
                    kUnguarded));
    return;
  }
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[1]);
    guard(fds[0], entry);
  }
  ::close(fds[0]);
  if (pid < 0) {
    say(fmt::format("cannot start the job's guardian (fork: {}){}", std::strerror(errno),
                    kUnguarded));
    ::close(fds[1]);
    return;
  }
  pid_ = pid;
  fd_ = fds[1];
}

void Guardian::stop(bool dismissed) {
  if (pid_ < 0) return;
  if (dismissed) {
    const char word = 'd';
    [[maybe_unused]] auto n = ::write(fd_, &word, 1);  // EPIPE if it has died: SIGPIPE is ignored
  }
  ::close(fd_);
  while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
  fd_ = -1;
}

void Guardian::dismiss() {
  stop(true);
}

Guardian::~Guardian() {
  stop(false);
}

}  // namespace compas::run

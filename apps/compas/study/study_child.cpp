#include "study_child.hpp"

#include <fcntl.h>
#include <fmt/core.h>
#include <fmt/ranges.h>
#include <poll.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "compas/base/children.hpp"
#include "compas/base/spawn.hpp"
#include "compas/base/stop_schedule.hpp"

extern char** environ;

namespace compas::app {

namespace {

using ChildClock = std::chrono::steady_clock;

// A descriptor closed when it goes out of scope.
struct Fd {
  explicit Fd(int f = -1) : fd(f) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }
  void reset() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
  int fd;
};

// Everything the child uses between fork and exec, made before the fork.
struct ExecPlan {
  std::string path;
  std::vector<char*> argv;
  int error_fd = -1;
  base::ChildSetup setup;  // its own group, the log as stdout and stderr, no signal blocked
};

// The child, between fork and exec: async-signal-safe calls only. It dies with the study even
// when the study is killed without a chance to stop its run, and starts with a clean signal
// state, so that the SIGINT and SIGTERM the study sends reach it.
[[noreturn]] void exec_child(const ExecPlan& p) {
  if (!base::enter_child(p.setup)) ::_exit(127);  // the study died before the fork returned
  ::execve(p.path.c_str(), p.argv.data(), environ);
  const int err = errno;
  [[maybe_unused]] const ssize_t n = ::write(p.error_fd, &err, sizeof err);
  ::_exit(127);
}

void note_in_log(int log_fd, const std::string& line) {
  const std::string text = "compas study: " + line + "\n";
  [[maybe_unused]] const ssize_t n = ::write(log_fd, text.data(), text.size());
}

// Signals the run's process group; the run itself only when it left the group (a launcher that
// counts requests, as compas-run does, must get one signal per request).
void signal_run(pid_t pid, int sig) {
  base::signal_group(pid, sig);
}

// Whether the run has ended. It is left a zombie (WNOWAIT): its pid, which is also its group's
// id, cannot be reused while the study may still signal the group.
bool has_ended(pid_t pid) {
  siginfo_t info{};
  if (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0)
    return errno != EINTR;
  return info.si_pid == pid;
}

void reap(pid_t pid, ChildOutcome& out) {
  int status = 0;
  pid_t got;
  while ((got = ::waitpid(pid, &status, 0)) < 0 && errno == EINTR) {
  }
  if (got != pid) return;
  if (WIFEXITED(status)) out.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) out.signal = WTERMSIG(status);
}

// The errno of a failed exec, or 0 once the exec succeeded (the pipe closed on exec).
int exec_error(int read_fd) {
  int err = 0;
  ssize_t n;
  while ((n = ::read(read_fd, &err, sizeof err)) < 0 && errno == EINTR) {
  }
  return n == static_cast<ssize_t>(sizeof err) ? err : 0;
}

// Forks and execs argv. Returns the child's pid, or -1 with out.error set.
pid_t start_child(const std::vector<std::string>& argv, const std::filesystem::path& log,
                  ChildOutcome& out) {
  // Made here, never opened through a link or onto a file that is there already.
  const Fd log_fd(::open(log.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
  if (log_fd.fd < 0)
    throw std::runtime_error("cannot write " + log.string() + ": " + std::strerror(errno));
  const Fd null_fd(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  std::vector<std::string> args = argv;
  ExecPlan plan;
  const base::ProgramPath found = base::find_program(args.at(0));
  plan.path = found.path;
  if (plan.path.empty()) {
    out.error = "cannot start '" + args[0] + "': " +
                (found.problem == "not found" ? std::string("not found in PATH") : found.problem);
    note_in_log(log_fd.fd, out.error);
    return -1;
  }
  for (auto& s : args) plan.argv.push_back(s.data());
  plan.argv.push_back(nullptr);
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0)
    throw std::runtime_error(std::string("cannot create a pipe: ") + std::strerror(errno));
  Fd error_read(pipe_fds[0]), error_write(pipe_fds[1]);
  plan.error_fd = error_write.fd;
  plan.setup.parent = ::getpid();
  plan.setup.stdin_fd = null_fd.fd;
  plan.setup.stdout_fd = log_fd.fd;
  plan.setup.stderr_fd = log_fd.fd;
  sigemptyset(&plan.setup.mask);
  const pid_t pid = ::fork();
  if (pid == 0) exec_child(plan);
  if (pid < 0) {
    out.error = "cannot start '" + args[0] + "': fork: " + std::strerror(errno);
    note_in_log(log_fd.fd, out.error);
    return -1;
  }
  ::setpgid(pid, pid);  // also done by the child: the group exists whichever runs first
  error_write.reset();
  if (const int err = exec_error(error_read.fd)) {
    reap(pid, out);
    out.exit_code = -1;
    out.error = "cannot start '" + args[0] + "': " + std::strerror(err);
    note_in_log(log_fd.fd, out.error);
    return -1;
  }
  out.started = true;
  return pid;
}

// When a run gets SIGTERM (its timeout) and SIGKILL (the grace after it, or a second stop request).
class RunClock {
 public:
  explicit RunClock(double timeout_s) { schedule_.set_time_limit(ChildClock::now(), timeout_s); }

  void enforce(pid_t pid, ChildOutcome& out) {
    const auto now = ChildClock::now();
    if (schedule_.deadline_passed(now)) {
      out.timed_out = true;
      signal_run(pid, SIGTERM);
      schedule_.stop(now);
    }
    if (schedule_.kill_due(now)) signal_run(pid, SIGKILL);
  }

  // The first request lets the run stop on its own (its time limit still holds); one more ends it
  // at once.
  void on_stop_request(int number, pid_t pid, ChildOutcome& out) {
    out.interrupted = true;
    if (number == 1)
      signal_run(pid, SIGINT);
    else if (schedule_.kill_now())
      signal_run(pid, SIGKILL);
  }

  // Milliseconds until the next thing to do, at most 1000 (1 at least: no busy loop).
  int wait_ms() const {
    const auto now = ChildClock::now();
    const auto next = std::min(schedule_.next(), now + std::chrono::seconds(1));
    const auto ms = std::chrono::ceil<std::chrono::milliseconds>(next - now).count();
    return static_cast<int>(std::clamp<long long>(ms, 1, 1000));
  }

 private:
  base::StopSchedule schedule_{
      std::chrono::milliseconds(static_cast<long>(ChildSupervisor::kGraceSeconds * 1000))};
};

}  // namespace

int ChildOutcome::status() const {
  if (!started) return 127;
  return signal ? 128 + signal : exit_code;
}

std::string ChildOutcome::reason() const {
  if (!started) return error;
  if (timed_out) return fmt::format("timed out after {:g} s", timeout_s);
  if (signal) return fmt::format("killed by signal {}", signal);
  return fmt::format("exit {}", exit_code);
}

ChildSupervisor::ChildSupervisor() : was_subreaper_(base::is_subreaper()) {
  // What a run leaves behind when its parent ends (a process that left the run's group: a daemon,
  // `setsid cmd &`) becomes the study's child instead of init's, and is ended with the run.
  base::set_subreaper(true);
  fd_ = base::signalfd_for({SIGINT, SIGTERM, SIGCHLD}, &old_mask_);
  if (fd_ < 0)
    throw std::runtime_error(std::string("cannot create a signalfd: ") + std::strerror(errno));
  // Blocked signals whose action is "ignore" are discarded instead of held for the signalfd, and
  // an ignored SIGCHLD reaps children before they can be waited for.
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  ::sigaction(SIGINT, &dfl, &old_int_);
  ::sigaction(SIGTERM, &dfl, &old_term_);
  ::sigaction(SIGCHLD, &dfl, &old_chld_);
}

ChildSupervisor::~ChildSupervisor() {
  stop_requests();
  ::close(fd_);
  ::sigaction(SIGINT, &old_int_, nullptr);
  ::sigaction(SIGTERM, &old_term_, nullptr);
  ::sigaction(SIGCHLD, &old_chld_, nullptr);
  ::sigprocmask(SIG_SETMASK, &old_mask_, nullptr);
  base::set_subreaper(was_subreaper_);
}

int ChildSupervisor::stop_requests() {
  read_stop_requests(0);
  return stops_;
}

int ChildSupervisor::read_stop_requests(int ms) {
  pollfd p{fd_, POLLIN, 0};
  if (ms > 0) ::poll(&p, 1, ms);
  int n = 0;
  signalfd_siginfo si;
  while (::read(fd_, &si, sizeof si) == static_cast<ssize_t>(sizeof si))
    if (si.ssi_signo != SIGCHLD) {  // a child's end is looked at by the caller
      ++n;
      if (first_stop_signal_ == 0) first_stop_signal_ = static_cast<int>(si.ssi_signo);
    }
  stops_ += n;
  return n;
}

ChildOutcome ChildSupervisor::run(const std::vector<std::string>& argv,
                                  const std::filesystem::path& log, double timeout_s) {
  const auto t0 = ChildClock::now();
  ChildOutcome out;
  out.timeout_s = timeout_s;
  const pid_t pid = start_child(argv, log, out);
  if (pid > 0) {
    const auto ended = supervise(pid, out);
    if (!ended.empty()) {
      const Fd log_fd(::open(log.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC));
      if (log_fd.fd >= 0)
        note_in_log(log_fd.fd,
                    fmt::format("ended {} process{} the run left running: {}", ended.size(),
                                ended.size() == 1 ? "" : "es", fmt::join(ended, ", ")));
    }
  }
  out.seconds = std::chrono::duration<double>(ChildClock::now() - t0).count();
  return out;
}

std::vector<std::string> ChildSupervisor::supervise(pid_t pid, ChildOutcome& out) {
  RunClock clock(out.timeout_s);
  while (!has_ended(pid)) {
    clock.enforce(pid, out);
    const int before = stops_;
    const int n = read_stop_requests(clock.wait_ms());
    for (int number = before + 1; number <= before + n; ++number)
      clock.on_stop_request(number, pid, out);
  }
  // Nothing the run started may outlive it: in its group, and wherever else it went.
  signal_run(pid, SIGKILL);
  const auto ended = base::end_other_children(
      {pid}, std::chrono::milliseconds(static_cast<long>(kGraceSeconds * 1000)));
  reap(pid, out);
  return ended;
}

}  // namespace compas::app

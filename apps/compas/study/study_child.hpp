// compas study's child runs: each one started in its own process group with its output in a log,
// bound to die with the study (PR_SET_PDEATHSIG), stopped at its timeout (SIGTERM to the group,
// SIGKILL after a grace), and stopped on request (SIGINT/SIGTERM to the study: the first is
// forwarded to the run's group as SIGINT, a second kills the group at once). The study is the
// subreaper of its runs: what a run leaves behind outside its group (`setsid cmd &`) becomes the
// study's child, and gets SIGTERM, then SIGKILL after the grace, once the run has ended (said
// at the end of the run's log).
#pragma once

#include <signal.h>

#include <filesystem>
#include <string>
#include <vector>

namespace compas::app {

// How a child run ended.
struct ChildOutcome {
  bool started = false;      // false: it could not be started, `error` says why
  int exit_code = -1;        // its exit code when it exited, else -1
  int signal = 0;            // the signal that ended it, else 0
  bool timed_out = false;    // it was stopped at its timeout
  bool interrupted = false;  // a stop request came while it ran
  double seconds = 0;
  double timeout_s = 0;
  std::string error;

  bool ok() const { return started && !timed_out && signal == 0 && exit_code == 0; }
  // The exit status as a shell shows it: the code, or 128 + the signal; 127 when never started.
  int status() const;
  // "exit 3", "killed by signal 9", "timed out after 30 s", "cannot start 'x': ...".
  std::string reason() const;
};

// Runs the study's children, one at a time. While it exists, SIGINT, SIGTERM and SIGCHLD are
// blocked and read from a signalfd: a stop request that comes between two runs, or between a
// fork and the wait, waits in the descriptor until it is read instead of being lost.
class ChildSupervisor {
 public:
  ChildSupervisor();
  ~ChildSupervisor();
  ChildSupervisor(const ChildSupervisor&) = delete;
  ChildSupervisor& operator=(const ChildSupervisor&) = delete;

  // Runs argv (argv[0] looked up in PATH) to its end, stdout and stderr to `log` (created: a
  // file or link already there is refused), stdin from /dev/null. timeout_s <= 0: no timeout.
  // Throws std::runtime_error when `log` cannot be made.
  ChildOutcome run(const std::vector<std::string>& argv, const std::filesystem::path& log,
                   double timeout_s);

  // SIGINT/SIGTERM received so far, counting those not read yet.
  int stop_requests();
  // The first stop request's signal (SIGINT or SIGTERM; 0: none yet): the study exits 128 + it,
  // as a shell reports a command that signal ended.
  int first_stop_signal() const { return first_stop_signal_; }

  // Time a run gets after SIGTERM at its timeout before its group gets SIGKILL.
  static constexpr double kGraceSeconds = 3;

 private:
  // Returns what the run left running and was ended with it, "PID (NAME)" each.
  std::vector<std::string> supervise(pid_t pid, ChildOutcome& out);
  // Waits up to `ms` for a signal and returns how many stop requests were read.
  int read_stop_requests(int ms);

  int fd_ = -1;
  int stops_ = 0;
  int first_stop_signal_ = 0;
  bool was_subreaper_ = false;
  sigset_t old_mask_{};
  struct sigaction old_int_ {
  }, old_term_{}, old_chld_{};
};

}  // namespace compas::app

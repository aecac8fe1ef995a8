// A child process for tests: its own process group, stdout and stderr captured (Proc), and the
// small text helpers the process tests share. Built once into compas_test_proc.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <utility>
#include <vector>

namespace compas::testing {

using Clock = std::chrono::steady_clock;
using Env = std::vector<std::pair<std::string, std::string>>;

double since(Clock::time_point t);
bool contains(const std::string& text, const std::string& part);
int count_of(const std::string& text, const std::string& part);
std::vector<std::string> lines_of(const std::string& text);
// The CPUs this process may run on.
int cpus_available();

// A child process in its own process group, stdout and stderr captured, stdin /dev/null. Its
// environment is ours without anything that would select or configure a bootstrap (COMPAS_*,
// OMPI_*, PMI_*, PMIX_*, SLURM_*), plus `env` (a later value of a variable replaces an earlier
// one). The destructor kills the group of a process still running.
class Proc {
 public:
  // `pass_fd` >= 0 is handed to the child as descriptor `pass_as`.
  Proc(const std::vector<std::string>& args, const Env& env, int pass_fd = -1, int pass_as = -1);
  Proc(const Proc&) = delete;
  Proc& operator=(const Proc&) = delete;
  ~Proc();

  pid_t pid() const { return pid_; }
  void signal(int sig) const;

  // Waits up to `seconds` for the process to exit (and its output to end). True when it did.
  bool wait(double seconds);
  // Waits up to `seconds` until stdout contains `part` `times` times.
  bool wait_for_output(const std::string& part, int times, double seconds);
  std::string describe() const;

  int exit_code = -1;  // -1 unless it exited normally
  int term_signal = 0;
  double seconds = 0;  // from start to exit
  std::string out, err;

 private:
  void pump(Clock::time_point deadline);

  Clock::time_point start_;
  pid_t pid_ = -1;
  int out_fd_ = -1, err_fd_ = -1;
  bool exited_ = false;
};

}  // namespace compas::testing

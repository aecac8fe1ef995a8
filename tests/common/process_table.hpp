// The process table, for tests of jobs: processes by a marker in their command line or
// environment, their start times and children, and the processes of a launcher's job (JobPids).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "process.hpp"

namespace compas::testing {

// Processes (not zombies) whose command line contains `marker`; with `file` "environ", whose
// environment does (a variable every process of a job inherits marks it whatever it runs).
std::vector<pid_t> processes_with(const std::string& marker, const std::string& file = "cmdline");

bool none_left(const std::string& marker, double seconds, const std::string& file = "cmdline");

std::string unique_marker();

// The contents of a /proc file, by plain read(2) (see processes_with); empty when unreadable.
std::string read_proc_file(const std::string& path);

// When process `pid` started (field 22 of /proc/PID/stat, clock ticks since boot), 0 when there
// is none: with its pid, it names one process and never a later one given the same pid.
unsigned long long start_time_of(pid_t pid);

// The children of process `pid`, every thread's (/proc/PID/task/TID/children).
std::vector<pid_t> children_of(pid_t pid);

// The processes of a job started by a launcher (a child of this process): the launcher and every
// descendant of it seen while it runs, sampled every 2 ms by a thread until the launcher is gone
// (reaped) or stop(). Long after a rank died its pid still names what it made: the SysV
// segments it created carry it (cpid). A process that lives less than the sampling period may be
// missed; such a process has not got as far as making shared memory (UCX's setup takes longer).
class JobPids {
 public:
  explicit JobPids(pid_t launcher);
  JobPids(const JobPids&) = delete;
  JobPids& operator=(const JobPids&) = delete;
  ~JobPids() { stop(); }

  void stop();
  // Every process of the job seen so far (all of them once the launcher has been waited for).
  std::set<pid_t> pids() const;
  // Waits up to `seconds` until `n` processes (the launcher counts) have been seen.
  bool wait_for(std::size_t n, double seconds) const;

 private:
  void sample();

  pid_t launcher_;
  unsigned long long started_;
  std::atomic<bool> done_{false};
  mutable std::mutex mu_;
  std::set<pid_t> pids_;
  std::thread thread_;
};

// The pids of processes a test started itself (the ranks of a ManualJob).
std::set<pid_t> pids_of(const std::vector<std::unique_ptr<Proc>>& procs);

}  // namespace compas::testing

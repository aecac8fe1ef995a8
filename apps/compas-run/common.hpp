// What compas-run's files share: the clock, its limits and waits, and how it speaks (one line on
// stderr, "compas-run: ...").
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

namespace compas::run {

using Clock = std::chrono::steady_clock;

constexpr int kMaxProcesses = 4096;
constexpr int kMaxThreads = 4096;
// Time the processes get to exit after SIGTERM before SIGKILL.
constexpr auto kGrace = std::chrono::seconds(2);
// How long compas-run collects failures before naming the one that ended the job.
constexpr auto kSettle = std::chrono::milliseconds(100);
// How long output pipes are still read once every rank has exited.
constexpr auto kDrainAfterExit = std::chrono::seconds(1);
constexpr std::size_t kMaxLineBytes = 64 * 1024;

// "compas-run: LINE" on stderr, queued: written as far as the reader takes it without blocking
// (the rest later, from the supervision loop; see Outlet).
void say(const std::string& line);
// "signal 15 (Terminated)"
std::string signal_text(int sig);
// "1 process", "3 processes"
std::string plural(int n, const char* one, const char* many);

// What the command line asks for.
struct Options {
  int processes = 0;
  int threads = 1;
  std::string bind;
  bool tag_output = false;
  double timeout_s = 0;
  bool oversubscribe = false;
  std::string program;  // as given
  std::string path;     // as found
  std::vector<std::string> args;
};

// Starts the job's processes, supervises them to the end and returns compas-run's exit status.
int run_job(const Options& o);

}  // namespace compas::run

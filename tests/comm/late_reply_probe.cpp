// Every rank's program in the late-reply tests (test_late_reply.cpp): rank 1 stops itself; rank 0
// starts an operation on rank 1's window that needs rank 1 to answer (UCX over tcp), lets it time
// out, scribbles a sentinel over the get's destination, resumes rank 1 and progresses a while, so
// that a reply UCX still delivered after the timeout would land. Prints what it saw.
//   late_reply_probe get|fetch_add|put_signal
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "compas/comm/comm.hpp"

using namespace compas::comm;

namespace {

constexpr std::size_t kBytes = std::size_t{1} << 20;
constexpr unsigned char kSentinel = 0xEE;

char process_state(long pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(in, line);
  const auto close = line.rfind(')');
  return close == std::string::npos || close + 2 >= line.size() ? '?' : line[close + 2];
}

bool wait_until_stopped(long pid) {
  for (int i = 0; i < 500; ++i) {
    if (process_state(pid) == 'T') return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

// Starts the operation `mode` towards rank 1 and waits for it, which must time out.
void start_and_time_out(WindowBytes& w, const std::string& mode, std::vector<unsigned char>& dst) {
  if (mode == "get") {
    w.get(1, 0, dst.data(), dst.size());
  } else if (mode == "fetch_add") {
    (void)w.fetch_add(1, 0, 5, 8);
  } else {
    w.put_signal(1, 0, dst.data(), dst.size(), 0, 1);
  }
}

int rank0(Comm& comm, WindowBytes& w, const std::string& mode, long peer) {
  if (!wait_until_stopped(peer)) {
    std::printf("rank 1 never stopped\n");
    return 3;
  }
  std::vector<unsigned char> dst(kBytes, 0);
  try {
    start_and_time_out(w, mode, dst);
    std::printf("completed while rank 1 was stopped\n");
    return 3;
  } catch (const CommError& e) {
    std::printf("timed out: %s\n", e.what());
  }
  std::memset(dst.data(), kSentinel, dst.size());
  ::kill(static_cast<pid_t>(peer), SIGCONT);
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (std::chrono::steady_clock::now() < until) {
    try {
      comm.progress();
    } catch (const CommError&) {
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  std::size_t changed = 0;
  for (unsigned char c : dst) changed += c != kSentinel;
  std::printf("%s after the timeout: %zu bytes of the destination changed\n",
              changed ? "late delivery" : "no late delivery", changed);
  std::fflush(stdout);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "get";
  auto boot = Bootstrap::from_environment();
  Comm comm(*boot);
  WindowBytes w(comm, kBytes, 4);
  std::memset(w.local(), 0x11, kBytes);
  const auto pids = boot->allgather(std::to_string(::getpid()));
  comm.connect(1 - comm.rank());
  boot->barrier();
  if (comm.rank() == 1) {
    ::raise(SIGSTOP);
    // Resumed: answer whatever is still queued, then leave without the collective teardown.
    std::this_thread::sleep_for(std::chrono::seconds(3));
    std::fflush(stdout);
    ::_exit(0);
  }
  const int rc = rank0(comm, w, mode, std::stol(pids[1]));
  std::fflush(stdout);
  ::_exit(rc);
}

// What the launch tests share: bootstrap_probe jobs started by compas-run or by hand, and how
// the tests watch them.
#pragma once

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "../common/proc.hpp"
#include "wire.hpp"
#include "compas/threads/placement.hpp"

#ifndef COMPAS_RUN_EXE
#error "COMPAS_RUN_EXE must name the compas-run executable"
#endif
#ifndef BOOTSTRAP_PROBE_EXE
#error "BOOTSTRAP_PROBE_EXE must name the bootstrap_probe executable"
#endif

namespace launch_test {

using namespace compas::testing;
namespace wire = compas::comm::wire;

inline const std::string kRun = COMPAS_RUN_EXE;
inline const std::string kProbe = BOOTSTRAP_PROBE_EXE;

// A job of bootstrap_probe ranks started by hand.
class ProbeJob : public ManualJob {
 public:
  explicit ProbeJob(int size, Env extra = {}, bool own_port = false)
      : ManualJob(kProbe, size, std::move(extra), own_port) {}
};

inline std::unique_ptr<Proc> compas_run(const std::vector<std::string>& args, const Env& env = {}) {
  std::vector<std::string> argv = {kRun};
  argv.insert(argv.end(), args.begin(), args.end());
  return std::make_unique<Proc>(argv, env);
}

// Runs compas-run to the end (or fails the test after `seconds`).
inline std::unique_ptr<Proc> run_to_end(const std::vector<std::string>& args, const Env& env = {},
                                        double seconds = 30) {
  auto p = compas_run(args, env);
  EXPECT_TRUE(p->wait(seconds)) << "compas-run did not finish in " << seconds << " s\n"
                                << p->describe();
  return p;
}

// A compas-run job run to the end (as run_to_end) with its processes recorded while it runs, and
// the shared memory there was before it: what the job left behind can then be told
// (shm.leftovers(pids)), even of ranks long dead.
struct WatchedRun {
  ShmSnapshot shm;
  std::unique_ptr<Proc> p;
  std::set<pid_t> pids;
};

inline WatchedRun run_watched(const std::vector<std::string>& args, const Env& env = {},
                              double seconds = 30) {
  WatchedRun w;
  w.p = compas_run(args, env);
  JobPids job(w.p->pid());
  EXPECT_TRUE(w.p->wait(seconds)) << "compas-run did not finish in " << seconds << " s\n"
                                  << w.p->describe();
  job.stop();
  w.pids = job.pids();
  return w;
}

// The rank that survivor `rank` of a comm-die-at-barrier job names in its CommError line
// ("bootstrap_probe: rank S: comm: rank X is unreachable ...", "... comm: rank X left the job: ..."
// or "... comm: timed out after N s
// waiting for rank X ..."), or -1 when it printed none.
inline int rank_named_by(const std::string& err, int rank) {
  // Parsed by hand: <regex> trips GCC 12's -Wmaybe-uninitialized under the sanitizers.
  const std::string prefix = "bootstrap_probe: rank " + std::to_string(rank) + ": comm: ";
  const auto number_at = [&](std::size_t pos) {
    std::size_t end = pos;
    while (end < err.size() && err[end] >= '0' && err[end] <= '9') ++end;
    return end == pos ? -1 : std::stoi(err.substr(pos, end - pos));
  };
  for (std::size_t at = err.find(prefix); at != std::string::npos; at = err.find(prefix, at + 1)) {
    const std::size_t body = at + prefix.size();
    const std::size_t eol = std::min(err.find('\n', body), err.size());
    const std::string text = err.substr(body, eol - body);
    if (text.rfind("rank ", 0) == 0) {
      const int named = number_at(body + 5);
      const std::size_t after = text.find_first_not_of("0123456789", 5);
      if (named >= 0 && after != std::string::npos &&
          (text.compare(after, 15, " is unreachable") == 0 ||
           text.compare(after, 14, " left the job:") == 0))
        return named;
    } else if (text.rfind("timed out after ", 0) == 0) {
      const std::size_t waiting = text.find(" s waiting for rank ");
      const std::size_t space = text.find(' ', 16);
      if (waiting != std::string::npos && space == waiting) {
        const int named = number_at(body + waiting + 20);
        if (named >= 0) return named;
      }
    }
  }
  return -1;
}

// Follows the ranks named by the survivors of a job of `size` whose rank `killed` died: a
// survivor names the killed rank, or another survivor that gave up before it (a dissemination
// round may wait on a rank that is itself stuck waiting on the killed one), which in turn leads
// to the killed rank. `errs[r]` is what rank r printed on stderr. Returns what is wrong, empty
// when nothing is. Under a launcher (`launched`), which stops the survivors as soon as one rank
// dies, a survivor may say nothing, or name a survivor the launcher stopped: each line printed
// must then only name another rank of the job.
inline std::string check_dead_rank_named(const std::vector<std::string>& errs, int size, int killed,
                                         bool launched) {
  std::string wrong;
  for (int r = 0; r < size; ++r) {
    if (r == killed) continue;
    int at = r;
    for (int hops = 0; at != killed && hops < size; ++hops) {
      const int named = rank_named_by(errs[static_cast<std::size_t>(at)], at);
      if (named < 0 && launched) break;
      if (named < 0) {
        wrong += "rank " + std::to_string(at) + " names no rank it gave up on\n";
        break;
      }
      if (named == at || named >= size) {
        wrong += "rank " + std::to_string(at) + " names rank " + std::to_string(named) + "\n";
        break;
      }
      if (launched) break;
      at = named;
      if (hops + 1 == size && at != killed)
        wrong += "the ranks named from rank " + std::to_string(r) + " go round in a circle\n";
    }
  }
  return wrong;
}

}  // namespace launch_test

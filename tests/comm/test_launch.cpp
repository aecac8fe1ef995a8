// Tests of compas-run and of the tcp bootstrap across real processes. bootstrap_probe is the
// program every rank runs, either under compas-run or started here by hand with the COMPAS_*
// variables a launcher would set (to start only some ranks, add intruders, or break the
// environment). Every wait has a deadline; a process still running at the end of a test is
// killed with its process group.
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
#include "compas/comm/wire.hpp"
#include "compas/threads/placement.hpp"

#ifndef COMPAS_RUN_EXE
#error "COMPAS_RUN_EXE must name the compas-run executable"
#endif
#ifndef BOOTSTRAP_PROBE_EXE
#error "BOOTSTRAP_PROBE_EXE must name the bootstrap_probe executable"
#endif

namespace {

using namespace compas::testing;
namespace wire = compas::comm::wire;

const std::string kRun = COMPAS_RUN_EXE;
const std::string kProbe = BOOTSTRAP_PROBE_EXE;

// A job of bootstrap_probe ranks started by hand.
class ProbeJob : public ManualJob {
 public:
  explicit ProbeJob(int size, Env extra = {}, bool own_port = false)
      : ManualJob(kProbe, size, std::move(extra), own_port) {}
};

std::unique_ptr<Proc> compas_run(const std::vector<std::string>& args, const Env& env = {}) {
  std::vector<std::string> argv = {kRun};
  argv.insert(argv.end(), args.begin(), args.end());
  return std::make_unique<Proc>(argv, env);
}

// Runs compas-run to the end (or fails the test after `seconds`).
std::unique_ptr<Proc> run_to_end(const std::vector<std::string>& args, const Env& env = {},
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

WatchedRun run_watched(const std::vector<std::string>& args, const Env& env = {},
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
int rank_named_by(const std::string& err, int rank) {
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
std::string check_dead_rank_named(const std::vector<std::string>& errs, int size, int killed,
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

// ---- through compas-run ------------------------------------------------------------------------

void expect_job_ok(int P, int T) {
  auto p = run_to_end({"-n", std::to_string(P), "-t", std::to_string(T), kProbe});
  ASSERT_EQ(p->exit_code, 0) << p->describe();
  for (int r = 0; r < P; ++r)
    EXPECT_EQ(
        count_of(p->out, "ok rank " + std::to_string(r) + " of " + std::to_string(P) + " (tcp)"), 1)
        << p->describe();
}

TEST(Launch, OneProcess) {
  expect_job_ok(1, 1);
}
TEST(Launch, TwoProcesses) {
  expect_job_ok(2, 1);
}
TEST(Launch, FourProcesses) {
  expect_job_ok(4, 1);
}

TEST(Launch, OversubscribedJobRunsWithOneNote) {
  const int T = std::max(2, cpus_available());  // 4 x T > the cpus, whatever the machine
  auto p = run_to_end({"-n", "4", "-t", std::to_string(T), kProbe});
  ASSERT_EQ(p->exit_code, 0) << p->describe();
  EXPECT_EQ(count_of(p->err, "oversubscribed, waits will back off"), 1) << p->describe();
  EXPECT_TRUE(contains(p->err, "compas-run: 4 processes × " + std::to_string(T) + " threads on "))
      << p->describe();
  EXPECT_EQ(count_of(p->out, "COMPAS_OVERSUBSCRIBED=1 "), 4) << p->describe();
  EXPECT_EQ(count_of(p->out, "COMPAS_THREADS=" + std::to_string(T) + " "), 4) << p->describe();
  EXPECT_EQ(count_of(p->out, "ok rank "), 4) << p->describe();
}

TEST(Launch, JobThatFitsHasNoNote) {
  if (cpus_available() < 2) GTEST_SKIP() << "needs 2 cpus";
  auto p = run_to_end({"-n", "2", "-t", "1", kProbe});
  ASSERT_EQ(p->exit_code, 0) << p->describe();
  EXPECT_FALSE(contains(p->err, "oversubscribed")) << p->describe();
  EXPECT_EQ(count_of(p->out, "COMPAS_OVERSUBSCRIBED=- "), 2) << p->describe();
  EXPECT_EQ(count_of(p->out, "COMPAS_LOCAL_SIZE=2 "), 2) << p->describe();
  EXPECT_EQ(count_of(p->out, "COMPAS_LOCAL_RANK=1 "), 1) << p->describe();
  EXPECT_EQ(count_of(p->out, "COMPAS_BIND=-"), 2) << p->describe();
}

TEST(Launch, OversubscribeFlagSetsTheVariableQuietly) {
  auto p = run_to_end({"--oversubscribe", "-n", "1", kProbe});
  ASSERT_EQ(p->exit_code, 0) << p->describe();
  EXPECT_FALSE(contains(p->err, "oversubscribed")) << p->describe();
  EXPECT_EQ(count_of(p->out, "COMPAS_OVERSUBSCRIBED=1 "), 1) << p->describe();
}

TEST(Launch, BindIsPassedOn) {
  auto p = run_to_end({"-n", "2", "--bind", "scatter", kProbe});
  ASSERT_EQ(p->exit_code, 0) << p->describe();
  EXPECT_EQ(count_of(p->out, "COMPAS_BIND=scatter"), 2) << p->describe();
}

TEST(Launch, CpuSlicesAreDisjoint) {
  if (cpus_available() < 2) GTEST_SKIP() << "needs 2 cpus";
  auto p = run_to_end({"-n", "2", "-t", "1", kProbe});
  ASSERT_EQ(p->exit_code, 0) << p->describe();
  std::vector<std::set<int>> slices(2);
  for (const auto& line : lines_of(p->out)) {
    for (int r = 0; r < 2; ++r) {
      const std::string head = "affinity rank " + std::to_string(r) + ": ";
      if (line.rfind(head, 0) == 0) {
        const auto cpus = compas::threads::parse_cpu_list(line.substr(head.size()));
        slices[static_cast<std::size_t>(r)] = {cpus.begin(), cpus.end()};
        // What the process may run on is what compas-run told it.
        EXPECT_TRUE(contains(p->out, "env rank " + std::to_string(r) +
                                         ": COMPAS_CPUS=" + line.substr(head.size()) + " "))
            << p->describe();
      }
    }
  }
  ASSERT_FALSE(slices[0].empty()) << p->describe();
  ASSERT_FALSE(slices[1].empty()) << p->describe();
  for (int c : slices[0]) EXPECT_FALSE(slices[1].count(c)) << "cpu " << c << " in both slices";
}

TEST(Launch, TagOutputPrefixesEveryLine) {
  auto p = run_to_end({"--tag-output", "-n", "2", kProbe, "partial"});
  ASSERT_EQ(p->exit_code, 0) << p->describe();
  const auto out = lines_of(p->out);
  ASSERT_FALSE(out.empty());
  for (const auto& line : out)
    EXPECT_TRUE(line.rfind("[0] ", 0) == 0 || line.rfind("[1] ", 0) == 0) << line;
  for (int r = 0; r < 2; ++r) {
    std::string tag = "[";  // built by appending: GCC 12 warns falsely on "literal" + string
    tag += std::to_string(r);
    tag += "] ";
    EXPECT_EQ(count_of(p->out, tag + "ok rank " + std::to_string(r) + " of 2 (tcp)\n"), 1)
        << p->describe();
    // The last line had no newline: flushed at the end, on a line of its own.
    EXPECT_EQ(count_of(p->out, tag + "partial rank " + std::to_string(r) + "\n"), 1)
        << p->describe();
    // stderr stays stderr, tagged too.
    EXPECT_EQ(count_of(p->err, tag + "stderr rank " + std::to_string(r) + "\n"), 1)
        << p->describe();
    EXPECT_FALSE(contains(p->out, "stderr rank")) << p->describe();
  }
}

TEST(Launch, ArgumentsReachTheProgramUntouched) {
  auto p =
      run_to_end({"-n", "1", kProbe, "echo-args", "-n", "5", "--bind", "x", "--", "a b", "", "-t"});
  ASSERT_EQ(p->exit_code, 0) << p->describe();
  EXPECT_EQ(p->out, "arg: -n\narg: 5\narg: --bind\narg: x\narg: --\narg: a b\narg: \narg: -t\n");
  auto q = run_to_end({"-n", "1", "--", kProbe, "echo-args", "--tag-output"});
  ASSERT_EQ(q->exit_code, 0) << q->describe();
  EXPECT_EQ(q->out, "arg: --tag-output\n");
}

TEST(Launch, KilledRankStopsTheJobAndIsNamed) {
  auto w = run_watched({"-n", "4", kProbe, "die-at-barrier", "1"}, {{"COMPAS_TIMEOUT", "10"}}, 20);
  const auto& p = w.p;
  EXPECT_EQ(p->exit_code, 128 + SIGKILL) << p->describe();
  EXPECT_LT(p->seconds, 8.0) << "the job must end long before COMPAS_TIMEOUT\n" << p->describe();
  // The others may have seen rank 1 die (and exited) before compas-run stops them: whether
  // "; stopping the other N processes" follows, and N, depend on timing.
  EXPECT_TRUE(contains(p->err, "compas-run: rank 1 was killed by signal 9 (Killed)"))
      << p->describe();
  EXPECT_EQ(w.shm.leftovers(w.pids), "") << "shared memory left by the job\n" << p->describe();
}

// A rank killed in the middle of UCX's shared-memory set-up (between making a segment or a file
// and marking or unlinking it) leaves them behind for good unless compas-run removes them: the
// probe makes both the way UCX does, then dies.
TEST(Launch, SharedMemoryOfARankKilledMidSetUpIsRemoved) {
  auto w =
      run_watched({"-n", "3", kProbe, "leak-shm-at-barrier", "1"}, {{"COMPAS_TIMEOUT", "10"}}, 20);
  const auto& p = w.p;
  EXPECT_EQ(p->exit_code, 128 + SIGKILL) << p->describe();
  EXPECT_TRUE(contains(p->out, "rank 1 made shared memory: segment yes, file yes"))
      << p->describe();
  EXPECT_EQ(w.shm.leftovers(w.pids), "") << "shared memory left by the job\n" << p->describe();
}

TEST(Launch, RankKilledInACommBarrierEndsTheJobAndNothingIsLeft) {
  // Rank 0 (which also holds the bootstrap's rendezvous) or another rank dies in a loop of Comm
  // barriers. compas-run ends the job naming it, long before COMPAS_TIMEOUT, and takes every
  // rank along; a rank that noticed first and said so names a dead process.
  for (int P : {2, 3}) {
    for (int killed : {0, 1}) {
      SCOPED_TRACE("P = " + std::to_string(P) + ", rank " + std::to_string(killed) + " killed");
      const std::string marker = unique_marker();
      auto w = run_watched(
          {"-n", std::to_string(P), kProbe, "comm-die-at-barrier", std::to_string(killed), marker},
          {{"COMPAS_TIMEOUT", "10"}}, 30);
      const auto& p = w.p;
      EXPECT_EQ(p->exit_code, 128 + SIGKILL) << p->describe();
      EXPECT_TRUE(contains(p->err, "compas-run: rank " + std::to_string(killed) +
                                       " was killed by signal 9 (Killed)"))
          << p->describe();
      // Every rank made its Comm: the kill came inside the barrier loop, not before it.
      EXPECT_EQ(count_of(p->out, "pid rank "), P) << p->describe();
      EXPECT_LT(p->seconds, 15.0) << "within COMPAS_TIMEOUT (10 s) + 5 s\n" << p->describe();
      EXPECT_EQ(check_dead_rank_named(std::vector<std::string>(static_cast<std::size_t>(P), p->err),
                                      P, killed, /*launched=*/true),
                "")
          << p->describe();
      EXPECT_TRUE(none_left(marker, 5)) << "ranks of the job are still running\n" << p->describe();
      // The launcher and its P ranks, each seen (they live through their Comm's setup); at
      // least: under LeakSanitizer a rank's exit check runs in a task of its own, a child too.
      EXPECT_GE(w.pids.size(), static_cast<std::size_t>(P + 1)) << p->describe();
      EXPECT_EQ(w.shm.leftovers(w.pids), "") << "shared memory left by the job\n" << p->describe();
    }
  }
}

// The others are stopped by a signal (SIGTERM).
TEST(Launch, FailingRankExitStatusIsTheJobs) {
  auto w = run_watched({"-n", "4", kProbe, "exit-code", "2", "3"});
  const auto& p = w.p;
  EXPECT_EQ(p->exit_code, 3) << p->describe();
  EXPECT_TRUE(contains(p->err,
                       "compas-run: rank 2 exited with status 3; stopping the other 3 "
                       "processes"))
      << p->describe();
  EXPECT_EQ(w.shm.leftovers(w.pids), "") << "shared memory left by the job\n" << p->describe();
}

TEST(Launch, RanksIgnoringSigtermAreKilledAfterTheGrace) {
  auto w = run_watched({"-n", "3", kProbe, "exit-code", "0", "5", "ignore-term"}, {}, 20);
  const auto& p = w.p;
  EXPECT_EQ(p->exit_code, 5) << p->describe();
  EXPECT_TRUE(contains(p->err, "2 processes still running 2 s after SIGTERM; killing them"))
      << p->describe();
  EXPECT_GT(p->seconds, 1.5) << p->describe();
  EXPECT_LT(p->seconds, 10.0) << p->describe();
  EXPECT_EQ(w.shm.leftovers(w.pids), "") << "shared memory left by the job\n" << p->describe();
}

TEST(Launch, SigtermIsForwardedAndNothingIsLeft) {
  const std::string marker = unique_marker();
  const ShmSnapshot shm;
  auto p = compas_run({"-n", "3", kProbe, "sleep-forever", "all", marker});
  JobPids job(p->pid());
  ASSERT_TRUE(p->wait_for_output("sleeping rank", 3, 20)) << p->describe();
  EXPECT_EQ(processes_with(marker).size(), 4u);  // compas-run and its 3 ranks
  const auto start = Clock::now();
  p->signal(SIGTERM);
  ASSERT_TRUE(p->wait(10)) << p->describe();
  EXPECT_LT(since(start), 5.0);
  EXPECT_EQ(p->exit_code, 128 + SIGTERM) << p->describe();
  EXPECT_TRUE(contains(p->err, "received signal 15 (Terminated); forwarding it to 3 processes"))
      << p->describe();
  EXPECT_TRUE(none_left(marker, 2)) << "ranks left behind";
  EXPECT_EQ(shm.leftovers(job.pids()), "") << "shared memory left by the job\n" << p->describe();
}

TEST(Launch, SigintIsForwarded) {
  const std::string marker = unique_marker();
  const ShmSnapshot shm;
  auto p = compas_run({"-n", "2", kProbe, "sleep-forever", "all", marker});
  JobPids job(p->pid());
  ASSERT_TRUE(p->wait_for_output("sleeping rank", 2, 20)) << p->describe();
  p->signal(SIGINT);
  ASSERT_TRUE(p->wait(10)) << p->describe();
  EXPECT_EQ(p->exit_code, 128 + SIGINT) << p->describe();
  EXPECT_TRUE(none_left(marker, 2)) << "ranks left behind";
  EXPECT_EQ(shm.leftovers(job.pids()), "") << "shared memory left by the job\n" << p->describe();
}

TEST(Launch, KilledLauncherTakesTheJobAlong) {
  const std::string marker = unique_marker();
  const ShmSnapshot shm;
  auto p = compas_run({"-n", "3", kProbe, "sleep-forever", "all", marker});
  JobPids job(p->pid());
  ASSERT_TRUE(p->wait_for_output("sleeping rank", 3, 20)) << p->describe();
  EXPECT_TRUE(job.wait_for(4, 5)) << "compas-run and its 3 ranks were not all seen";
  p->signal(SIGKILL);
  ASSERT_TRUE(p->wait(10)) << p->describe();
  EXPECT_EQ(p->term_signal, SIGKILL);
  EXPECT_TRUE(none_left(marker, 3)) << "ranks outlived a killed compas-run";
  EXPECT_EQ(shm.leftovers(job.pids()), "") << "shared memory left by the job\n" << p->describe();
}

TEST(Launch, TimeoutStopsTheJob) {
  const std::string marker = unique_marker();
  auto w =
      run_watched({"--timeout", "1", "-n", "2", kProbe, "sleep-forever", "all", marker}, {}, 20);
  const auto& p = w.p;
  EXPECT_EQ(p->exit_code, 124) << p->describe();
  EXPECT_TRUE(contains(p->err, "compas-run: timed out after 1 s; stopping 2 processes"))
      << p->describe();
  EXPECT_LT(p->seconds, 6.0) << p->describe();
  EXPECT_TRUE(none_left(marker, 2));
  EXPECT_EQ(w.shm.leftovers(w.pids), "") << "shared memory left by the job\n" << p->describe();
}

// --tag-output relays the ranks' lines through compas-run: a reader that stops reading
// (`compas-run --tag-output ... | sleep 30`) must not stall its supervision. Ranks that print
// without end, a stdout pipe nobody reads: the timeout still ends the job in time.
TEST(Launch, TagOutputToAReaderThatStopsReadingDoesNotStallTheTimeout) {
  int out[2];
  ASSERT_EQ(::pipe2(out, O_CLOEXEC), 0);
  const ShmSnapshot shm;
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::dup2(out[1], STDOUT_FILENO);
    const int devnull = ::open("/dev/null", O_WRONLY);
    ::dup2(devnull, STDERR_FILENO);
    ::execl(COMPAS_RUN_EXE, COMPAS_RUN_EXE, "--tag-output", "--timeout", "2", "-n", "2", "yes",
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(out[1]);  // the read end stays open and unread: the pipe fills, writes would block
  JobPids job(pid);
  int status = 0;
  pid_t done = 0;
  while ((done = ::waitpid(pid, &status, WNOHANG)) == 0 &&
         std::chrono::steady_clock::now() - t0 < std::chrono::seconds(30))
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (done == 0) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
  }
  ::close(out[0]);
  EXPECT_NE(done, 0) << "compas-run still running after 30 s: its timeout of 2 s was stalled";
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 124) << "status " << status;
  EXPECT_LT(seconds, 10.0);
  EXPECT_EQ(shm.leftovers(job.pids()), "") << "shared memory left by the job";
}

TEST(Launch, BadInputExitsTwoNamingTheValue) {
  char not_executable[] = "/tmp/compas-run-test-XXXXXX";
  const int fd = ::mkstemp(not_executable);
  ASSERT_GE(fd, 0);
  ::close(fd);
  struct Case {
    std::vector<std::string> args;
    std::string expect;
  };
  const std::vector<Case> cases = {
      {{"-n", "0", kProbe}, "-n '0'"},
      {{"-n", "abc", kProbe}, "-n 'abc'"},
      {{"-n", "-3", kProbe}, "-3"},
      {{"-n", "99999", kProbe}, "1..4096"},
      {{"-n", "2", "-t", "0", kProbe}, "-t '0'"},
      {{"-n", "2", "-t", "x", kProbe}, "-t 'x'"},
      {{"-n", "2"}, "no program given"},
      {{kProbe}, "--processes is required"},
      {{"-n", "2", "--bind", "bogus", kProbe}, "bogus"},
      {{"-n", "", kProbe}, "-n ''"},
      {{"-n", "2", "-t", "", kProbe}, "-t ''"},
      {{"-n", "2", "--bind", "", kProbe}, "--bind ''"},
      {{"-n", "2", "--timeout", "", kProbe}, "--timeout ''"},
      {{"-n", "2", "--bind", "0,1", kProbe}, "--bind '0,1'"},
      {{"-n", "2", "--timeout", "-1", kProbe}, "--timeout '-1'"},
      {{"-n", "2", "--timeout", "soon", kProbe}, "--timeout 'soon'"},
      {{"-n", "2", "no-such-program-xyz"}, "program 'no-such-program-xyz' not found in PATH"},
      {{"-n", "2", "/nonexistent/prog"}, "program '/nonexistent/prog' not found"},
      {{"-n", "2", not_executable}, std::string("'") + not_executable + "' is not executable"},
      {{"-n", "2", "/tmp"}, "'/tmp' is a directory"},
      {{"-n", "2", "--bogus", kProbe}, "--bogus"},
  };
  for (const auto& c : cases) {
    auto p = run_to_end(c.args, {}, 10);
    std::string cmd;
    for (const auto& a : c.args) cmd += " " + a;
    EXPECT_EQ(p->exit_code, 2) << cmd << "\n" << p->describe();
    EXPECT_TRUE(contains(p->err, c.expect)) << cmd << ": expected '" << c.expect << "'\n"
                                            << p->describe();
    EXPECT_TRUE(p->out.empty()) << cmd << "\n" << p->describe();
  }
  ::unlink(not_executable);
}

// ---- ranks started by hand ---------------------------------------------------------------------

int connect_to(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  sa.sin_port = htons(static_cast<std::uint16_t>(port));
  if (::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Reads from `fd` until EOF or `seconds`; returns what came.
std::string read_until_closed(int fd, double seconds) {
  std::string got;
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(seconds));
  while (Clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 20) <= 0) continue;
    char buf[4096];
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) return got;
    got.append(buf, static_cast<std::size_t>(n));
  }
  got += "<still open>";
  return got;
}

TEST(TcpRanks, DeadRankIsReportedToEveryRankPromptly) {
  ProbeJob job(3, {{"COMPAS_TIMEOUT", "10"}});
  const ShmSnapshot shm;
  std::vector<std::unique_ptr<Proc>> ranks;
  for (int r = 0; r < 3; ++r) ranks.push_back(job.start(r, {"die-at-barrier", "2"}));
  for (auto& p : ranks) ASSERT_TRUE(p->wait(15)) << p->describe();
  EXPECT_EQ(ranks[2]->term_signal, SIGKILL) << ranks[2]->describe();
  for (int r : {0, 1}) {
    const auto& p = *ranks[static_cast<std::size_t>(r)];
    EXPECT_EQ(p.exit_code, 1) << p.describe();
    EXPECT_TRUE(contains(p.err, "bootstrap: rank 2 disconnected (process died?)")) << p.describe();
    EXPECT_LT(p.seconds, 6.0) << "told by rank 0, not by the 10 s timeout\n" << p.describe();
  }
  EXPECT_EQ(shm.leftovers(pids_of(ranks)), "") << "shared memory left by the job";
}

// No launcher to stop the others: each must find out by itself (the dead rank's process is gone,
// or its UCX endpoint fails) and say which rank died, long before the 20 s timeout.
void expect_comm_death_named(int P, int killed, const Env& env) {
  SCOPED_TRACE("P = " + std::to_string(P) + ", rank " + std::to_string(killed) + " killed");
  Env all = {{"COMPAS_TIMEOUT", "20"}};
  all.insert(all.end(), env.begin(), env.end());
  ProbeJob job(P, all);
  const ShmSnapshot shm;
  std::vector<std::unique_ptr<Proc>> ranks;
  for (int r = 0; r < P; ++r)
    ranks.push_back(job.start(r, {"comm-die-at-barrier", std::to_string(killed)}));
  for (auto& p : ranks) ASSERT_TRUE(p->wait(30)) << p->describe();
  EXPECT_EQ(ranks[static_cast<std::size_t>(killed)]->term_signal, SIGKILL)
      << ranks[static_cast<std::size_t>(killed)]->describe();
  std::vector<std::string> errs;
  std::string all_output;
  for (int r = 0; r < P; ++r) {
    const auto& p = *ranks[static_cast<std::size_t>(r)];
    errs.push_back(p.err);
    all_output += "==== rank " + std::to_string(r) + ": " + p.describe();
    if (r == killed) continue;
    EXPECT_EQ(p.exit_code, 1) << p.describe();
    EXPECT_LT(p.seconds, 15.0) << "noticed, not timed out\n" << p.describe();
  }
  EXPECT_EQ(check_dead_rank_named(errs, P, killed, /*launched=*/false), "") << all_output;
  EXPECT_EQ(shm.leftovers(pids_of(ranks)), "") << "shared memory left by the job\n" << all_output;
}

TEST(TcpRanks, RankKilledInACommBarrierIsNamedByTheOthers) {
  for (int P : {2, 3})
    for (int killed : {0, 1}) expect_comm_death_named(P, killed, {});
}

// Both node barrier algorithms forced (auto picks by oversubscription): in the two-level one the
// others wait on their host leader's words, also when the leader is the one killed.
TEST(TcpRanks, RankKilledInATwoLevelCommBarrierIsNamedByTheOthers) {
  for (int killed : {0, 2}) expect_comm_death_named(3, killed, {{"COMPAS_NODE_BARRIER", "host"}});
}

TEST(TcpRanks, RankKilledInADisseminationCommBarrierIsNamedByTheOthers) {
  expect_comm_death_named(3, 1, {{"COMPAS_NODE_BARRIER", "dissemination"}});
}

TEST(TcpRanks, RankKilledInACommBarrierOverUcxTcpIsNamedByTheOthers) {
  for (int P : {2, 3})
    for (int killed : {0, 1}) expect_comm_death_named(P, killed, {{"UCX_TLS", "tcp,self"}});
}

// A rank whose program throws while the others wait for it in a Comm barrier: its Comm is
// destroyed during the unwinding and must not wait for them in its teardown (they wait for it),
// so it leaves, and they name it.
TEST(TcpRanks, RankThrowingOutOfItsCommIsNamedByTheOthers) {
  for (int P : {2, 3}) {
    SCOPED_TRACE("P = " + std::to_string(P));
    ProbeJob job(P, {{"COMPAS_TIMEOUT", "20"}});
    std::vector<std::unique_ptr<Proc>> ranks;
    for (int r = 0; r < P; ++r) ranks.push_back(job.start(r, {"comm-throw-at-barrier", "1"}));
    for (auto& p : ranks) ASSERT_TRUE(p->wait(30)) << p->describe();
    const auto& thrower = *ranks[1];
    EXPECT_EQ(thrower.exit_code, 1) << thrower.describe();
    EXPECT_TRUE(contains(thrower.err, "bootstrap_probe: failed: rank 1 gives up"))
        << thrower.describe();
    EXPECT_LT(thrower.seconds, 15.0) << "its teardown waited\n" << thrower.describe();
    std::vector<std::string> errs;
    std::string all_output;
    for (int r = 0; r < P; ++r) {
      const auto& p = *ranks[static_cast<std::size_t>(r)];
      errs.push_back(p.err);
      all_output += "==== rank " + std::to_string(r) + ": " + p.describe();
      if (r == 1) continue;
      EXPECT_EQ(p.exit_code, 1) << p.describe();
      EXPECT_LT(p.seconds, 15.0) << "noticed, not timed out\n" << p.describe();
    }
    // Each names the thrower, or a rank that left because of it before this one noticed.
    EXPECT_EQ(check_dead_rank_named(errs, P, 1, /*launched=*/false), "") << all_output;
  }
}

TEST(TcpRanks, DeadRankZeroIsNamed) {
  ProbeJob job(3, {{"COMPAS_TIMEOUT", "10"}});
  const ShmSnapshot shm;
  std::vector<std::unique_ptr<Proc>> ranks;
  for (int r = 0; r < 3; ++r) ranks.push_back(job.start(r, {"die-at-barrier", "0"}));
  for (auto& p : ranks) ASSERT_TRUE(p->wait(15)) << p->describe();
  for (int r : {1, 2}) {
    const auto& p = *ranks[static_cast<std::size_t>(r)];
    EXPECT_EQ(p.exit_code, 1) << p.describe();
    EXPECT_TRUE(contains(p.err, "bootstrap: rank 0 disconnected (process died?)")) << p.describe();
    EXPECT_LT(p.seconds, 6.0) << p.describe();
  }
  EXPECT_EQ(shm.leftovers(pids_of(ranks)), "") << "shared memory left by the job";
}

TEST(TcpRanks, RankThatNeverStartsTimesOutNamingIt) {
  ProbeJob job(3, {{"COMPAS_TIMEOUT", "2"}});
  auto r0 = job.start(0);
  auto r1 = job.start(1);
  ASSERT_TRUE(r0->wait(10)) << r0->describe();
  ASSERT_TRUE(r1->wait(10)) << r1->describe();
  const std::string expect =
      "bootstrap: timed out after 2 s: rank 2 never connected to " + job.rendezvous();
  for (const auto* p : {r0.get(), r1.get()}) {
    EXPECT_EQ(p->exit_code, 1) << p->describe();
    EXPECT_TRUE(contains(p->err, expect)) << p->describe();
    EXPECT_LT(p->seconds, 6.0) << p->describe();
  }
}

TEST(TcpRanks, RankZeroThatNeverStartsIsNamed) {
  ProbeJob job(2, {{"COMPAS_TIMEOUT", "1"}}, /*own_port=*/true);
  auto r1 = job.start(1);
  ASSERT_TRUE(r1->wait(10)) << r1->describe();
  EXPECT_EQ(r1->exit_code, 1) << r1->describe();
  EXPECT_TRUE(contains(
      r1->err, "timed out after 1 s: rank 1 could not connect to rank 0 at " + job.rendezvous()))
      << r1->describe();
}

TEST(TcpRanks, HungRankTimesOutTheBarrierNamingIt) {
  ProbeJob job(3, {{"COMPAS_TIMEOUT", "2"}});
  std::vector<std::unique_ptr<Proc>> ranks;
  for (int r = 0; r < 3; ++r) ranks.push_back(job.start(r, {"sleep-forever", "1"}));
  const std::string expect =
      "timed out after 2 s in barrier (collective #2): rank 1 did not enter it";
  for (int r : {0, 2}) {
    auto& p = *ranks[static_cast<std::size_t>(r)];
    ASSERT_TRUE(p.wait(10)) << p.describe();
    EXPECT_EQ(p.exit_code, 1) << p.describe();
    EXPECT_TRUE(contains(p.err, expect)) << p.describe();
  }
}

TEST(TcpRanks, ClientStartedBeforeRankZeroRetries) {
  ProbeJob job(2, {{"COMPAS_TIMEOUT", "20"}}, /*own_port=*/true);
  auto r1 = job.start(1);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  auto r0 = job.start(0);
  for (auto* p : {r0.get(), r1.get()}) {
    ASSERT_TRUE(p->wait(20)) << p->describe();
    EXPECT_EQ(p->exit_code, 0) << p->describe();
  }
  EXPECT_TRUE(contains(r0->out, "ok rank 0 of 2 (tcp)"));
  EXPECT_TRUE(contains(r1->out, "ok rank 1 of 2 (tcp)"));
}

TEST(TcpRanks, IntrudersAreRejectedAndDoNotDisturbTheJob) {
  ProbeJob job(2, {{"COMPAS_TIMEOUT", "20"}});
  auto r0 = job.start(0);
  // Wait until rank 0 accepts connections (it adopts the listener at once).
  std::this_thread::sleep_for(std::chrono::milliseconds(200));

  // 1. A HELLO claiming rank 1 from a connection without the token: rank 0's CHALLENGE (which
  // tells nothing about the job), a PROOF that is wrong, then a REJECT and the connection closes.
  const int bad = connect_to(job.port());
  ASSERT_GE(bad, 0);
  const auto hello = wire::encode(wire::FrameType::hello, 0,
                                  wire::encode_hello({1, 2, std::string(wire::kNonceBytes, 'n')}));
  ASSERT_EQ(::write(bad, hello.data(), hello.size()), static_cast<ssize_t>(hello.size()));
  const auto proof = wire::encode(wire::FrameType::proof, 0, std::string(wire::kProofBytes, 'p'));
  ASSERT_EQ(::write(bad, proof.data(), proof.size()), static_cast<ssize_t>(proof.size()));
  std::string reply = read_until_closed(bad, 5);
  ::close(bad);
  const auto challenge = wire::parse_frame(reply);
  ASSERT_EQ(challenge.status, wire::ParseStatus::ok) << reply;
  EXPECT_EQ(challenge.frame.type, wire::FrameType::challenge);
  const auto verdict = wire::decode_frame(reply.substr(challenge.consumed));
  ASSERT_EQ(verdict.status, wire::ParseStatus::ok) << reply;
  EXPECT_EQ(verdict.frame.type, wire::FrameType::reject);
  EXPECT_TRUE(contains(verdict.frame.payload, "wrong job token")) << verdict.frame.payload;

  // 2. Garbage: the connection is closed (with a REJECT naming the bad frame).
  const int garbage = connect_to(job.port());
  const std::string junk = "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n";
  ASSERT_EQ(::write(garbage, junk.data(), junk.size()), static_cast<ssize_t>(junk.size()));
  EXPECT_FALSE(contains(read_until_closed(garbage, 5), "<still open>"));
  ::close(garbage);

  // 3. 100 connections that say nothing, kept open while the job forms.
  std::vector<int> silent;
  for (int i = 0; i < 100; ++i) silent.push_back(connect_to(job.port()));

  // 4. A real process with the wrong token stops with a clear message: rank 0 cannot prove it
  // knows that token.
  auto impostor = job.start(1, {}, {{"COMPAS_JOB_TOKEN", "not-the-job-token"}});
  ASSERT_TRUE(impostor->wait(10)) << impostor->describe();
  EXPECT_EQ(impostor->exit_code, 1) << impostor->describe();
  EXPECT_TRUE(contains(impostor->err, "COMPAS_JOB_TOKEN differs from rank 0's"))
      << impostor->describe();

  // The real rank 1 still forms the job with rank 0, without waiting for the silent ones.
  const auto start = Clock::now();
  auto r1 = job.start(1);
  for (auto* p : {r0.get(), r1.get()}) {
    ASSERT_TRUE(p->wait(20)) << p->describe();
    EXPECT_EQ(p->exit_code, 0) << p->describe();
  }
  EXPECT_LT(since(start), 4.0) << "silent connections must not hold up the job";
  EXPECT_TRUE(contains(r0->out, "ok rank 0 of 2 (tcp)")) << r0->describe();
  EXPECT_TRUE(contains(r1->out, "ok rank 1 of 2 (tcp)")) << r1->describe();
  for (int fd : silent)
    if (fd >= 0) ::close(fd);
}

TEST(TcpRanks, BadEnvironmentExitsTwoNamingTheVariable) {
  struct Case {
    Env env;
    std::string expect;
  };
  const Env base = {{"COMPAS_SIZE", "2"},
                    {"COMPAS_RENDEZVOUS", "127.0.0.1:4000"},
                    {"COMPAS_JOB_TOKEN", "0123456789abcdef0123456789abcdef"}};
  auto with = [&](Env more) {
    Env e = base;
    for (auto& kv : more) {
      std::erase_if(e, [&](const auto& b) { return b.first == kv.first; });
      e.push_back(kv);
    }
    return e;
  };
  const std::vector<Case> cases = {
      {with({{"COMPAS_RANK", "abc"}}), "COMPAS_RANK='abc'"},
      {with({{"COMPAS_RANK", "2"}}), "COMPAS_RANK='2'"},
      {with({{"COMPAS_RANK", "1"}, {"COMPAS_SIZE", "0"}}), "COMPAS_SIZE='0'"},
      {with({{"COMPAS_RANK", "1"}, {"COMPAS_SIZE", "many"}}), "COMPAS_SIZE='many'"},
      {{{"COMPAS_RANK", "1"}}, "COMPAS_SIZE is not set"},
      {with({{"COMPAS_RANK", "1"}, {"COMPAS_RENDEZVOUS", "localhost"}}),
       "COMPAS_RENDEZVOUS='localhost'"},
      {with({{"COMPAS_RANK", "1"}, {"COMPAS_RENDEZVOUS", "127.0.0.1:0"}}),
       "COMPAS_RENDEZVOUS='127.0.0.1:0'"},
      {{{"COMPAS_RANK", "1"}, {"COMPAS_SIZE", "2"}, {"COMPAS_JOB_TOKEN", "t"}},
       "COMPAS_RENDEZVOUS is not set"},
      {with({{"COMPAS_RANK", "1"}, {"COMPAS_TIMEOUT", "abc"}}), "COMPAS_TIMEOUT='abc'"},
      {with({{"COMPAS_RANK", "1"}, {"COMPAS_TIMEOUT", "-5"}}), "COMPAS_TIMEOUT='-5'"},
      {{{"COMPAS_RANK", "1"}, {"COMPAS_SIZE", "2"}, {"COMPAS_RENDEZVOUS", ":4000"}},
       "COMPAS_JOB_TOKEN is not set"},
      {with({{"COMPAS_RANK", "0"}, {"COMPAS_RENDEZVOUS_FD", "77"}}), "COMPAS_RENDEZVOUS_FD='77'"},
      {with({{"COMPAS_RANK", "1"}, {"COMPAS_JOB_TOKEN", "secret"}}),
       "COMPAS_JOB_TOKEN is 6 bytes long: at least 16"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> argv = {kProbe};
    Proc p(argv, c.env);
    ASSERT_TRUE(p.wait(10)) << p.describe();
    std::string env;
    for (const auto& [k, v] : c.env) env += " " + k + "=" + v;
    EXPECT_EQ(p.exit_code, 2) << env << "\n" << p.describe();
    EXPECT_TRUE(contains(p.err, c.expect)) << env << ": expected '" << c.expect << "'\n"
                                           << p.describe();
  }
}

}  // namespace

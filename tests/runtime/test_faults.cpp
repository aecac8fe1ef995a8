// A rank SIGKILLed in the middle of each phase of a job (bootstrap, thread barriers, process
// barriers, a put stream, hybrid allreduces, a kernel): every other rank must end non-zero within
// COMPAS_TIMEOUT + 5 s naming the rank it gave up on (the dead one, or a survivor that gave up on
// it first), never hang; under compas-run the launcher names the dead rank and no process of
// the job is left. Either way the job leaves no shared memory (SysV segment, /dev/shm file)
// behind. fault_probe is the program every rank runs.
#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <vector>

#include "../common/proc.hpp"

#ifndef FAULT_PROBE_EXE
#error "FAULT_PROBE_EXE must name the fault_probe executable"
#endif
#ifndef COMPAS_RUN_EXE
#error "COMPAS_RUN_EXE must name the compas-run executable"
#endif

namespace {

using namespace compas::testing;

constexpr int kTimeout = 8;  // COMPAS_TIMEOUT of these jobs, seconds

// The first rank other than itself named in survivor `rank`'s line
// "fault_probe: rank R: MESSAGE", -1 if none.
int rank_named(const std::string& err, int rank) {
  const std::string prefix = "fault_probe: rank " + std::to_string(rank) + ": ";
  const auto at = err.find(prefix);
  if (at == std::string::npos) return -1;
  const auto eol = err.find('\n', at);
  const std::string msg = err.substr(
      at + prefix.size(), eol == std::string::npos ? std::string::npos : eol - at - prefix.size());
  for (auto r = msg.find("rank "); r != std::string::npos; r = msg.find("rank ", r + 1)) {
    std::size_t end = r + 5;
    while (end < msg.size() && msg[end] >= '0' && msg[end] <= '9') ++end;
    if (end == r + 5) continue;
    const int named = std::stoi(msg.substr(r + 5, end - r - 5));
    if (named != rank) return named;
  }
  return -1;
}

struct Case {
  std::string phase;
  int victim;
};

std::string case_name(const Case& c) {
  std::string n = c.phase + "_rank" + std::to_string(c.victim);
  for (auto& ch : n)
    if (ch == '-') ch = '_';
  return n;
}

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.phase << ", rank " << c.victim << " dies";
}

class Fault : public ::testing::TestWithParam<Case> {};

// Ranks started by hand: each survivor speaks for itself.
TEST_P(Fault, EverySurvivorNamesTheRankItGaveUpOn) {
  const Case c = GetParam();
  const int P = 3;
  ManualJob job(FAULT_PROBE_EXE, P,
                {{"COMPAS_TIMEOUT", std::to_string(kTimeout)},
                 {"COMPAS_THREADS", "2"},
                 {"COMPAS_OVERSUBSCRIBED", "1"}});
  const ShmSnapshot shm;
  std::vector<std::unique_ptr<Proc>> ranks;
  for (int r = 0; r < P; ++r) ranks.push_back(job.start(r, {c.phase, std::to_string(c.victim)}));
  std::string all;
  for (int r = 0; r < P; ++r) {
    auto& p = *ranks[static_cast<std::size_t>(r)];
    EXPECT_TRUE(p.wait(kTimeout + 20)) << "rank " << r << " still runs\n" << p.describe();
    all += "==== rank " + std::to_string(r) + ": " + p.describe();
  }
  EXPECT_EQ(ranks[static_cast<std::size_t>(c.victim)]->term_signal, SIGKILL) << all;
  for (int r = 0; r < P; ++r) {
    if (r == c.victim) continue;
    const auto& p = *ranks[static_cast<std::size_t>(r)];
    EXPECT_EQ(p.exit_code, 1) << "rank " << r << "\n" << all;
    EXPECT_LT(p.seconds, kTimeout + 5.0) << "rank " << r << " ended late\n" << all;
    // Follow who gave up on whom: it must lead to the dead rank.
    int at = r;
    for (int hops = 0; at != c.victim && hops < P; ++hops) {
      const int named = rank_named(ranks[static_cast<std::size_t>(at)]->err, at);
      ASSERT_GE(named, 0) << "rank " << at << " names no rank\n" << all;
      ASSERT_LT(named, P) << all;
      ASSERT_NE(named, at) << all;
      at = named;
    }
    EXPECT_EQ(at, c.victim) << "rank " << r << "'s chain of names does not reach the dead rank\n"
                            << all;
  }
  EXPECT_EQ(shm.leftovers(pids_of(ranks)), "") << "shared memory left by the job\n" << all;
}

// Under compas-run: the launcher names the dead rank and takes the rest of the job along.
TEST_P(Fault, LauncherNamesTheDeadRankAndNothingIsLeft) {
  const Case c = GetParam();
  const std::string marker = unique_marker();
  const ShmSnapshot shm;
  Proc run({COMPAS_RUN_EXE, "-n", "3", "-t", "2", FAULT_PROBE_EXE, c.phase,
            std::to_string(c.victim), marker},
           {{"COMPAS_TIMEOUT", std::to_string(kTimeout)}});
  JobPids job(run.pid());
  ASSERT_TRUE(run.wait(kTimeout + 20)) << run.describe();
  EXPECT_EQ(run.exit_code, 128 + SIGKILL) << run.describe();
  EXPECT_TRUE(contains(
      run.err, "compas-run: rank " + std::to_string(c.victim) + " was killed by signal 9 (Killed)"))
      << run.describe();
  EXPECT_LT(run.seconds, kTimeout + 5.0) << run.describe();
  EXPECT_TRUE(none_left(marker, 5)) << "ranks of the job are still running\n" << run.describe();
  // The launcher and its 3 ranks (past the bootstrap, each has lived long enough to be seen).
  // At least: under LeakSanitizer a rank's exit check runs in a task of its own, a child too.
  if (c.phase != "bootstrap") {
    EXPECT_GE(job.pids().size(), 4u) << "the job's ranks were not seen";
  }
  EXPECT_EQ(shm.leftovers(job.pids()), "") << "shared memory left by the job\n" << run.describe();
}

INSTANTIATE_TEST_SUITE_P(, Fault,
                         ::testing::Values(Case{"bootstrap", 1}, Case{"bootstrap", 0},
                                           Case{"thread-barrier", 1}, Case{"thread-barrier", 0},
                                           Case{"process-barrier", 1}, Case{"process-barrier", 0},
                                           Case{"put-stream", 2}, Case{"allreduce", 1},
                                           Case{"allreduce", 0}, Case{"kernel", 1}),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return case_name(info.param);
                         });

// No rank dies, but a user's reduction operator throws on rank 1 in the middle of a loop of
// hybrid allreduces (ranks started by hand, no launcher to take the job down): rank 1 ends with
// the operator's message, and every other rank ends non-zero naming rank 1, well before
// COMPAS_TIMEOUT (60 s here): it sees rank 1's process gone, it does not wait for its data.
TEST(OpThrows, TheThrowingRankEndsAndEveryOtherNamesIt) {
  const int P = 3, thrower = 1, timeout = 60;
  ManualJob job(FAULT_PROBE_EXE, P,
                {{"COMPAS_TIMEOUT", std::to_string(timeout)},
                 {"COMPAS_THREADS", "2"},
                 {"COMPAS_OVERSUBSCRIBED", "1"}});
  std::vector<std::unique_ptr<Proc>> ranks;
  for (int r = 0; r < P; ++r) ranks.push_back(job.start(r, {"op-throws", std::to_string(thrower)}));
  std::string all;
  for (int r = 0; r < P; ++r) {
    auto& p = *ranks[static_cast<std::size_t>(r)];
    EXPECT_TRUE(p.wait(timeout + 20)) << "rank " << r << " still runs\n" << p.describe();
    all += "==== rank " + std::to_string(r) + ": " + p.describe();
  }
  const Proc& t = *ranks[thrower];
  EXPECT_EQ(t.exit_code, 1) << all;
  EXPECT_TRUE(contains(t.err, "fault_probe: rank 1: the op threw")) << all;
  for (int r = 0; r < P; ++r) {
    if (r == thrower) continue;
    const Proc& p = *ranks[static_cast<std::size_t>(r)];
    EXPECT_EQ(p.exit_code, 1) << "rank " << r << "\n" << all;
    EXPECT_EQ(rank_named(p.err, r), thrower) << "rank " << r << "\n" << all;
    EXPECT_LT(p.seconds, timeout / 2.0) << "rank " << r << " waited for the timeout\n" << all;
  }
}

// No rank dies, but on rank 1 one thread stops calling the team barriers the other calls (ranks
// started by hand): the waiting thread ends rank 1's process once the team's wait limit
// (COMPAS_TIMEOUT + 2 s) has passed, naming the thread that did not arrive, instead of hanging for
// ever; every other rank, waiting for rank 1 in the final hybrid barrier, ends with an error too.
TEST(BarrierSkipped, TheWaitingThreadEndsItsProcessNamingTheAbsentThread) {
  const int P = 3, skipper = 1, timeout = 3;
  ManualJob job(FAULT_PROBE_EXE, P,
                {{"COMPAS_TIMEOUT", std::to_string(timeout)},
                 {"COMPAS_THREADS", "2"},
                 {"COMPAS_OVERSUBSCRIBED", "1"}});
  std::vector<std::unique_ptr<Proc>> ranks;
  for (int r = 0; r < P; ++r)
    ranks.push_back(job.start(r, {"barrier-skipped", std::to_string(skipper)}));
  std::string all;
  for (int r = 0; r < P; ++r) {
    auto& p = *ranks[static_cast<std::size_t>(r)];
    EXPECT_TRUE(p.wait(timeout + 30)) << "rank " << r << " still runs\n" << p.describe();
    all += "==== rank " + std::to_string(r) + ": " + p.describe();
  }
  const Proc& s = *ranks[skipper];
  EXPECT_EQ(s.exit_code, 1) << all;
  EXPECT_TRUE(contains(s.err,
                       "compas: rank 1: team barrier: thread 1 did not arrive within 5 s "
                       "(COMPAS_TIMEOUT 3 s + 2 s) while thread 0 of 2 waited"))
      << all;
  for (int r = 0; r < P; ++r) {
    if (r == skipper) continue;
    const Proc& p = *ranks[static_cast<std::size_t>(r)];
    EXPECT_EQ(p.exit_code, 1) << "rank " << r << "\n" << all;
    EXPECT_TRUE(contains(p.err, "fault_probe: rank " + std::to_string(r) + ": ")) << all;
  }
}

// A window destroyed by its owner while another process still uses it: the owner's collective
// destruction gives up after the timeout (and keeps the memory registered, so nothing is written
// into freed memory); the user's next put, get or atomic on it fails at the initiator with an
// error naming the owner. Both with load/store access (same host) and with UCX RMA.
class WindowFreed : public ::testing::TestWithParam<const char*> {};

TEST_P(WindowFreed, TheInitiatorGetsAnErrorNamingTheOwner) {
  const int P = 2, owner = 1;
  ManualJob job(FAULT_PROBE_EXE, P,
                {{"COMPAS_TIMEOUT", "3"},
                 {"COMPAS_THREADS", "1"},
                 {"COMPAS_DIRECT", GetParam()},
                 {"COMPAS_OVERSUBSCRIBED", "1"}});
  std::vector<std::unique_ptr<Proc>> ranks;
  for (int r = 0; r < P; ++r)
    ranks.push_back(job.start(r, {"window-freed", std::to_string(owner)}));
  std::string all;
  for (int r = 0; r < P; ++r) {
    auto& p = *ranks[static_cast<std::size_t>(r)];
    EXPECT_TRUE(p.wait(30)) << "rank " << r << " still runs\n" << p.describe();
    all += "==== rank " + std::to_string(r) + ": " + p.describe();
  }
  const Proc& user = *ranks[0];
  const Proc& freer = *ranks[owner];
  EXPECT_EQ(user.exit_code, 1) << all;
  EXPECT_TRUE(contains(user.err, "fault_probe: rank 0: window ")) << all;
  EXPECT_TRUE(contains(user.err, " of rank 1 was freed while this process was still using it"))
      << all;
  EXPECT_LT(user.seconds, 3 + 5.0) << all;
  EXPECT_TRUE(contains(freer.err, "destroyed without every process")) << all;
  EXPECT_TRUE(contains(freer.err, "fault_probe: rank 1: destroyed its window alone")) << all;
  // Its final barrier fails: rank 0 is gone.
  EXPECT_EQ(freer.exit_code, 1) << all;
  EXPECT_EQ(freer.term_signal, 0) << all;
}

INSTANTIATE_TEST_SUITE_P(, WindowFreed, ::testing::Values("1", "0"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           return std::string(info.param[0] == '1' ? "LoadStore" : "Rma");
                         });

// The line "fault_probe: rank R: ..." of `err`, or "".
std::string rank_line(const std::string& err, int rank) {
  for (const auto& line : lines_of(err))
    if (line.rfind("fault_probe: rank " + std::to_string(rank) + ": ", 0) == 0) return line;
  return "";
}

// No rank dies, but one stops calling the Comm's barriers, which are two-level (every process on
// one host, COMPAS_PROCESS_BARRIER=host) under compas-run: the others end after COMPAS_TIMEOUT
// naming the rank that did not arrive and its host (before: "waiting for peers: the host
// barrier's release", no rank named), whether it is the host's leader (rank 0) or not.
class HostBarrierSkipped : public ::testing::TestWithParam<int> {};

TEST_P(HostBarrierSkipped, TheOthersNameTheRankThatDidNotArrive) {
  const int skipper = GetParam(), timeout = 3;
  Proc run({COMPAS_RUN_EXE, "-n", "3", "-t", "1", FAULT_PROBE_EXE, "host-barrier-skipped",
            std::to_string(skipper)},
           {{"COMPAS_TIMEOUT", std::to_string(timeout)}, {"COMPAS_PROCESS_BARRIER", "host"}});
  ASSERT_TRUE(run.wait(timeout + 40)) << run.describe();
  EXPECT_EQ(run.exit_code, 1) << run.describe();
  EXPECT_EQ(count_of(run.out, ": barrier host"), 3) << "not the two-level barrier\n"
                                                    << run.describe();
  // compas-run ends the job once the first survivor fails: the other may not have spoken, or may
  // have seen that survivor leave first (then it names that survivor).
  const std::string absent = "rank " + std::to_string(skipper) + " did not arrive, on host '";
  int named = 0;
  for (int r = 0; r < 3; ++r) {
    const std::string line = rank_line(run.err, r);
    if (r == skipper || line.empty()) continue;
    const int other = 3 - r - skipper;
    if (contains(line, absent))
      ++named;
    else
      EXPECT_TRUE(contains(line.substr(std::string("fault_probe: rank 0: ").size()),
                           "rank " + std::to_string(other)))
          << line;
  }
  EXPECT_GE(named, 1) << run.describe();
}

INSTANTIATE_TEST_SUITE_P(, HostBarrierSkipped, ::testing::Values(0, 1, 2),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return "rank" + std::to_string(info.param);
                         });

// Calls with a caller's operator whose payloads split into different numbers of chunks (the
// victim passes 100000 int32_t, the others 100000 double) under compas-run: every rank ends with
// the same error naming both calls, long before COMPAS_TIMEOUT (30 s). Before, the ranks that
// saw the difference threw at once and the others waited for the timeout; in exclusive_scan on 3
// processes with rank 2 differing, rank 1 (which never exchanges with rank 2) returned normally.
struct Differ {
  const char* phase;
  const char* call;
  int processes;
  int victim;
};

void PrintTo(const Differ& d, std::ostream* os) {
  *os << d.call << " on " << d.processes << " processes, rank " << d.victim << " differs";
}

class UserOpDiffers : public ::testing::TestWithParam<Differ> {};

TEST_P(UserOpDiffers, EveryRankNamesBothCallsLongBeforeTheTimeout) {
  const Differ d = GetParam();
  const int timeout = 30;
  Proc run({COMPAS_RUN_EXE, "-n", std::to_string(d.processes), "-t", "1", FAULT_PROBE_EXE, d.phase,
            std::to_string(d.victim)},
           {{"COMPAS_TIMEOUT", std::to_string(timeout)}});
  ASSERT_TRUE(run.wait(timeout + 30)) << run.describe();
  EXPECT_LT(run.seconds, timeout / 2.0) << "the job waited for the timeout\n" << run.describe();
  EXPECT_EQ(run.exit_code, 1) << run.describe();
  const std::string first = rank_line(run.err, 0);
  EXPECT_TRUE(contains(first, std::string("fault_probe: rank 0: ") + d.call + " (call #"))
      << run.describe();
  EXPECT_TRUE(contains(first, "rank 0 passes double with ")) << first;
  EXPECT_TRUE(contains(first, "rank " + std::to_string(d.victim) + " passes int with ")) << first;
  const std::string error = first.substr(std::string("fault_probe: rank 0: ").size());
  for (int r = 1; r < d.processes; ++r)
    EXPECT_EQ(rank_line(run.err, r), "fault_probe: rank " + std::to_string(r) + ": " + error)
        << run.describe();
}

INSTANTIATE_TEST_SUITE_P(, UserOpDiffers,
                         ::testing::Values(Differ{"user-op-differs", "allreduce", 2, 1},
                                           Differ{"user-op-differs", "allreduce", 3, 1},
                                           Differ{"user-scan-differs", "exclusive_scan", 2, 1},
                                           Differ{"user-scan-differs", "exclusive_scan", 3, 2}),
                         [](const ::testing::TestParamInfo<Differ>& info) {
                           return std::string(info.param.call) + "_p" +
                                  std::to_string(info.param.processes) + "_rank" +
                                  std::to_string(info.param.victim);
                         });

}  // namespace

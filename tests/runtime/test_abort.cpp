// Ending a whole job from one process: Runtime::abort from a thread that is not the main one, and
// an uncaught CollectiveError from a DistArray whose shape differs on one rank. Each runs as a
// 3-process compas-run job (abort_probe is every rank's program): every process ends, long before
// COMPAS_TIMEOUT, with the job's status the one asked for and one line on stderr. The abort also
// runs in a job started by hand, where no launcher ends the others.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "../common/proc.hpp"

#ifndef ABORT_PROBE_EXE
#error "ABORT_PROBE_EXE must name the abort_probe executable"
#endif
#ifndef COMPAS_RUN_EXE
#error "COMPAS_RUN_EXE must name the compas-run executable"
#endif

namespace {

using namespace compas::testing;

constexpr int kTimeout = 60;  // COMPAS_TIMEOUT of these jobs: a wait that gives up is not the end

// The job `mode` of abort_probe over 3 processes, started; `marker` finds its processes.
std::unique_ptr<Proc> start_job(const std::string& mode, const std::string& marker) {
  return std::make_unique<Proc>(
      std::vector<std::string>{COMPAS_RUN_EXE, "-n", "3", "-t", "1", ABORT_PROBE_EXE, mode, marker},
      Env{{"COMPAS_TIMEOUT", std::to_string(kTimeout)}});
}

TEST(Abort, FromAThreadOfRank1EndsEveryProcessWithItsCode) {
  const std::string marker = unique_marker();
  const auto run = start_job("abort", marker);
  ASSERT_TRUE(run->wait(kTimeout / 2)) << "the job still runs\n" << run->describe();
  EXPECT_EQ(run->exit_code, 3) << run->describe();
  EXPECT_EQ(count_of(run->err, "compas: process 1: x\n"), 1) << run->describe();
  EXPECT_EQ(count_of(run->err, "compas: process"), 1) << run->describe();
  EXPECT_EQ(count_of(run->err, "returned"), 0) << run->describe();
  EXPECT_TRUE(none_left(marker, 5)) << "ranks of the job are still running\n" << run->describe();
}

TEST(UncaughtCollectiveError, OneLineNamingBothRanksAndStatus1) {
  const std::string marker = unique_marker();
  const auto run = start_job("shape", marker);
  ASSERT_TRUE(run->wait(kTimeout / 2)) << "the job still runs\n" << run->describe();
  EXPECT_EQ(run->exit_code, 1) << run->describe();
  EXPECT_EQ(count_of(run->err,
                     "compas: process 0: DistArray: the processes made different "
                     "arrays: rank 0 a 1-D [0, 10)"),
            1)
      << run->describe();
  EXPECT_TRUE(contains(run->err, ", rank 1 a 1-D [0, 12)")) << run->describe();
  EXPECT_EQ(count_of(run->err, "compas: process"), 1) << run->describe();
  EXPECT_EQ(count_of(run->err, "terminate called"), 0) << run->describe();
  EXPECT_EQ(count_of(run->err, "what():"), 0) << run->describe();
  EXPECT_EQ(count_of(run->err, "backtrace"), 0) << run->describe();
  EXPECT_EQ(count_of(run->err, "Aborted"), 0) << run->describe();
  EXPECT_TRUE(none_left(marker, 5)) << "ranks of the job are still running\n" << run->describe();
}

// A group's error is said by the group's first member (here rank 2, group rank 0), not by rank 0
// (outside the group, waiting in a barrier): one line, status 1, every process ended.
TEST(UncaughtCollectiveError, OnAGroupSaidByItsFirstMember) {
  const std::string marker = unique_marker();
  const auto run = start_job("group", marker);
  ASSERT_TRUE(run->wait(kTimeout / 2)) << "the job still runs\n" << run->describe();
  EXPECT_EQ(run->exit_code, 1) << run->describe();
  EXPECT_EQ(count_of(run->err,
                     "compas: process 2: compas::broadcast on the group of processes {2, 1}: "
                     "group rank 0 (process 2) passes 2 elements, group rank 1 (process 1) "
                     "passes 3"),
            1)
      << run->describe();
  EXPECT_EQ(count_of(run->err, "compas: process"), 1) << run->describe();
  EXPECT_EQ(count_of(run->err, "terminate called"), 0) << run->describe();
  EXPECT_TRUE(none_left(marker, 5)) << "ranks of the job are still running\n" << run->describe();
}

// The same abort in a job started by hand (no launcher to end the others): rank 1 ends with status
// 3 and its line; ranks 0 and 2, waiting for rank 1 in the barrier, see it gone (a CommError
// naming rank 1) and, once no launcher has ended them, end with status 1 and one line each
// naming rank 1, long before COMPAS_TIMEOUT; no 'terminate called', no SIGABRT.
TEST(Abort, StartedByHandTheOthersEndNamingTheRankThatAborted) {
  const int P = 3;
  ManualJob job(ABORT_PROBE_EXE, P,
                {{"COMPAS_TIMEOUT", std::to_string(kTimeout)},
                 {"COMPAS_THREADS", "1"},
                 {"COMPAS_OVERSUBSCRIBED", "1"}});
  std::vector<std::unique_ptr<Proc>> ranks;
  for (int r = 0; r < P; ++r) ranks.push_back(job.start(r, {"abort"}));
  std::string all;
  for (int r = 0; r < P; ++r) {
    auto& p = *ranks[static_cast<std::size_t>(r)];
    EXPECT_TRUE(p.wait(kTimeout / 2)) << "rank " << r << " still runs\n" << p.describe();
    all += "==== rank " + std::to_string(r) + ": " + p.describe();
  }
  EXPECT_EQ(ranks[1]->exit_code, 3) << all;
  EXPECT_EQ(count_of(ranks[1]->err, "compas: process 1: x\n"), 1) << all;
  for (int r : {0, 2}) {
    const Proc& p = *ranks[static_cast<std::size_t>(r)];
    EXPECT_EQ(p.exit_code, 1) << "rank " << r << "\n" << all;
    EXPECT_EQ(count_of(p.err, "compas: process " + std::to_string(r) + ": "), 1) << all;
    EXPECT_TRUE(contains(p.err, "rank 1 is unreachable")) << "rank " << r << "\n" << all;
    EXPECT_EQ(count_of(p.err, "terminate called"), 0) << all;
  }
}

}  // namespace

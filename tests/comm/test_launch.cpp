// Tests of compas-run across real processes: bootstrap_probe is the program every rank runs.
// Every wait has a deadline; a process still running at the end of a test is killed with its
// process group. Ranks started by hand are in test_tcp_ranks.cpp.

#include "launch_test.hpp"

namespace {

using namespace launch_test;

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
  EXPECT_EQ(processes_with(marker).size(), 5u);  // compas-run, its guardian and its 3 ranks
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
      {{"-n", "2", "--timeout", "0x10", kProbe}, "--timeout '0x10'"},
      {{"-n", "2", "--timeout", " 5", kProbe}, "--timeout ' 5'"},
      {{"-n", "0x2", kProbe}, "-n '0x2'"},
      {{"-n", "2", "-t", " 2", kProbe}, "-t ' 2'"},
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

}  // namespace

// Tests of the `compas` command line, run as a user runs it (cli.hpp): how `compas study` stops
// its runs: at their timeout, on Ctrl-C and SIGTERM, when the study itself is killed, and what a
// run leaves running. Sizes are tiny; no test passes or fails on a measured time or rate.
#include "study_runs_helpers.hpp"

namespace {

using namespace cli;
using namespace cli_study;

// A hanging run is stopped at --run-timeout (SIGTERM, which it ignores, then SIGKILL) and
// recorded as failed; the runs after it still run.
TEST_F(Cli, StudyRunTimeoutStopsAHangingRunAndTheSweepGoesOn) {
  const std::string out = path("study"), slow = slow_rank(dir_);
  KillLeftovers cleanup{slow};
  seed_characterization_done(out);
  const std::string launcher = write_script(dir_, "launch.sh",
                                            R"(p=$1; shift
case "$p $*" in
  "2 "*"--n 640"*) echo "hanging now"; trap '' TERM; exec )" +
                                                slow + R"( 300 ;;
esac
)" + kFinishedRun);
  auto command = study_command(out, launcher + " {P}", "1x1,2x1");
  command.insert(command.end(), {"--run-timeout", "2"});
  compas::testing::Proc study(command, {});
  ASSERT_TRUE(study.wait(60)) << "the study hangs\n" << study.describe();
  ASSERT_EQ(study.exit_code, 0) << study.describe();
  auto runs = records_by_id(out + "/runs.jsonl");
  ASSERT_EQ(runs["laplace_n640_p2t1"].size(), 1u) << read_file(out + "/runs.jsonl");
  const json hung = runs["laplace_n640_p2t1"].back();
  EXPECT_TRUE(hung.value("failed", false)) << hung.dump();
  EXPECT_EQ(hung.value("reason", ""), "timed out after 2 s") << hung.dump();
  EXPECT_EQ(hung.value("exit", 0), 128 + SIGKILL) << "SIGTERM was ignored: " << hung.dump();
  EXPECT_NE(hung.value("log_tail", "").find("hanging now"), std::string::npos) << hung.dump();
  for (const char* id : {"laplace_n640_p1t1", "laplace_n1024_p1t1", "laplace_n1024_p2t1"}) {
    ASSERT_EQ(runs[id].size(), 1u) << id << "\n" << read_file(out + "/runs.jsonl");
    EXPECT_EQ(runs[id].back().value("exit", -1), 0) << runs[id].back().dump();
    EXPECT_FALSE(runs[id].back().contains("failed")) << runs[id].back().dump();
  }
  const std::string md = read_file(out + "/report.md");
  for (const char* part : {"## Failed runs", "### laplace n=640 on 2 x 1", "timed out after 2 s",
                           "logs/laplace_n640_p2t1.log", "hanging now"})
    EXPECT_NE(md.find(part), std::string::npos) << part << " missing\n" << md;
  EXPECT_NE(study.err.find("1 run failed"), std::string::npos) << study.describe();
  EXPECT_TRUE(compas::testing::none_left(slow, 10)) << "the timed-out run is still there";
}

// The first Ctrl-C is forwarded to the run, which goes on (its shell traps SIGINT, its sleep
// ignores it); the second kills the run's process group at once and the study ends with its
// partial report.
TEST_F(Cli, StudySecondInterruptKillsARunThatIgnoresTheFirst) {
  const std::string out = path("study"), slow = slow_rank(dir_), got = path("got-sigint");
  KillLeftovers cleanup{slow};
  seed_characterization_done(out);
  const std::string launcher =
      write_script(dir_, "launch.sh", "trap 'echo INT >> " + got + "' INT\n" + slow + R"( 300 &
while :; do wait $!; [ $? -gt 128 ] || exit 0; done
)");
  compas::testing::Proc study(study_command(out, launcher + " {P}", "1x1"), {});
  ASSERT_TRUE(eventually([&] { return !compas::testing::processes_with(slow).empty(); }))
      << "the run did not start\n"
      << study.describe();
  study.signal(SIGINT);
  ASSERT_TRUE(eventually([&] { return fs::exists(got); }))
      << "the first SIGINT did not reach the run";
  EXPECT_FALSE(study.wait(0.5)) << "the study ended on the first SIGINT\n" << study.describe();
  study.signal(SIGINT);
  ASSERT_TRUE(study.wait(30)) << "the second SIGINT did not stop the study";
  EXPECT_EQ(study.exit_code, 130) << study.describe();
  EXPECT_NE(read_file(out + "/report.md").find("Partial report"), std::string::npos);
  EXPECT_TRUE(compas::testing::none_left(slow, 10)) << "the run outlived the study";
  // A run stopped on request did not fail: it is not recorded, and runs again next time.
  EXPECT_FALSE(records_by_id(out + "/runs.jsonl").count("laplace_n640_p1t1"));
}

// SIGTERM (a batch system's stop) ends the study as a shell reports that signal: 143, not
// Ctrl-C's 130, with its partial report.
TEST_F(Cli, StudyStoppedBySigtermExits143) {
  const std::string out = path("study"), slow = slow_rank(dir_);
  KillLeftovers cleanup{slow};
  seed_characterization_done(out);
  const std::string launcher = write_script(dir_, "launch.sh", "trap '' INT\n" + slow + R"( 300 &
while :; do wait $!; [ $? -gt 128 ] || exit 0; done
)");
  compas::testing::Proc study(study_command(out, launcher + " {P}", "1x1"), {});
  ASSERT_TRUE(eventually([&] { return !compas::testing::processes_with(slow).empty(); }))
      << "the run did not start\n"
      << study.describe();
  study.signal(SIGTERM);
  EXPECT_FALSE(study.wait(0.5)) << "the study ended on the first SIGTERM\n" << study.describe();
  study.signal(SIGTERM);
  ASSERT_TRUE(study.wait(30)) << "the second SIGTERM did not stop the study";
  EXPECT_EQ(study.exit_code, 143) << study.describe();
  EXPECT_NE(read_file(out + "/report.md").find("Partial report"), std::string::npos);
  EXPECT_TRUE(compas::testing::none_left(slow, 10)) << "the run outlived the study";
}

// SIGKILL gives the study no chance to stop its run: the run (compas-run and its ranks) must die
// with it all the same.
TEST_F(Cli, StudyKilledTakesItsRunWithIt) {
  const std::string out = path("study"), slow = slow_rank(dir_);
  KillLeftovers cleanup{slow};
  seed_characterization_done(out);
  const std::string launcher = write_script(
      dir_, "launch.sh", std::string("exec ") + COMPAS_RUN_EXE + " -n 2 -t 1 " + slow + " 300\n");
  compas::testing::Proc study(study_command(out, launcher + " {P}", "2x1"), {});
  // compas-run, its guardian and its two ranks.
  ASSERT_TRUE(eventually([&] { return compas::testing::processes_with(slow).size() == 4; }))
      << study.describe();
  study.signal(SIGKILL);
  ASSERT_TRUE(study.wait(10));
  EXPECT_TRUE(compas::testing::none_left(slow, 10))
      << compas::testing::processes_with(slow).size() << " processes of the run outlived the study";
}

// A run that leaves a process behind outside its process group (`setsid slow-rank &`, under
// compas-run and around it), then ends ok: once the study is over, none of them is left; the
// run's log names what was ended.
TEST_F(Cli, StudyEndsWhatItsRunsStartedWithSetsid) {
  const std::string out = path("study"), slow = slow_rank(dir_);
  KillLeftovers cleanup{slow};
  seed_characterization_done(out);
  // Each waits until its detached process has a session of its own.
  const std::string detach = "setsid " + slow + R"sh( 1000 & p=$!
until [ "$(cut -d' ' -f6 /proc/$p/stat 2>/dev/null)" = "$p" ]; do sleep 0.01; done
)sh";
  const std::string rank = write_script(dir_, "rank.sh", detach);
  const std::string launcher =
      write_script(dir_, "launch.sh", detach + COMPAS_RUN_EXE + " -n 2 -t 1 " + rank + "\n");
  const Outcome r = run_compas(study_args(out, launcher + " {P}", "1x1"));
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_TRUE(compas::testing::none_left(slow, 5))
      << compas::testing::processes_with(slow).size() << " processes of the runs outlived them";
  // The launcher's own detached process is the study's to end; compas-run ends its ranks'.
  const std::string log = read_file(out + "/logs/laplace_n640_p1t1.log");
  EXPECT_NE(log.find("compas study: ended 1 process the run left running: "), std::string::npos)
      << log;
  EXPECT_NE(log.find("compas-run: ended 2 processes the job left running: "), std::string::npos)
      << log;
}

}  // namespace

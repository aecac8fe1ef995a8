// compas-run and the processes of a job that leave the job's process group: a rank that calls
// setsid, and what a rank starts with `setsid CMD &`. compas-run signals its ranks by pid as well
// as by group, and is the subreaper of the job, so that nothing of the job outlives it. Every
// process of a job carries the variable LAUNCH_TEST_MARKER (a value unique to the test) in its
// environment: the test looks for it in /proc/*/environ, and kills what it finds at its end.
// compas-run itself killed with SIGKILL: its guardian ends what the job left, nothing else.
#include "launch_test.hpp"

namespace {

using namespace launch_test;

constexpr const char* kMarkerVar = "LAUNCH_TEST_MARKER";

// A test's marker, and the processes that still carry it killed at the end of the test.
struct Marked {
  std::string value = unique_marker();
  Env env() const { return {{kMarkerVar, value}}; }
  std::string entry() const { return std::string(kMarkerVar) + "=" + value; }
  bool none_left(double seconds) const {
    return compas::testing::none_left(entry(), seconds, "environ");
  }
  std::string left() const {
    std::string out;
    for (const pid_t pid : processes_with(entry(), "environ"))
      out += std::to_string(pid) + " " + read_proc_file("/proc/" + std::to_string(pid) + "/comm");
    return out;
  }
  ~Marked() {
    for (const pid_t pid : processes_with(entry(), "environ")) ::kill(pid, SIGKILL);
  }
};

// The job ends in time: well before the 30 s the sleep of its ranks would take.
constexpr double kHang = 15;

// `setsid sleep`: rank 1 calls setsid itself and becomes sleep in a session of its own; rank 0,
// the leader of the job's group, cannot, so setsid forks, its child carries on detached and rank
// 0 exits 0 at once. Neither is in the job's group any more.
TEST(LaunchLeftovers, TimeoutStopsRanksThatLeftTheJobsGroup) {
  const Marked m;
  auto p = compas_run({"--timeout", "2", "-n", "2", "setsid", "sleep", "30"}, m.env());
  ASSERT_TRUE(p->wait(kHang)) << "compas-run did not stop the job in " << kHang << " s\n"
                              << p->describe();
  EXPECT_EQ(p->exit_code, 124) << p->describe();
  EXPECT_TRUE(contains(p->err, "compas-run: timed out after 2 s")) << p->describe();
  EXPECT_TRUE(m.none_left(3)) << "left:\n" << m.left() << p->describe();
}

// Ranks that left the group and ignore SIGINT and SIGTERM: the first Ctrl-C is forwarded to them
// (and ignored), the second kills them.
TEST(LaunchLeftovers, SecondInterruptKillsRanksThatLeftTheJobsGroup) {
  const Marked m;
  auto p = compas_run(
      {"-n", "2", "setsid", "sh", "-c", "trap '' INT TERM; echo ready; exec sleep 30"}, m.env());
  ASSERT_TRUE(p->wait_for_output("ready", 2, 20)) << p->describe();
  p->signal(SIGINT);
  EXPECT_FALSE(p->wait(0.5)) << "the job ended on the first SIGINT\n" << p->describe();
  p->signal(SIGINT);
  ASSERT_TRUE(p->wait(kHang)) << "compas-run did not end the job after a second SIGINT\n"
                              << p->describe();
  EXPECT_EQ(p->exit_code, 128 + SIGINT) << p->describe();
  EXPECT_TRUE(m.none_left(3)) << "left:\n" << m.left() << p->describe();
}

// Each rank starts `setsid sleep 1000 &`, waits until it has its own session, and exits 0: the
// job ends ok and the two detached sleeps end with it (SIGTERM), named on compas-run's stderr.
TEST(LaunchLeftovers, NothingARankStartedWithSetsidOutlivesTheJob) {
  const Marked m;
  const std::string rank =
      "setsid sleep 1000 & p=$!\n"
      "until [ \"$(cut -d' ' -f6 /proc/$p/stat 2>/dev/null)\" = \"$p\" ]; do sleep 0.01; done\n"
      "echo detached";
  auto p = compas_run({"-n", "2", "sh", "-c", rank}, m.env());
  ASSERT_TRUE(p->wait(kHang)) << p->describe();
  EXPECT_EQ(p->exit_code, 0) << p->describe();
  EXPECT_EQ(count_of(p->out, "detached"), 2) << p->describe();
  EXPECT_TRUE(contains(p->err, "compas-run: ended 2 processes the job left running: "))
      << p->describe();
  EXPECT_TRUE(m.none_left(3)) << "left:\n" << m.left() << p->describe();
}

// A rank that starts a detached process that ignores SIGTERM, then fails: the job ends with the
// rank's status, and the detached process is killed after the grace. The rank fails only once the
// process runs `sleep` in its own session: it ignored SIGTERM before that exec (else compas-run's
// SIGTERM could end it before the trap, and nothing would be left to kill).
TEST(LaunchLeftovers, DetachedProcessIgnoringSigtermIsKilled) {
  const Marked m;
  const std::string rank =
      "setsid sh -c \"trap '' TERM; exec sleep 1000\" & p=$!\n"
      "until [ \"$(cut -d' ' -f2,6 /proc/$p/stat 2>/dev/null)\" = \"(sleep) $p\" ]; do\n"
      "  sleep 0.01\n"
      "done\n"
      "exit 3";
  auto p = compas_run({"-n", "1", "sh", "-c", rank}, m.env());
  ASSERT_TRUE(p->wait(kHang)) << p->describe();
  EXPECT_EQ(p->exit_code, 3) << p->describe();
  EXPECT_TRUE(contains(p->err, "compas-run: ended 1 process the job left running: "))
      << p->describe();
  EXPECT_TRUE(m.none_left(3)) << "left:\n" << m.left() << p->describe();
}

// A rank that detaches processes ignoring SIGTERM and SIGHUP: one by a double fork (re-parented
// to compas-run, the subreaper), one its own child. compas-run is killed with SIGKILL: the ranks
// die of PDEATHSIG, the detached ones are re-parented to init, and compas-run's guardian finds them
// by the job's token and ends them. Bystanders carrying a similar but different entry (the token
// with a character more, the token under another name) are left alone.
TEST(LaunchLeftovers, NothingOfTheJobOutlivesCompasRunKilledWithSigkill) {
  const Marked m;
  const std::string rank =
      "detach() { setsid sh -c \"trap '' TERM HUP; exec sleep 300\" & p=$!\n"
      "  until [ \"$(cut -d' ' -f6 /proc/$p/stat 2>/dev/null)\" = \"$p\" ]; do sleep 0.01; done; "
      "}\n"
      "( detach ); detach\n"
      "echo \"token=$COMPAS_JOB_TOKEN.\"; echo ready; exec sleep 300";
  auto p = compas_run({"-n", "2", "sh", "-c", rank}, m.env());
  ASSERT_TRUE(p->wait_for_output("ready", 2, 20)) << p->describe();
  const auto from = p->out.find("token=");
  const auto dot = p->out.find('.', from);
  ASSERT_NE(dot, std::string::npos) << p->describe();
  const std::string token = p->out.substr(from + 6, dot - from - 6);
  ASSERT_FALSE(token.empty()) << p->describe();
  const std::vector<std::string> sleep = {"/bin/sh", "-c", "trap '' TERM HUP; exec sleep 300"};
  Proc longer(sleep, {{"COMPAS_JOB_TOKEN", token + "0"}});
  Proc renamed(sleep, {{"X_COMPAS_JOB_TOKEN", token}});
  EXPECT_GE(processes_with(m.entry(), "environ").size(), 7u)  // compas-run, 2 ranks, 4 detached
      << m.left() << p->describe();
  p->signal(SIGKILL);
  ASSERT_TRUE(p->wait(kHang)) << p->describe();
  EXPECT_EQ(p->term_signal, SIGKILL) << p->describe();
  EXPECT_TRUE(m.none_left(kHang)) << "left:\n" << m.left() << p->describe();
  EXPECT_FALSE(longer.wait(0.1)) << "a bystander (the token with a character more) was ended";
  EXPECT_FALSE(renamed.wait(0.1)) << "a bystander (the token under another name) was ended";
}

}  // namespace

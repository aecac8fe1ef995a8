// base::other_children and base::end_other_children on real processes: a child that leaves behind
// a grandchild in a session of its own (setsid) and ends; as the subreaper, this process inherits
// the grandchild, finds it and ends it, and leaves alone the children it was told to keep.
// base::end_processes_carrying ends the processes whose environment holds an entry, and no other.
#include "compas/base/children.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;

// Forks a child that forks a grandchild (setsid, then sleeps until a signal; with `ignore_term`
// it ignores SIGTERM) and exits at once. Returns the grandchild's pid once the child is reaped.
pid_t leave_a_detached_grandchild(bool ignore_term) {
  int fds[2];
  if (::pipe(fds) != 0) return -1;
  const pid_t child = ::fork();
  if (child == 0) {
    if (::fork() == 0) {  // the grandchild says its pid once it has left the session
      ::setsid();
      if (ignore_term) ::signal(SIGTERM, SIG_IGN);
      const pid_t me = ::getpid();
      [[maybe_unused]] auto n = ::write(fds[1], &me, sizeof me);
      for (;;) ::pause();
    }
    ::_exit(0);
  }
  ::close(fds[1]);
  pid_t grandchild = -1;
  if (::read(fds[0], &grandchild, sizeof grandchild) != sizeof grandchild) grandchild = -1;
  ::close(fds[0]);
  ::waitpid(child, nullptr, 0);
  return grandchild;
}

class Children : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!compas::base::set_subreaper(true)) GTEST_SKIP() << "PR_SET_CHILD_SUBREAPER refused";
  }
  void TearDown() override {
    for (const pid_t pid : compas::base::other_children({})) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
    compas::base::set_subreaper(false);
  }
};

TEST_F(Children, TheSubreaperInheritsADetachedGrandchildAndEndsIt) {
  EXPECT_TRUE(compas::base::is_subreaper());
  const pid_t grandchild = leave_a_detached_grandchild(false);
  ASSERT_GT(grandchild, 0);
  const auto found = compas::base::other_children({});
  ASSERT_EQ(found, std::vector<pid_t>{grandchild});
  const auto ended = compas::base::end_other_children({}, 5s);
  ASSERT_EQ(ended.size(), 1u);
  EXPECT_EQ(ended[0].rfind(std::to_string(grandchild) + " (", 0), 0u) << ended[0];
  EXPECT_TRUE(compas::base::other_children({}).empty());
  EXPECT_NE(::kill(grandchild, 0), 0) << "the grandchild is still there";
}

// One that ignores SIGTERM gets SIGKILL after the grace; a kept child is neither signalled nor
// reaped.
TEST_F(Children, SigkillAfterTheGraceAndKeptChildrenLeftAlone) {
  const pid_t kept = ::fork();
  if (kept == 0) {
    for (;;) ::pause();
  }
  ASSERT_GT(kept, 0);
  const pid_t grandchild = leave_a_detached_grandchild(true);
  ASSERT_GT(grandchild, 0);
  auto found = compas::base::other_children({kept});
  EXPECT_EQ(found, std::vector<pid_t>{grandchild});
  EXPECT_EQ(compas::base::end_other_children({kept}, 100ms).size(), 1u);
  EXPECT_NE(::kill(grandchild, 0), 0) << "the grandchild ignoring SIGTERM is still there";
  int status = 0;
  EXPECT_EQ(::waitpid(kept, &status, WNOHANG), 0) << "the kept child was ended or reaped";
  ::kill(kept, SIGKILL);
  EXPECT_EQ(::waitpid(kept, &status, 0), kept);
}

// A child that runs `sh -c SCRIPT` with `entry` as its whole environment (and PATH).
pid_t start_with_entry(const std::string& entry, const char* script) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    const char* argv[] = {"/bin/sh", "-c", script, nullptr};
    const char* envp[] = {entry.c_str(), "PATH=/usr/bin:/bin", nullptr};
    ::execve(argv[0], const_cast<char**>(argv), const_cast<char**>(envp));
    ::_exit(127);
  }
  return pid;
}

// Two processes carry the entry, one of them ignoring SIGTERM; three bystanders carry one like
// it (a character more, a character less, under another name). The two are ended, the second
// with SIGKILL after the grace; the bystanders are left alone.
TEST(ProcessesCarrying, EndsThoseWhoseEnvironmentHoldsTheEntryWholeAndNoOther) {
  const std::string value =
      std::to_string(::getpid()) + "-" + std::to_string(std::random_device{}());
  const std::string entry = "COMPAS_TEST_MARK=" + value;
  const char* wait_for_term = "exec sleep 300";
  const char* ignore_term = "trap '' TERM; exec sleep 300";
  const std::vector<pid_t> marked = {start_with_entry(entry, wait_for_term),
                                     start_with_entry(entry, ignore_term)};
  const std::vector<pid_t> bystanders = {
      start_with_entry(entry + "0", wait_for_term),
      start_with_entry(entry.substr(0, entry.size() - 1), wait_for_term),
      start_with_entry("X" + entry, wait_for_term)};
  // Each has become sleep (the trap set before) within the deadline.
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  auto sleeping = [](pid_t pid) {
    std::ifstream comm("/proc/" + std::to_string(pid) + "/comm");
    std::string name;
    return comm >> name && name == "sleep";
  };
  for (const pid_t pid : {marked[0], marked[1], bystanders[0], bystanders[1], bystanders[2]})
    while (!sleeping(pid) && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(10ms);
  auto found = compas::base::processes_carrying(entry);
  std::sort(found.begin(), found.end());
  EXPECT_EQ(found, marked);
  const auto ended = compas::base::end_processes_carrying(entry, 200ms);
  EXPECT_EQ(ended.size(), 2u);
  int status = 0;
  ASSERT_EQ(::waitpid(marked[0], &status, 0), marked[0]);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM) << status;
  ASSERT_EQ(::waitpid(marked[1], &status, 0), marked[1]);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;
  for (const pid_t pid : bystanders) {
    EXPECT_EQ(::waitpid(pid, &status, WNOHANG), 0) << "bystander " << pid << " was ended";
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
  }
}

}  // namespace

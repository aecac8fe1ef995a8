// base::other_children and base::end_other_children on real processes: a child that leaves behind
// a grandchild in a session of its own (setsid) and ends; as the subreaper, this process inherits
// the grandchild, finds it and ends it, and leaves alone the children it was told to keep.
#include "compas/base/children.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>

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

}  // namespace

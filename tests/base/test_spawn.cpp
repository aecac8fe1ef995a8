// base/spawn.hpp: the program lookup (PATH, the reasons a candidate cannot run), what a child does
// between fork and exec (its group, its death with its parent, its descriptors, a clean signal
// state), the signalfd of a supervisor, and a signal to a child's group.
#include "compas/base/spawn.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace fs = std::filesystem;
using compas::base::ChildSetup;
using compas::base::find_program;

namespace {

// PATH set for the scope of a test.
class ScopedPath {
 public:
  explicit ScopedPath(const std::string& value) {
    if (const char* old = std::getenv("PATH")) old_ = old, had_ = true;
    ::setenv("PATH", value.c_str(), 1);
  }
  ~ScopedPath() {
    if (had_)
      ::setenv("PATH", old_.c_str(), 1);
    else
      ::unsetenv("PATH");
  }

 private:
  std::string old_;
  bool had_ = false;
};

class SpawnDir : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "compas-spawn.XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string file(const std::string& name, fs::perms mode) const {
    const fs::path p = dir_ / name;
    std::ofstream(p) << "#!/bin/sh\n";
    fs::permissions(p, mode);
    return p.string();
  }
  fs::path dir_;
};

constexpr auto kExec = fs::perms::owner_all;
constexpr auto kNoExec = fs::perms::owner_read | fs::perms::owner_write;

// Runs `child` in a forked process and returns its exit status (255 when it did not exit).
template <class F>
int in_child(F child) {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(child());
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 255;
}

}  // namespace

TEST_F(SpawnDir, AProgramIsFoundInTheFirstDirectoryOfPathThatRunsIt) {
  fs::create_directory(dir_ / "a");
  fs::create_directory(dir_ / "b");
  fs::create_directory(dir_ / "c");
  file("a/prog", kNoExec);
  const std::string b = file("b/prog", kExec);
  file("c/prog", kExec);
  ScopedPath path((dir_ / "a").string() + ":" + (dir_ / "b").string() + ":" +
                  (dir_ / "c").string());
  const auto found = find_program("prog");
  EXPECT_EQ(found.path, b);
  EXPECT_EQ(found.problem, "");
}

TEST_F(SpawnDir, WhyAProgramIsNotFoundNamesTheFirstCandidateThatCannotRun) {
  fs::create_directory(dir_ / "a");
  fs::create_directory(dir_ / "b");
  fs::create_directory(dir_ / "b" / "prog");
  file("a/prog", kNoExec);
  ScopedPath path((dir_ / "a").string() + ":" + (dir_ / "b").string());
  auto found = find_program("prog");
  EXPECT_EQ(found.path, "");
  EXPECT_EQ(found.problem, "'" + (dir_ / "a" / "prog").string() + "' is not executable");
  found = find_program("nothing-by-this-name");
  EXPECT_EQ(found.path, "");
  EXPECT_EQ(found.problem, "not found");
}

TEST_F(SpawnDir, APathWithASlashIsTakenAsItIsAndChecked) {
  const std::string ok = file("ok", kExec);
  EXPECT_EQ(find_program(ok).path, ok);
  EXPECT_EQ(find_program(file("text", kNoExec)).problem, "is not executable");
  EXPECT_EQ(find_program(dir_.string() + "/").problem, "is a directory");
  EXPECT_EQ(find_program(dir_.string() + "/missing").problem, "not found");
}

TEST_F(SpawnDir, AnEmptyEntryOfPathIsTheCurrentDirectory) {
  file("here", kExec);
  const fs::path before = fs::current_path();
  fs::current_path(dir_);
  ScopedPath path("/nonexistent-dir:");
  const auto found = find_program("here");
  fs::current_path(before);
  EXPECT_EQ(found.path, "./here");
}

TEST(Spawn, AChildLeadsItsOwnGroupDiesWithItsParentAndHasACleanSignalState) {
  sigset_t blocked, old;
  sigemptyset(&blocked);
  sigaddset(&blocked, SIGUSR1);
  ::sigprocmask(SIG_BLOCK, &blocked, &old);
  ::signal(SIGUSR2, SIG_IGN);
  ChildSetup s;
  s.parent = ::getpid();
  s.mask = old;  // SIGUSR1 is not blocked there
  const int status = in_child([&] {
    if (!compas::base::enter_child(s)) return 1;
    if (::getpgid(0) != ::getpid()) return 2;
    int sig = 0;
    if (::prctl(PR_GET_PDEATHSIG, &sig) != 0 || sig != SIGKILL) return 3;
    sigset_t now;
    ::sigprocmask(SIG_SETMASK, nullptr, &now);
    if (sigismember(&now, SIGUSR1)) return 4;
    struct sigaction a {};
    ::sigaction(SIGUSR2, nullptr, &a);
    if (a.sa_handler != SIG_DFL) return 5;
    return 0;
  });
  ::signal(SIGUSR2, SIG_DFL);
  ::sigprocmask(SIG_SETMASK, &old, nullptr);
  EXPECT_EQ(status, 0) << "1 not entered, 2 group, 3 death signal, 4 mask, 5 action";
}

TEST(Spawn, AChildJoinsTheGroupItIsGivenAndTakesItsDescriptors) {
  int p[2];
  ASSERT_EQ(::pipe(p), 0);
  ChildSetup s;
  s.parent = ::getpid();
  s.pgid = ::getpgid(0);
  s.stdout_fd = p[1];
  const int status = in_child([&] {
    if (!compas::base::enter_child(s)) return 1;
    if (::getpgid(0) != s.pgid) return 2;
    return ::write(STDOUT_FILENO, "x", 1) == 1 ? 0 : 3;
  });
  ::close(p[1]);
  char c = 0;
  EXPECT_EQ(::read(p[0], &c, 1), 1);
  ::close(p[0]);
  EXPECT_EQ(c, 'x');
  EXPECT_EQ(status, 0) << "1 not entered, 2 group, 3 stdout";
}

TEST(Spawn, AChildWhoseParentIsGoneIsNotEntered) {
  ChildSetup s;
  s.parent = ::getpid() + 100000;  // not its parent: as if the parent had ended before
  EXPECT_EQ(in_child([&] { return compas::base::enter_child(s) ? 0 : 7; }), 7);
}

TEST(Spawn, SignalsBlockedIntoTheSignalfdAreReadFromIt) {
  sigset_t old;
  const int fd = compas::base::signalfd_for({SIGUSR1}, &old);
  ASSERT_GE(fd, 0) << std::strerror(errno);
  ::raise(SIGUSR1);  // blocked: held for the signalfd instead of ending the test
  signalfd_siginfo info{};
  EXPECT_EQ(::read(fd, &info, sizeof info), static_cast<ssize_t>(sizeof info));
  EXPECT_EQ(info.ssi_signo, static_cast<unsigned>(SIGUSR1));
  ::close(fd);
  sigset_t now;
  ::sigprocmask(SIG_SETMASK, &old, &now);
  EXPECT_TRUE(sigismember(&now, SIGUSR1));
  EXPECT_FALSE(sigismember(&old, SIGUSR1));
}

TEST(Spawn, ASignalToTheGroupReachesALeaderThatLeftIt) {
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t group = ::getpgid(0);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::setpgid(0, 0);
    ::setpgid(0, group);  // leaves the group it led (now gone): only its pid reaches it
    [[maybe_unused]] auto n = ::write(ready[1], "r", 1);
    ::pause();
    ::_exit(0);
  }
  ::close(ready[1]);
  char c;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  ::close(ready[0]);
  EXPECT_TRUE(compas::base::signal_group(pid, SIGTERM));
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGTERM);
  EXPECT_FALSE(compas::base::signal_group(pid, SIGTERM));  // reaped: nothing left to signal
}

// compas-run's stdout and stderr go to a reader that stops reading (`compas-run ... 2>&1 | sleep
// 15`): the ranks write straight into the same pipe and fill it, and compas-run's own messages
// (the time limit, a failed rank, a forwarded signal) must not block its supervision. The test
// holds the pipe's read end open without reading it until the job has ended.
#include "launch_test.hpp"

namespace {

using namespace launch_test;

// compas-run with stdout and stderr both on one pipe that nobody reads.
class StalledReader {
 public:
  explicit StalledReader(const std::vector<std::string>& args) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) {
      ADD_FAILURE() << "pipe2: " << std::strerror(errno);
      return;
    }
    read_fd_ = fds[0];
    // A way to tell when the pipe is full: a write of one byte no longer fits.
    probe_fd_ = ::open(("/proc/self/fd/" + std::to_string(fds[1])).c_str(),
                       O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    std::vector<std::string> argv_s = {kRun};
    argv_s.insert(argv_s.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& s : argv_s) argv.push_back(s.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&fa, fds[1], STDERR_FILENO);
    posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    const int rc = ::posix_spawn(&pid_, argv[0], &fa, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    ::close(fds[1]);
    if (rc != 0) {
      ADD_FAILURE() << "posix_spawn: " << std::strerror(rc);
      pid_ = -1;
    }
  }
  ~StalledReader() {
    if (pid_ > 0 && status_ < 0) {  // the ranks die with compas-run (PR_SET_PDEATHSIG)
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    if (read_fd_ >= 0) ::close(read_fd_);
    if (probe_fd_ >= 0) ::close(probe_fd_);
  }
  pid_t pid() const { return pid_; }

  // Waits until the pipe is full: from then on, a write to it blocks (one of a byte fails here).
  bool wait_until_full(double seconds) const {
    const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                             std::chrono::duration<double>(seconds));
    while (probe_fd_ >= 0 && Clock::now() < deadline) {
      if (::write(probe_fd_, "x", 1) < 0 && errno == EAGAIN) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }
  // Waits up to `seconds` for compas-run to exit; its exit status, or -1 when it did not.
  int wait(double seconds) {
    const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                             std::chrono::duration<double>(seconds));
    int status = 0;
    while (Clock::now() < deadline) {
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        return status_;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return -1;
  }

 private:
  pid_t pid_ = -1;
  int read_fd_ = -1, probe_fd_ = -1;
  int status_ = -1;
};

// Well before the 15 s of `| sleep 15`, and the reader here never reads at all.
constexpr double kHang = 15;

TEST(LaunchStalledReader, TimeoutEndsTheJob) {
  StalledReader job({"--timeout", "2", "-n", "2", "yes"});
  ASSERT_TRUE(job.wait_until_full(10)) << "the ranks did not fill the pipe";
  EXPECT_EQ(job.wait(kHang), 124) << "the job did not end by its --timeout";
}

TEST(LaunchStalledReader, FailedRankEndsTheJob) {
  char dir_tmpl[] = "/tmp/compas-stalled-XXXXXX";
  ASSERT_NE(::mkdtemp(dir_tmpl), nullptr);
  const std::string go = std::string(dir_tmpl) + "/go";
  // Rank 1 fails once the pipe is full (the test creates `go`); the others fill it.
  StalledReader job({"-n", "3", "sh", "-c",
                     "if [ \"$COMPAS_RANK\" = 1 ]; then while [ ! -e " + go +
                         " ]; do sleep 0.02; done; exit 3; fi; exec yes"});
  const bool full = job.wait_until_full(10);
  std::ofstream(go).put('\n');
  EXPECT_TRUE(full) << "the ranks did not fill the pipe";
  EXPECT_EQ(job.wait(kHang), 3) << "the job did not end with the failed rank's status";
  std::filesystem::remove_all(dir_tmpl);
}

TEST(LaunchStalledReader, InterruptEndsTheJob) {
  StalledReader job({"-n", "2", "yes"});
  ASSERT_TRUE(job.wait_until_full(10)) << "the ranks did not fill the pipe";
  ::kill(job.pid(), SIGINT);
  EXPECT_EQ(job.wait(kHang), 128 + SIGINT) << "the job did not end on SIGINT";
}

}  // namespace

// Proc and the text helpers (process.hpp).
#include "process.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <sstream>

extern char** environ;

namespace compas::testing {

double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

int count_of(const std::string& text, const std::string& part) {
  int n = 0;
  for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

int cpus_available() {
  cpu_set_t set;
  CPU_ZERO(&set);
  return ::sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
}

Proc::Proc(const std::vector<std::string>& args, const Env& env, int pass_fd, int pass_as)
    : start_(Clock::now()) {
  std::vector<std::string> argv_s = args;
  std::vector<char*> argv;
  for (auto& s : argv_s) argv.push_back(s.data());
  argv.push_back(nullptr);
  // Our environment without anything that would select or configure a bootstrap.
  std::vector<std::string> env_s;
  for (char** e = environ; *e; ++e) {
    const std::string entry = *e;
    bool drop = false;
    for (const char* p : {"COMPAS_", "OMPI_", "PMI_", "PMIX_", "SLURM_"})
      drop = drop || entry.rfind(p, 0) == 0;
    if (!drop) env_s.push_back(entry);
  }
  for (const auto& [k, v] : env) {  // a later value of a variable replaces an earlier one
    std::erase_if(env_s, [&](const std::string& e) { return e.rfind(k + "=", 0) == 0; });
    env_s.push_back(k + "=" + v);
  }
  std::vector<char*> envp;
  for (auto& s : env_s) envp.push_back(s.data());
  envp.push_back(nullptr);

  int out[2], err[2];
  if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0) {
    ADD_FAILURE() << "pipe2: " << std::strerror(errno);
    return;
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&fa, err[1], STDERR_FILENO);
  posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  if (pass_fd >= 0) posix_spawn_file_actions_adddup2(&fa, pass_fd, pass_as);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  const int rc = ::posix_spawn(&pid_, argv[0], &fa, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  ::close(out[1]);
  ::close(err[1]);
  out_fd_ = out[0];
  err_fd_ = err[0];
  if (rc != 0) {
    ADD_FAILURE() << "posix_spawn " << args[0] << ": " << std::strerror(rc);
    pid_ = -1;
  }
}

Proc::~Proc() {
  if (pid_ > 0 && !exited_) {
    ::kill(-pid_, SIGKILL);
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  if (out_fd_ >= 0) ::close(out_fd_);
  if (err_fd_ >= 0) ::close(err_fd_);
}

void Proc::signal(int sig) const {
  ::kill(pid_, sig);
}

// Waits up to `seconds` for the process to exit (and its output to end). True when it did.
bool Proc::wait(double seconds) {
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(seconds));
  while (!exited_ && Clock::now() < deadline) pump(deadline);
  if (!exited_) return false;
  // The process is gone; whatever it left in the pipes comes now (1 s at most: a leftover
  // grandchild may hold them open, which is for the test to notice).
  const auto drain = std::min(deadline, Clock::now()) + std::chrono::seconds(1);
  while ((out_fd_ >= 0 || err_fd_ >= 0) && Clock::now() < drain) pump(drain);
  return true;
}

// Waits up to `seconds` until stdout contains `part` `times` times.
bool Proc::wait_for_output(const std::string& part, int times, double seconds) {
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(seconds));
  while (count_of(out, part) < times && Clock::now() < deadline && (out_fd_ >= 0 || !exited_))
    pump(deadline);
  return count_of(out, part) >= times;
}

std::string Proc::describe() const {
  std::ostringstream s;
  s << "exit " << exit_code;
  if (term_signal) s << " (signal " << term_signal << ")";
  s << " after " << seconds << " s\n--- stdout:\n" << out << "--- stderr:\n" << err;
  return s.str();
}

void Proc::pump(Clock::time_point deadline) {
  pollfd p[2] = {{out_fd_, POLLIN, 0}, {err_fd_, POLLIN, 0}};
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  ::poll(p, 2, static_cast<int>(std::clamp<long long>(ms.count(), 0, 20)));
  for (int i = 0; i < 2; ++i) {
    int& fd = i == 0 ? out_fd_ : err_fd_;
    if (fd < 0 || !(p[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
    char buf[65536];
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
      (i == 0 ? out : err).append(buf, static_cast<std::size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      ::close(fd);
      fd = -1;
    }
  }
  if (!exited_) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      exited_ = true;
      seconds = since(start_);
      if (WIFEXITED(status)) exit_code = WEXITSTATUS(status);
      if (WIFSIGNALED(status)) term_signal = WTERMSIG(status);
    }
  }
}

}  // namespace compas::testing

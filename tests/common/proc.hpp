// Test helpers for jobs of real processes: a child process with its output captured (Proc), a
// job whose ranks a test starts by hand with the variables a launcher would set (ManualJob), and
// looks at the process table. Header-only; every function is inline.
#pragma once

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

extern char** environ;

namespace compas::testing {

using Clock = std::chrono::steady_clock;
using Env = std::vector<std::pair<std::string, std::string>>;
inline double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

inline int count_of(const std::string& text, const std::string& part) {
  int n = 0;
  for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// A child process in its own process group, stdout and stderr captured.
class Proc {
 public:
  // `pass_fd` >= 0 is handed to the child as descriptor `pass_as`.
  Proc(const std::vector<std::string>& args, const Env& env, int pass_fd = -1, int pass_as = -1)
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
  Proc(const Proc&) = delete;
  Proc& operator=(const Proc&) = delete;
  ~Proc() {
    if (pid_ > 0 && !exited_) {
      ::kill(-pid_, SIGKILL);
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    if (out_fd_ >= 0) ::close(out_fd_);
    if (err_fd_ >= 0) ::close(err_fd_);
  }

  pid_t pid() const { return pid_; }
  void signal(int sig) const { ::kill(pid_, sig); }

  // Waits up to `seconds` for the process to exit (and its output to end). True when it did.
  bool wait(double seconds) {
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
  bool wait_for_output(const std::string& part, int times, double seconds) {
    const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                             std::chrono::duration<double>(seconds));
    while (count_of(out, part) < times && Clock::now() < deadline && (out_fd_ >= 0 || !exited_))
      pump(deadline);
    return count_of(out, part) >= times;
  }

  std::string describe() const {
    std::ostringstream s;
    s << "exit " << exit_code;
    if (term_signal) s << " (signal " << term_signal << ")";
    s << " after " << seconds << " s\n--- stdout:\n" << out << "--- stderr:\n" << err;
    return s.str();
  }

  int exit_code = -1;  // -1 unless it exited normally
  int term_signal = 0;
  double seconds = 0;  // from start to exit
  std::string out, err;

 private:
  void pump(Clock::time_point deadline) {
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

  Clock::time_point start_;
  pid_t pid_ = -1;
  int out_fd_ = -1, err_fd_ = -1;
  bool exited_ = false;
};

inline int cpus_available() {
  cpu_set_t set;
  CPU_ZERO(&set);
  return ::sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
}

// Processes (not zombies) whose command line contains `marker`.
inline std::vector<pid_t> processes_with(const std::string& marker) {
  std::vector<pid_t> found;
  DIR* proc = ::opendir("/proc");
  if (!proc) return found;
  while (dirent* e = ::readdir(proc)) {
    const pid_t pid = static_cast<pid_t>(std::atoi(e->d_name));
    if (pid <= 0 || pid == ::getpid()) continue;
    // Plain read(2): a process that exits while it is read fails the read with ESRCH, which
    // std::ifstream turns into an exception.
    const std::string file = std::string("/proc/") + e->d_name + "/cmdline";
    const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    std::string cmd;
    char buf[4096];
    for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;)
      cmd.append(buf, static_cast<std::size_t>(n));
    ::close(fd);
    if (contains(cmd, marker)) found.push_back(pid);
  }
  ::closedir(proc);
  return found;
}

inline bool none_left(const std::string& marker, double seconds) {
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(seconds));
  while (!processes_with(marker).empty()) {
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

inline std::string unique_marker() {
  std::random_device rd;
  return "marker-" + std::to_string(::getpid()) + "-" + std::to_string(rd());
}

// A job whose ranks the test starts itself. Rank 0 is handed a listening socket (as compas-run
// does) unless `own_port`, in which case it binds the port itself.
class ManualJob {
 public:
  ManualJob(std::string program, int size, Env extra = {}, bool own_port = false)
      : program_(std::move(program)), size_(size), extra_(std::move(extra)) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof sa;
    if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0 ||
        ::listen(listen_fd_, 512) != 0 ||
        ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&sa), &len) != 0)
      ADD_FAILURE() << "cannot listen on 127.0.0.1";
    port_ = ntohs(sa.sin_port);
    if (own_port) {  // free the port for rank 0 to bind (racy in general, fine in a test)
      ::close(listen_fd_);
      listen_fd_ = -1;
    }
  }
  ~ManualJob() {
    if (listen_fd_ >= 0) ::close(listen_fd_);
  }
  int port() const { return port_; }
  std::string rendezvous() const { return "127.0.0.1:" + std::to_string(port_); }

  std::unique_ptr<Proc> start(int rank, const std::vector<std::string>& args = {},
                              const Env& more = {}) {
    Env env = {{"COMPAS_RANK", std::to_string(rank)},
               {"COMPAS_SIZE", std::to_string(size_)},
               {"COMPAS_RENDEZVOUS", rendezvous()},
               {"COMPAS_JOB_TOKEN", token}};
    env.insert(env.end(), extra_.begin(), extra_.end());
    env.insert(env.end(), more.begin(), more.end());
    std::vector<std::string> argv = {program_};
    argv.insert(argv.end(), args.begin(), args.end());
    if (rank == 0 && listen_fd_ >= 0) {
      env.push_back({"COMPAS_RENDEZVOUS_FD", "100"});
      return std::make_unique<Proc>(argv, env, listen_fd_, 100);
    }
    return std::make_unique<Proc>(argv, env);
  }

  std::string token = "0123456789abcdef0123456789abcdef";

 private:
  std::string program_;
  int size_;
  Env extra_;
  int listen_fd_ = -1;
  int port_ = 0;
};

}  // namespace compas::testing

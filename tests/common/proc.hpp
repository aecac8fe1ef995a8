// Test helpers for jobs of real processes: a child process with its output captured (Proc), a
// job whose ranks a test starts by hand with the variables a launcher would set (ManualJob), looks
// at the process table, the processes of a launcher's job (JobPids) and the shared memory a job
// left behind (ShmSnapshot). Header-only; every function is inline.
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
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <set>
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

// Processes (not zombies) whose command line contains `marker`; with `file` "environ", whose
// environment does (a variable every process of a job inherits marks it whatever it runs).
inline std::vector<pid_t> processes_with(const std::string& marker,
                                         const std::string& file = "cmdline") {
  std::vector<pid_t> found;
  DIR* proc = ::opendir("/proc");
  if (!proc) return found;
  while (dirent* e = ::readdir(proc)) {
    const pid_t pid = static_cast<pid_t>(std::atoi(e->d_name));
    if (pid <= 0 || pid == ::getpid()) continue;
    // Plain read(2): a process that exits while it is read fails the read with ESRCH, which
    // std::ifstream turns into an exception.
    const std::string path = std::string("/proc/") + e->d_name + "/" + file;
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
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

inline bool none_left(const std::string& marker, double seconds,
                      const std::string& file = "cmdline") {
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(seconds));
  while (!processes_with(marker, file).empty()) {
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

inline std::string unique_marker() {
  std::random_device rd;
  return "marker-" + std::to_string(::getpid()) + "-" + std::to_string(rd());
}

// The contents of a /proc file, by plain read(2) (see processes_with); empty when unreadable.
inline std::string read_proc_file(const std::string& path) {
  std::string text;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return text;
  char buf[65536];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;)
    text.append(buf, static_cast<std::size_t>(n));
  ::close(fd);
  return text;
}

// When process `pid` started (field 22 of /proc/PID/stat, clock ticks since boot), 0 when there
// is none: with its pid, it names one process and never a later one given the same pid.
inline unsigned long long start_time_of(pid_t pid) {
  const std::string stat = read_proc_file("/proc/" + std::to_string(pid) + "/stat");
  const auto paren = stat.rfind(')');  // the command name may hold spaces and parentheses
  if (paren == std::string::npos) return 0;
  std::istringstream in(stat.substr(paren + 1));
  std::string field;
  for (int i = 3; i < 22 && in >> field; ++i) {
  }
  unsigned long long ticks = 0;
  in >> ticks;
  return ticks;
}

// The children of process `pid`, every thread's (/proc/PID/task/TID/children).
inline std::vector<pid_t> children_of(pid_t pid) {
  std::vector<pid_t> found;
  const std::string task = "/proc/" + std::to_string(pid) + "/task";
  DIR* dir = ::opendir(task.c_str());
  if (!dir) return found;
  while (dirent* e = ::readdir(dir)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    std::istringstream in(read_proc_file(task + "/" + e->d_name + "/children"));
    for (pid_t child; in >> child;) found.push_back(child);
  }
  ::closedir(dir);
  return found;
}

// The processes of a job started by a launcher (a child of this process): the launcher and every
// descendant of it seen while it runs, sampled every 2 ms by a thread until the launcher is gone
// (reaped) or stop(). Long after a rank died its pid still names what it made: the SysV
// segments it created carry it (cpid). A process that lives less than the sampling period may be
// missed; such a process has not got as far as making shared memory (UCX's setup takes longer).
class JobPids {
 public:
  explicit JobPids(pid_t launcher) : launcher_(launcher), started_(start_time_of(launcher)) {
    pids_.insert(launcher);
    thread_ = std::thread([this] {
      while (!done_.load()) {
        sample();
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      }
    });
  }
  JobPids(const JobPids&) = delete;
  JobPids& operator=(const JobPids&) = delete;
  ~JobPids() { stop(); }

  void stop() {
    done_.store(true);
    if (thread_.joinable()) thread_.join();
  }
  // Every process of the job seen so far (all of them once the launcher has been waited for).
  std::set<pid_t> pids() const {
    std::lock_guard lock(mu_);
    return pids_;
  }
  // Waits up to `seconds` until `n` processes (the launcher counts) have been seen.
  bool wait_for(std::size_t n, double seconds) const {
    const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                             std::chrono::duration<double>(seconds));
    while (pids().size() < n) {
      if (Clock::now() >= deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return true;
  }

 private:
  void sample() {
    // Checked before and after the walk: the children read belong to the launcher, not to a
    // later process given its pid.
    if (started_ == 0 || start_time_of(launcher_) != started_) {
      done_.store(true);
      return;
    }
    std::set<pid_t> seen;
    std::vector<pid_t> todo = {launcher_};
    while (!todo.empty()) {
      const pid_t at = todo.back();
      todo.pop_back();
      for (const pid_t child : children_of(at))
        if (seen.insert(child).second) todo.push_back(child);
    }
    if (start_time_of(launcher_) != started_) return;
    std::lock_guard lock(mu_);
    pids_.insert(seen.begin(), seen.end());
  }

  pid_t launcher_;
  unsigned long long started_;
  std::atomic<bool> done_{false};
  mutable std::mutex mu_;
  std::set<pid_t> pids_;
  std::thread thread_;
};

// The pids of processes a test started itself (the ranks of a ManualJob).
inline std::set<pid_t> pids_of(const std::vector<std::unique_ptr<Proc>>& procs) {
  std::set<pid_t> pids;
  for (const auto& p : procs)
    if (p && p->pid() > 0) pids.insert(p->pid());
  return pids;
}

// One SysV shared-memory segment, as /proc/sysvipc/shm lists it.
struct SysvSegment {
  long long key = 0;
  int shmid = -1;
  unsigned perms = 0;  // with SHM_DEST (01000) once marked for removal (IPC_RMID)
  unsigned long long size = 0;
  pid_t cpid = 0, lpid = 0;  // creator, last to attach or detach
  unsigned long long nattch = 0;

  std::string describe() const {
    char key_hex[16];
    std::snprintf(key_hex, sizeof key_hex, "0x%08x", static_cast<unsigned>(key));
    std::ostringstream s;
    s << "SysV segment shmid " << shmid << " key " << key_hex << " size " << size
      << " created by pid " << cpid << " (nattch " << nattch << ", perms 0" << std::oct
      << (perms & 0777) << std::dec << ((perms & 01000) ? ", marked for removal" : "")
      << ", last used by pid " << lpid << ")";
    return s.str();
  }
};

inline std::vector<SysvSegment> sysv_segments() {
  std::vector<SysvSegment> found;
  std::istringstream in(read_proc_file("/proc/sysvipc/shm"));
  std::string line;
  std::getline(in, line);  // the header: key shmid perms size cpid lpid nattch uid ...
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    SysvSegment s;
    std::string perms;
    if (fields >> s.key >> s.shmid >> perms >> s.size >> s.cpid >> s.lpid >> s.nattch) {
      s.perms = static_cast<unsigned>(std::stoul(perms, nullptr, 8));
      found.push_back(s);
    }
  }
  return found;
}

// Paths among `paths` that a live process holds open or mapped (/proc/*/fd, /proc/*/maps).
inline std::set<std::string> in_use(const std::set<std::string>& paths) {
  std::set<std::string> used;
  DIR* proc = ::opendir("/proc");
  if (!proc) return used;
  while (dirent* e = ::readdir(proc)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    const std::string dir = std::string("/proc/") + e->d_name;
    if (DIR* fds = ::opendir((dir + "/fd").c_str())) {
      while (dirent* f = ::readdir(fds)) {
        char target[4096];
        const ssize_t n = ::readlink((dir + "/fd/" + f->d_name).c_str(), target, sizeof target - 1);
        if (n <= 0) continue;
        const std::string link(target, static_cast<std::size_t>(n));
        if (paths.count(link)) used.insert(link);
      }
      ::closedir(fds);
    }
    for (const auto& line : lines_of(read_proc_file(dir + "/maps"))) {
      const auto slash = line.find('/');
      if (slash != std::string::npos && paths.count(line.substr(slash)))
        used.insert(line.substr(slash));
    }
  }
  ::closedir(proc);
  return used;
}

// The shared memory there is now, to tell afterwards what a job left behind:
//  - SysV segments not there before and created by one of the job's processes (their cpid);
//  - files in /dev/shm not there before, created (ctime) between the snapshot and the check, owned
//    by this user, and that no live process holds open or mapped.
// UCX (1.13 here) shares memory between the processes of a host through its sysv transport
// (segments of key IPC_PRIVATE, marked for removal right after they are attached, so they go with
// the last process that maps them) and its posix transport (/dev/shm/ucx_shm_posix_<hex>,
// unlinked right after it is created; the peers open it through /proc/PID/fd): a job that is
// killed leaves nothing unless a process dies between creating one and marking or unlinking it.
// /dev/shm names carry no pid: under ctest -j, a file another test's job left in the same window
// would be counted too (segments cannot be mistaken: they are told apart by their creator).
class ShmSnapshot {
 public:
  explicit ShmSnapshot(std::string dir = "/dev/shm") : dir_(std::move(dir)) {
    for (const auto& s : sysv_segments()) shmids_.insert(s.shmid);
    for (const auto& [path, st] : files()) files_.insert({path, st.st_ino});
    ::clock_gettime(CLOCK_REALTIME, &start_);
  }

  // What the job of processes `pids` left, one line each naming it; empty when nothing. Waits up
  // to `seconds` for the leftovers to go: a segment goes at its last detach, once every process
  // of the job has exited, which may come a moment after the launcher's end.
  std::string leftovers(const std::set<pid_t>& pids, double seconds = 5) const {
    timespec end{};
    ::clock_gettime(CLOCK_REALTIME, &end);
    const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                             std::chrono::duration<double>(seconds));
    std::string left = find(pids, end);
    while (!left.empty() && Clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      left = find(pids, end);
    }
    return left;
  }

 private:
  std::vector<std::pair<std::string, struct stat>> files() const {
    std::vector<std::pair<std::string, struct stat>> found;
    DIR* dir = ::opendir(dir_.c_str());
    if (!dir) return found;
    while (dirent* e = ::readdir(dir)) {
      const std::string name = e->d_name;
      if (name == "." || name == "..") continue;
      struct stat st {};
      if (::lstat((dir_ + "/" + name).c_str(), &st) == 0) found.push_back({dir_ + "/" + name, st});
    }
    ::closedir(dir);
    return found;
  }

  std::string find(const std::set<pid_t>& pids, const timespec& end) const {
    std::string left;
    for (const auto& s : sysv_segments())
      if (!shmids_.count(s.shmid) && pids.count(s.cpid)) left += s.describe() + "\n";
    // File times come from a coarse clock, a tick behind CLOCK_REALTIME: a second of slack.
    const auto seconds = [](const timespec& t) { return t.tv_sec + t.tv_nsec * 1e-9; };
    const double from = seconds(start_) - 1, to = seconds(end) + 1;
    std::map<std::string, struct stat> fresh;
    for (const auto& [path, st] : files()) {
      const double created = seconds(st.st_ctim);
      if (!files_.count({path, st.st_ino}) && st.st_uid == ::geteuid() && created >= from &&
          created <= to)
        fresh[path] = st;
    }
    if (fresh.empty()) return left;
    std::set<std::string> paths;
    for (const auto& entry : fresh) paths.insert(entry.first);
    const auto used = in_use(paths);
    for (const auto& [path, st] : fresh) {
      if (used.count(path)) continue;
      std::ostringstream s;
      s << "file " << path << " (size " << st.st_size << ", created "
        << seconds(st.st_ctim) - seconds(start_) << " s after the snapshot)\n";
      left += s.str();
    }
    return left;
  }

  std::string dir_;
  std::set<int> shmids_;
  std::set<std::pair<std::string, ino_t>> files_;
  timespec start_{};
};

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

// A test fixture with a fresh directory of its own (under the temporary directory, named after
// `stem`), removed with everything in it afterwards.
class TempDirTest : public ::testing::Test {
 protected:
  explicit TempDirTest(std::string stem = "compas-test") : stem_(std::move(stem)) {}
  void SetUp() override {
    std::string tmpl = (std::filesystem::temp_directory_path() / (stem_ + ".XXXXXX")).string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr) << std::strerror(errno);
    dir_ = tmpl;
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::string stem_;
  std::filesystem::path dir_;
};

}  // namespace compas::testing

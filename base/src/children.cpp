#include "compas/base/children.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <map>
#include <sstream>
#include <thread>

namespace compas::base {

namespace {

// The contents of a /proc file by plain read(2); empty when it cannot be read (the process ended).
std::string read_small_file(const std::string& path) {
  std::string text;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return text;
  char buf[4096];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;)
    text.append(buf, static_cast<std::size_t>(n));
  ::close(fd);
  return text;
}

std::string name_of(pid_t pid) {
  std::string comm = read_small_file("/proc/" + std::to_string(pid) + "/comm");
  while (!comm.empty() && comm.back() == '\n') comm.pop_back();
  return std::to_string(pid) + " (" + (comm.empty() ? "?" : comm) + ")";
}

// True when `pid`, a child of this process, has ended and was reaped now.
bool reaped(pid_t pid) {
  int status = 0;
  pid_t got;
  while ((got = ::waitpid(pid, &status, WNOHANG)) < 0 && errno == EINTR) {
  }
  return got == pid || (got < 0 && errno == ECHILD);
}

// Ends what `find()` returns until it returns nothing: SIGTERM through `send` to each the first
// time it is seen, SIGKILL to each once `grace` has passed, given up `grace` plus 5 s on. Returns
// what it ended, "PID (NAME)" each. `find` must not return a pid that ended and was reused as one
// of those it returned before (a child unreaped, or checked when signalled).
template <class Find, class Send>
std::vector<std::string> end_until_gone(const Find& find, const Send& send,
                                        std::chrono::milliseconds grace) {
  using Clock = std::chrono::steady_clock;
  const auto kill_at = Clock::now() + grace;
  const auto give_up = kill_at + std::chrono::seconds(5);
  std::map<pid_t, std::string> ended;
  for (;;) {
    const std::vector<pid_t> found = find();
    const auto now = Clock::now();
    if (found.empty() || now >= give_up) break;
    for (const pid_t pid : found) {
      const bool first = !ended.count(pid);
      if (first) ended[pid] = name_of(pid);
      if (now >= kill_at)
        send(pid, SIGKILL);
      else if (first)
        send(pid, SIGTERM);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::vector<std::string> names;
  for (const auto& entry : ended) names.push_back(entry.second);
  return names;
}

// Whether `pid` is this user's and its environment holds `entry` whole.
bool carries(pid_t pid, const std::string& entry) {
  const std::string dir = "/proc/" + std::to_string(pid);
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0 || st.st_uid != ::geteuid()) return false;
  const std::string env = '\0' + read_small_file(dir + "/environ") + '\0';
  return env.find('\0' + entry + '\0') != std::string::npos;
}

// `sig` to `pid` when it carries `entry`: the pidfd names the process before the check, so the
// check and the signal are of the same process (a pid reused in between fails the signal).
bool signal_if_carrying(pid_t pid, const std::string& entry, int sig) {
  const int fd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (fd < 0 && errno != ENOSYS) return false;  // gone
  bool sent = false;
  if (carries(pid, entry))
    sent = fd >= 0 ? ::syscall(SYS_pidfd_send_signal, fd, sig, nullptr, 0) == 0
                   : ::kill(pid, sig) == 0;  // kernels before 5.3
  if (fd >= 0) ::close(fd);
  return sent;
}

}  // namespace

bool set_subreaper(bool on) {
  return ::prctl(PR_SET_CHILD_SUBREAPER, on ? 1UL : 0UL, 0UL, 0UL, 0UL) == 0;
}

bool is_subreaper() {
  int on = 0;
  return ::prctl(PR_GET_CHILD_SUBREAPER, &on, 0UL, 0UL, 0UL) == 0 && on != 0;
}

std::vector<pid_t> other_children(const std::set<pid_t>& keep) {
  std::set<pid_t> found;
  DIR* tasks = ::opendir("/proc/self/task");
  if (!tasks) return {};
  while (dirent* e = ::readdir(tasks)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    std::istringstream in(
        read_small_file(std::string("/proc/self/task/") + e->d_name + "/children"));
    for (pid_t child; in >> child;)
      if (!keep.count(child)) found.insert(child);
  }
  ::closedir(tasks);
  std::vector<pid_t> alive;
  for (const pid_t pid : found)
    if (!reaped(pid)) alive.push_back(pid);
  return alive;
}

int signal_other_children(const std::set<pid_t>& keep, int sig) {
  int n = 0;
  for (const pid_t pid : other_children(keep)) n += ::kill(pid, sig) == 0;
  return n;
}

std::vector<std::string> end_other_children(const std::set<pid_t>& keep,
                                            std::chrono::milliseconds grace) {
  // Every pid stays unreaped, so names one process, until it has ended.
  return end_until_gone([&] { return other_children(keep); },
                        [](pid_t pid, int sig) { ::kill(pid, sig); }, grace);
}

std::vector<pid_t> processes_carrying(const std::string& entry) {
  std::vector<pid_t> found;
  DIR* proc = ::opendir("/proc");
  if (!proc) return found;
  const pid_t self = ::getpid();
  while (dirent* e = ::readdir(proc)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    const pid_t pid = static_cast<pid_t>(std::strtol(e->d_name, nullptr, 10));
    if (pid != self && carries(pid, entry)) found.push_back(pid);
  }
  ::closedir(proc);
  return found;
}

std::vector<std::string> end_processes_carrying(const std::string& entry,
                                                std::chrono::milliseconds grace) {
  return end_until_gone([&] { return processes_carrying(entry); },
                        [&](pid_t pid, int sig) { signal_if_carrying(pid, entry, sig); }, grace);
}

}  // namespace compas::base

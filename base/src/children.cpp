#include "compas/base/children.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
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
  using Clock = std::chrono::steady_clock;
  const auto kill_at = Clock::now() + grace;
  const auto give_up = kill_at + std::chrono::seconds(5);
  std::map<pid_t, std::string> ended;  // every pid stays unreaped, so unique, until it has ended
  for (;;) {
    const auto children = other_children(keep);
    const auto now = Clock::now();
    if (children.empty() || now >= give_up) break;
    for (const pid_t pid : children) {
      const bool first = !ended.count(pid);
      if (first) ended[pid] = name_of(pid);
      if (now >= kill_at)
        ::kill(pid, SIGKILL);
      else if (first)
        ::kill(pid, SIGTERM);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::vector<std::string> names;
  for (const auto& entry : ended) names.push_back(entry.second);
  return names;
}

}  // namespace compas::base

// The process table (process_table.hpp).
#include "process_table.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <random>
#include <sstream>

namespace compas::testing {

std::vector<pid_t> processes_with(const std::string& marker, const std::string& file) {
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

bool none_left(const std::string& marker, double seconds, const std::string& file) {
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(seconds));
  while (!processes_with(marker, file).empty()) {
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

std::string unique_marker() {
  std::random_device rd;
  return "marker-" + std::to_string(::getpid()) + "-" + std::to_string(rd());
}

std::string read_proc_file(const std::string& path) {
  std::string text;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return text;
  char buf[65536];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;)
    text.append(buf, static_cast<std::size_t>(n));
  ::close(fd);
  return text;
}

unsigned long long start_time_of(pid_t pid) {
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

std::vector<pid_t> children_of(pid_t pid) {
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

JobPids::JobPids(pid_t launcher) : launcher_(launcher), started_(start_time_of(launcher)) {
  pids_.insert(launcher);
  thread_ = std::thread([this] {
    while (!done_.load()) {
      sample();
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  });
}

void JobPids::stop() {
  done_.store(true);
  if (thread_.joinable()) thread_.join();
}

std::set<pid_t> JobPids::pids() const {
  std::lock_guard lock(mu_);
  return pids_;
}

bool JobPids::wait_for(std::size_t n, double seconds) const {
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(seconds));
  while (pids().size() < n) {
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

void JobPids::sample() {
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

std::set<pid_t> pids_of(const std::vector<std::unique_ptr<Proc>>& procs) {
  std::set<pid_t> pids;
  for (const auto& p : procs)
    if (p && p->pid() > 0) pids.insert(p->pid());
  return pids;
}

}  // namespace compas::testing

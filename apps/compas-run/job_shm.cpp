// Removing what a job's killed ranks left of their shared memory (see job_shm.hpp).
#include "job_shm.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <sstream>

namespace compas::run {

namespace {

// The file's contents, as far as they can be read: a process's /proc files fail (ESRCH) when it
// ends while they are read, which std::ifstream turned into an exception that ended compas-run.
std::string read_all(const std::string& path) {
  std::string text;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return text;
  char buf[65536];
  for (;;) {
    const ssize_t got = ::read(fd, buf, sizeof buf);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    text.append(buf, static_cast<std::size_t>(got));
  }
  ::close(fd);
  return text;
}

bool not_before(const timespec& t, const timespec& start) {
  // File times come from a coarse clock, up to a tick behind CLOCK_REALTIME.
  return t.tv_sec + 1 >= start.tv_sec;
}

std::vector<std::string> entries(const std::string& dir) {
  std::vector<std::string> names;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (dirent* e = ::readdir(d)) names.emplace_back(e->d_name);
    ::closedir(d);
  }
  return names;
}

// UCX's posix files in `dir` of this user, changed since `start`.
std::set<std::string> posix_files(const std::string& dir, const timespec& start) {
  std::set<std::string> found;
  for (const auto& name : entries(dir)) {
    if (name.rfind("ucx_shm_posix_", 0) != 0) continue;
    const std::string path = dir + "/" + name;
    struct stat st {};
    if (::lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == ::geteuid() &&
        not_before(st.st_ctim, start))
      found.insert(path);
  }
  return found;
}

}  // namespace

JobShm::JobShm() {
  const char* dir = std::getenv("UCX_POSIX_DIR");
  dir_ = dir && *dir ? dir : "/dev/shm";
  ::clock_gettime(CLOCK_REALTIME, &start_);
}

std::vector<std::string> JobShm::clean_up(const std::vector<pid_t>& ranks) const {
  std::vector<std::string> removed;
  for (int shmid : orphaned_segments(read_all("/proc/sysvipc/shm"), ranks))
    if (::shmctl(shmid, IPC_RMID, nullptr) == 0)
      removed.push_back("SysV segment " + std::to_string(shmid));
  const auto files = posix_files(dir_, start_);
  if (files.empty()) return removed;
  const auto held = held_by_a_process(files);
  for (const auto& path : files)
    if (!held.count(path) && ::unlink(path.c_str()) == 0) removed.push_back(path);
  return removed;
}

std::vector<int> orphaned_segments(const std::string& sysvipc_shm, const std::vector<pid_t>& pids) {
  std::vector<int> found;
  std::istringstream in(sysvipc_shm);
  std::string line;
  std::getline(in, line);  // key shmid perms size cpid lpid nattch uid gid ...
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    long long key = 0;
    int shmid = -1;
    std::string perms;
    unsigned long long size = 0, nattch = 0;
    pid_t cpid = 0, lpid = 0;
    if (!(fields >> key >> shmid >> perms >> size >> cpid >> lpid >> nattch)) continue;
    if (key == IPC_PRIVATE && nattch == 0 &&
        std::find(pids.begin(), pids.end(), cpid) != pids.end())
      found.push_back(shmid);
  }
  return found;
}

std::set<std::string> held_by_a_process(const std::set<std::string>& paths) {
  std::set<std::string> held;
  for (const auto& pid : entries("/proc")) {
    if (pid.empty() || pid[0] < '0' || pid[0] > '9') continue;
    const std::string fd_dir = "/proc/" + pid + "/fd";
    for (const auto& fd : entries(fd_dir)) {
      char target[4096];
      const ssize_t n = ::readlink((fd_dir + "/" + fd).c_str(), target, sizeof target - 1);
      if (n > 0 && paths.count(std::string(target, static_cast<std::size_t>(n))))
        held.insert(std::string(target, static_cast<std::size_t>(n)));
    }
    std::istringstream maps(read_all("/proc/" + pid + "/maps"));
    for (std::string line; std::getline(maps, line);) {
      const auto slash = line.find('/');
      if (slash != std::string::npos && paths.count(line.substr(slash)))
        held.insert(line.substr(slash));
    }
  }
  return held;
}

}  // namespace compas::run

// Shared memory a job leaves behind (shm_snapshot.hpp).
#include "shm_snapshot.hpp"

#include <dirent.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <sstream>
#include <thread>

#include "process.hpp"
#include "process_table.hpp"

namespace compas::testing {

std::string SysvSegment::describe() const {
  char key_hex[16];
  std::snprintf(key_hex, sizeof key_hex, "0x%08x", static_cast<unsigned>(key));
  std::ostringstream s;
  s << "SysV segment shmid " << shmid << " key " << key_hex << " size " << size
    << " created by pid " << cpid << " (nattch " << nattch << ", perms 0" << std::oct
    << (perms & 0777) << std::dec << ((perms & 01000) ? ", marked for removal" : "")
    << ", last used by pid " << lpid << ")";
  return s.str();
}

std::vector<SysvSegment> sysv_segments() {
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
std::set<std::string> in_use(const std::set<std::string>& paths) {
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

ShmSnapshot::ShmSnapshot(std::string dir) : dir_(std::move(dir)) {
  for (const auto& s : sysv_segments()) shmids_.insert(s.shmid);
  for (const auto& [path, st] : files()) files_.insert({path, st.st_ino});
  ::clock_gettime(CLOCK_REALTIME, &start_);
}

std::string ShmSnapshot::leftovers(const std::set<pid_t>& pids, double seconds) const {
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

std::vector<std::pair<std::string, struct stat>> ShmSnapshot::files() const {
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

std::string ShmSnapshot::find(const std::set<pid_t>& pids, const timespec& end) const {
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

}  // namespace compas::testing

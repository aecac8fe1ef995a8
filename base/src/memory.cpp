#include "compas/base/memory.hpp"

#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "compas/base/size.hpp"

namespace compas::base {

namespace {

// Where a cgroup hierarchy is mounted and which cgroup of it this process is in.
struct Hierarchy {
  std::string mount;     // e.g. /sys/fs/cgroup/memory
  std::string root;      // the mount's root inside the hierarchy (a container's may be deeper)
  std::string file;      // memory.limit_in_bytes (v1) or memory.max (v2)
  std::string usage;     // memory.usage_in_bytes (v1) or memory.current (v2)
  std::string inactive;  // the inactive file cache's key in memory.stat
  std::string own;       // this process's cgroup (from /proc/self/cgroup)
};

std::vector<std::string> words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

bool has_option(const std::string& options, const std::string& name) {
  std::istringstream in(options);
  for (std::string o; std::getline(in, o, ',');)
    if (o == name) return true;
  return false;
}

// The memory hierarchies' mounts (/proc/self/mountinfo: "... root mount ... - fstype source
// options"): cgroup v1's with the memory controller, and cgroup v2's.
void find_mounts(Hierarchy& v1, Hierarchy& v2) {
  std::ifstream in("/proc/self/mountinfo");
  for (std::string line; std::getline(in, line);) {
    const auto w = words(line);
    std::size_t dash = 0;
    while (dash < w.size() && w[dash] != "-") ++dash;
    if (dash < 5 || dash + 3 >= w.size()) continue;
    const std::string& type = w[dash + 1];
    if (type == "cgroup" && v1.mount.empty() && has_option(w[dash + 3], "memory"))
      v1.mount = w[4], v1.root = w[3];
    else if (type == "cgroup2" && v2.mount.empty())
      v2.mount = w[4], v2.root = w[3];
  }
}

// This process's cgroups (/proc/self/cgroup: "id:controllers:path"; v2's line is "0::path").
void find_own(Hierarchy& v1, Hierarchy& v2) {
  std::ifstream in("/proc/self/cgroup");
  for (std::string line; std::getline(in, line);) {
    const auto a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1), path = line.substr(b + 1);
    if (controllers.empty() && line.compare(0, a, "0") == 0)
      v2.own = path;
    else if (has_option(controllers, "memory"))
      v1.own = path;
  }
}

// The number in a limit file; nullopt for "max", an absent file or anything else.
std::optional<std::uint64_t> read_limit(const std::string& path) {
  std::ifstream in(path);
  std::string text;
  if (!(in >> text) || text.empty() || text.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  try {
    return std::stoull(text);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// The value of `key` in a "key value" file (memory.stat, /proc/meminfo), 0 when absent.
std::uint64_t stat_value(const std::string& path, const std::string& key) {
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    const auto w = words(line);
    if (w.size() >= 2 && w[0] == key) {
      try {
        return std::stoull(w[1]);
      } catch (const std::exception&) {
        return 0;
      }
    }
  }
  return 0;
}

// What cgroup `dir` can still give under its limit `limit` (whose file is `path`): the limit less
// what is in use, its usage less the inactive file cache (which the kernel reclaims before it
// refuses memory).
MemoryBound cgroup_room(const Hierarchy& h, const std::string& dir, const std::string& path,
                        std::uint64_t limit) {
  const std::uint64_t usage = read_limit(dir + "/" + h.usage).value_or(0);
  const std::uint64_t cache = stat_value(dir + "/memory.stat", h.inactive);
  const std::uint64_t used = usage - std::min(usage, cache);
  return {limit - std::min(limit, used), "the memory cgroup's limit less what is in use (" + path +
                                             ": " + format_size(limit) + ", " + format_size(used) +
                                             " in use)"};
}

// The smallest room along the process's cgroup and its ancestors up to the mount's root.
std::optional<MemoryBound> hierarchy_limit(const Hierarchy& h) {
  if (h.mount.empty() || h.own.empty()) return std::nullopt;
  std::string rel = h.own;
  if (h.root != "/" && rel.compare(0, h.root.size(), h.root) == 0) rel = rel.substr(h.root.size());
  std::optional<MemoryBound> best;
  for (;;) {
    while (!rel.empty() && rel.back() == '/') rel.pop_back();
    const std::string dir = h.mount + rel, path = dir + "/" + h.file;
    if (const auto v = read_limit(path)) {
      const MemoryBound room = cgroup_room(h, dir, path, *v);
      if (!best || room.bytes < best->bytes) best = room;
    }
    if (rel.empty()) break;
    rel = rel.substr(0, rel.rfind('/'));
  }
  return best;
}

std::optional<MemoryBound> shm_free() {
  struct statvfs s {};
  if (::statvfs("/dev/shm", &s) != 0) return std::nullopt;
  return MemoryBound{static_cast<std::uint64_t>(s.f_bavail) * s.f_frsize,
                     "the free space of /dev/shm"};
}

void keep_smaller(MemoryBound& best, const std::optional<MemoryBound>& b) {
  if (b && b->bytes < best.bytes) best = *b;
}

}  // namespace

std::string bytes_text(std::uint64_t bytes) {
  return format_size(bytes) + " (" + std::to_string(bytes) + " bytes)";
}

std::uint64_t physical_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return 0;
  return static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page);
}

std::optional<MemoryBound> cgroup_memory_limit() {
  Hierarchy v1, v2;
  v1.file = "memory.limit_in_bytes";
  v1.usage = "memory.usage_in_bytes";
  v1.inactive = "total_inactive_file";  // this cgroup's and its descendants'
  v2.file = "memory.max";
  v2.usage = "memory.current";
  v2.inactive = "inactive_file";
  find_mounts(v1, v2);
  find_own(v1, v2);
  std::optional<MemoryBound> best = hierarchy_limit(v1);
  if (auto b = hierarchy_limit(v2); b && (!best || b->bytes < best->bytes)) best = b;
  return best;
}

std::uint64_t available_memory_bytes() {
  return stat_value("/proc/meminfo", "MemAvailable:") * 1024;
}

MemoryBound memory_limit(Mapping mapping) {
  MemoryBound best{UINT64_MAX, "no limit known (no physical memory size, cgroup or /dev/shm)"};
  if (const std::uint64_t available = available_memory_bytes())
    best = MemoryBound{available, "the memory available (MemAvailable in /proc/meminfo, of " +
                                      format_size(physical_memory_bytes()) + " installed)"};
  else if (const std::uint64_t phys = physical_memory_bytes())
    best = MemoryBound{phys, "physical memory"};
  keep_smaller(best, cgroup_memory_limit());
  if (mapping == Mapping::shared) keep_smaller(best, shm_free());
  return best;
}

std::string memory_refusal(const std::string& what, std::uint64_t bytes, const MemoryBound& limit) {
  return what + " " + bytes_text(bytes) + ", more than this host can give: at most " +
         bytes_text(limit.bytes) + ", " + limit.what;
}

void check_memory(const std::string& what, std::uint64_t bytes, Mapping mapping) {
  const MemoryBound limit = memory_limit(mapping);
  if (bytes > limit.bytes) throw std::invalid_argument(memory_refusal(what, bytes, limit));
}

}  // namespace compas::base

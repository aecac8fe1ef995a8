#include "compas/base/memory.hpp"

#include <sys/statvfs.h>
#include <unistd.h>

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
  std::string mount;  // e.g. /sys/fs/cgroup/memory
  std::string root;   // the mount's root inside the hierarchy (a container's may be deeper)
  std::string file;   // memory.limit_in_bytes (v1) or memory.max (v2)
  std::string own;    // this process's cgroup (from /proc/self/cgroup)
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

// The smallest limit along the process's cgroup and its ancestors up to the mount's root.
std::optional<MemoryBound> hierarchy_limit(const Hierarchy& h) {
  if (h.mount.empty() || h.own.empty()) return std::nullopt;
  std::string rel = h.own;
  if (h.root != "/" && rel.compare(0, h.root.size(), h.root) == 0) rel = rel.substr(h.root.size());
  std::optional<MemoryBound> best;
  for (;;) {
    while (!rel.empty() && rel.back() == '/') rel.pop_back();
    const std::string path = h.mount + rel + "/" + h.file;
    if (auto v = read_limit(path); v && (!best || *v < best->bytes))
      best = MemoryBound{*v, "the memory cgroup's limit (" + path + ")"};
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
  v2.file = "memory.max";
  find_mounts(v1, v2);
  find_own(v1, v2);
  std::optional<MemoryBound> best = hierarchy_limit(v1);
  if (auto b = hierarchy_limit(v2); b && (!best || b->bytes < best->bytes)) best = b;
  return best;
}

MemoryBound memory_limit(Mapping mapping) {
  MemoryBound best{UINT64_MAX, "no limit known (no physical memory size, cgroup or /dev/shm)"};
  if (const std::uint64_t phys = physical_memory_bytes())
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

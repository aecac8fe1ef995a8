// A memory cgroup a test makes itself (cgroup v1: /sys/fs/cgroup/memory/<unique name>, limited by
// memory.limit_in_bytes), so that a test that could allocate a lot never fills the machine: what
// runs inside is OOM-killed at the limit, nothing else. The commands of a test run inside through
// wrap(): a shell writes its own pid into cgroup.procs, then execs the command (its children
// inherit the cgroup). The directory goes when the object does. Header-only.
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace compas::testing {

class MemoryCgroup {
 public:
  static constexpr const char* kRoot = "/sys/fs/cgroup/memory";

  explicit MemoryCgroup(std::uint64_t limit_bytes) {
    static int made = 0;
    path_ = std::string(kRoot) + "/compas-test-" + std::to_string(::getpid()) + "-" +
            std::to_string(++made);
    if (::access((std::string(kRoot) + "/cgroup.procs").c_str(), W_OK) != 0) {
      why_ = std::string("no writable cgroup v1 memory hierarchy at ") + kRoot + " (" +
             std::strerror(errno) + ")";
      return;
    }
    if (::mkdir(path_.c_str(), 0755) != 0) {
      why_ = "mkdir " + path_ + ": " + std::strerror(errno);
      return;
    }
    made_ = true;
    if (!write(path_ + "/memory.limit_in_bytes", std::to_string(limit_bytes)))
      why_ = "cannot set " + path_ + "/memory.limit_in_bytes";
  }
  ~MemoryCgroup() {
    if (!made_) return;
    // The processes inside are gone once the test waited for them; their pages may take a moment
    // to leave the cgroup's count.
    for (int i = 0; i < 100 && ::rmdir(path_.c_str()) != 0 && errno == EBUSY; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  MemoryCgroup(const MemoryCgroup&) = delete;
  MemoryCgroup& operator=(const MemoryCgroup&) = delete;

  bool ok() const { return why_.empty(); }
  const std::string& why() const { return why_; }  // why it could not be made
  const std::string& path() const { return path_; }
  // The limit file the code under test should name.
  std::string limit_file() const { return path_ + "/memory.limit_in_bytes"; }

  // `args` (args[0] a path) run inside the cgroup.
  std::vector<std::string> wrap(const std::vector<std::string>& args) const {
    std::vector<std::string> out = {"/bin/sh", "-c",
                                    "echo $$ > '" + path_ + "/cgroup.procs' && exec \"$@\"", "sh"};
    out.insert(out.end(), args.begin(), args.end());
    return out;
  }

 private:
  static bool write(const std::string& file, const std::string& text) {
    std::ofstream out(file);
    out << text;
    out.flush();
    return static_cast<bool>(out);
  }

  std::string path_, why_;
  bool made_ = false;
};

}  // namespace compas::testing

// Test helper: restricts every thread of the process to one CPU, the highest-numbered one the
// caller may use, and restores them on destruction. Every thread, not only the caller: hwloc
// reads a process's binding as the union over its threads, and a sanitizer runtime may have a
// thread of its own started before the test.
#pragma once

#include <dirent.h>
#include <sched.h>

#include <cstdlib>
#include <vector>

class OneCpuAffinity {
 public:
  OneCpuAffinity() {
    CPU_ZERO(&saved_);
    if (sched_getaffinity(0, sizeof(saved_), &saved_) != 0) return;
    for (int c = CPU_SETSIZE - 1; c >= 0; --c)
      if (CPU_ISSET(c, &saved_)) {
        cpu_ = c;
        break;
      }
    if (CPU_COUNT(&saved_) < 2) return;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu_, &one);
    restricted_ = sched_setaffinity(0, sizeof(one), &one) == 0;
    if (!restricted_) return;
    if (DIR* d = opendir("/proc/self/task")) {
      while (const dirent* e = readdir(d)) {
        const int tid = std::atoi(e->d_name);
        if (tid > 0 && sched_setaffinity(tid, sizeof(one), &one) == 0) tids_.push_back(tid);
      }
      closedir(d);
    }
  }
  ~OneCpuAffinity() {
    if (!restricted_) return;
    for (int tid : tids_) sched_setaffinity(tid, sizeof(saved_), &saved_);
    sched_setaffinity(0, sizeof(saved_), &saved_);
  }
  OneCpuAffinity(const OneCpuAffinity&) = delete;
  OneCpuAffinity& operator=(const OneCpuAffinity&) = delete;

  // False when the process has a single CPU (nothing to restrict) or the call failed.
  bool restricted() const { return restricted_; }
  int cpu() const { return cpu_; }

 private:
  cpu_set_t saved_;
  bool restricted_ = false;
  int cpu_ = -1;
  std::vector<int> tids_;
};

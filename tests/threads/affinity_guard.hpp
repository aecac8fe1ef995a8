// Test helper: restricts the calling thread (in these tests the only thread of the process) to
// one CPU, the highest-numbered one it may use, and restores its affinity on destruction.
#pragma once

#include <sched.h>

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
  }
  ~OneCpuAffinity() {
    if (restricted_) sched_setaffinity(0, sizeof(saved_), &saved_);
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
};

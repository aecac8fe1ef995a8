#include "compas/perf/timer.hpp"

#include <algorithm>
#include <fstream>
#include <string>
#include <thread>

namespace compas::perf {

namespace {

bool cpu_flag(const std::string& flag) {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("flags", 0) == 0)
      return (" " + line + " ").find(" " + flag + " ") != std::string::npos;
  return false;
}

TscInfo calibrate() {
  TscInfo info;
  info.invariant = cpu_flag("constant_tsc") && cpu_flag("nonstop_tsc");
  // Best of three 7 ms windows: the shortest is least disturbed by preemption.
  double best = 0;
  for (int i = 0; i < 3; ++i) {
    const std::uint64_t n0 = now_ns(), t0 = read_tsc();
    std::this_thread::sleep_for(std::chrono::milliseconds(7));
    const std::uint64_t t1 = read_tsc(), n1 = now_ns();
    const double ghz = static_cast<double>(t1 - t0) / static_cast<double>(n1 - n0);
    best = i == 0 ? ghz : std::min(best, ghz);
  }
  info.ghz = best;
  return info;
}

}  // namespace

const TscInfo& tsc() {
  static const TscInfo info = calibrate();
  return info;
}

}  // namespace compas::perf

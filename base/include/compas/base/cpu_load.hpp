// How busy the machine is besides this process: the CPU time every process but this one used
// over an interval, from /proc/stat's "cpu" line (every CPU of the machine, steal time included)
// less this process's own CPU time (getrusage). A measurement of memory bandwidth or of a kernel
// taken while other processes ran is low, and a report says so beside the figure.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string_view>

namespace compas::base {

// The machine's CPU time since boot, in clock ticks (sysconf(_SC_CLK_TCK)), summed over CPUs.
struct CpuTimes {
  std::uint64_t busy = 0;   // user, nice, system, irq, softirq and steal
  std::uint64_t steal = 0;  // taken by the hypervisor for other guests
  std::uint64_t total = 0;  // busy, idle and iowait
};

// The "cpu " line of a /proc/stat text; nullopt when there is none or it is malformed.
std::optional<CpuTimes> parse_proc_stat(std::string_view text);

// This machine's, from /proc/stat (nullopt where it cannot be read).
std::optional<CpuTimes> machine_cpu_times();

// This process's CPU time so far (user + system, all threads), in seconds (0 where the clock
// cannot be read).
double process_cpu_seconds() noexcept;

// Over an interval: the share of the machine's CPU time that other processes used (0..1;
// 0.5 on 2 CPUs is one CPU kept busy by someone else) and the share the hypervisor took.
struct MachineLoad {
  double other_processes_share = 0;
  double steal_share = 0;
  double seconds = 0;  // the interval's wall time
  bool known = false;  // /proc/stat was readable at both ends and moved on between them
};

// Samples at construction; read() gives the load from then to now (waiting up to 50 ms for
// /proc/stat to move on when less than one clock tick has passed). `also_ours`: CPU seconds that
// other processes of the same job used on this host meanwhile, counted as this process's own.
class LoadMeter {
 public:
  LoadMeter();
  MachineLoad read(double also_ours = 0) const;

 private:
  std::optional<CpuTimes> start_;
  double start_self_ = 0;
  std::chrono::steady_clock::time_point start_time_;
};

// The load between two samples, given this process's CPU seconds in between and the clock rate.
MachineLoad load_between(const CpuTimes& a, const CpuTimes& b, double self_seconds,
                         double ticks_per_second, double seconds);

}  // namespace compas::base

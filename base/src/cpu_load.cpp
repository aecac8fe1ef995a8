#include "compas/base/cpu_load.hpp"

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

namespace compas::base {

std::optional<CpuTimes> parse_proc_stat(std::string_view text) {
  // "cpu  user nice system idle iowait irq softirq steal guest guest_nice" (guest time is
  // counted in user already).
  if (text.substr(0, 4) != "cpu ") return std::nullopt;
  text.remove_prefix(4);
  std::array<std::uint64_t, 8> v{};
  for (auto& x : v) {
    while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), x);
    if (ec != std::errc() || end == text.data()) return std::nullopt;
    text.remove_prefix(static_cast<std::size_t>(end - text.data()));
  }
  const auto [user, nice, system, idle, iowait, irq, softirq, steal] = v;
  CpuTimes t;
  t.steal = steal;
  t.busy = user + nice + system + irq + softirq + steal;
  t.total = t.busy + idle + iowait;
  return t;
}

std::optional<CpuTimes> machine_cpu_times() {
  std::ifstream in("/proc/stat");
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  return parse_proc_stat(line);
}

double process_cpu_seconds() noexcept {
  timespec ts{};
  if (::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0) return 0;
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

MachineLoad load_between(const CpuTimes& a, const CpuTimes& b, double self_seconds,
                         double ticks_per_second, double seconds) {
  MachineLoad l;
  l.seconds = seconds;
  if (b.total <= a.total || b.busy < a.busy || b.steal < a.steal || ticks_per_second <= 0) return l;
  const double total = static_cast<double>(b.total - a.total);
  const double others =
      static_cast<double>(b.busy - a.busy) - std::max(0.0, self_seconds) * ticks_per_second;
  l.other_processes_share = std::clamp(others / total, 0.0, 1.0);
  l.steal_share = std::clamp(static_cast<double>(b.steal - a.steal) / total, 0.0, 1.0);
  l.known = true;
  return l;
}

LoadMeter::LoadMeter()
    : start_(machine_cpu_times()),
      start_self_(process_cpu_seconds()),
      start_time_(std::chrono::steady_clock::now()) {}

MachineLoad LoadMeter::read(double also_ours) const {
  auto now = machine_cpu_times();
  // /proc/stat moves by clock ticks (10 ms at USER_HZ 100): an interval shorter than one has no
  // figure yet, so wait (2 ms at a time, at most 50 ms) for the counters to move on.
  for (int i = 0; i < 25 && start_ && now && now->total <= start_->total; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    now = machine_cpu_times();
  }
  const double self = process_cpu_seconds() - start_self_ + std::max(0.0, also_ours);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_time_).count();
  if (!start_ || !now) return MachineLoad{0, 0, seconds, false};
  return load_between(*start_, *now, self, static_cast<double>(::sysconf(_SC_CLK_TCK)), seconds);
}

}  // namespace compas::base

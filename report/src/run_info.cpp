// The "run" object of every report (compas/report/run_info.hpp).
#include "compas/report/run_info.hpp"

#include <cpuid.h>

#include <array>
#include <cstring>
#include <ctime>
#include <fstream>
#include <mutex>
#include <optional>
#include <vector>

#include "compas/base/cpu_load.hpp"
#include "compas/base/memory.hpp"
#include "compas/comm/versions.hpp"
#include "compas/perf/counters.hpp"
#include "compas/report/report.hpp"
#include "compas/threads/topology.hpp"

#ifndef COMPAS_GIT_COMMIT
#define COMPAS_GIT_COMMIT "unknown"
#endif
#ifndef COMPAS_BUILD_TYPE
#define COMPAS_BUILD_TYPE "unknown"
#endif
#ifndef COMPAS_BUILD_FLAGS
#define COMPAS_BUILD_FLAGS ""
#endif

namespace compas::report {

namespace {

std::mutex g_mutex;
std::vector<std::string> g_command_line;
std::optional<base::LoadMeter> g_load;  // from set_command_line on
double g_job_cpu = 0;                   // the job's other processes on this host

constexpr const char* kNotExposed = "not exposed";

std::string first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return kNotExposed;
  while (!line.empty() && (line.back() == '\n' || line.back() == ' ')) line.pop_back();
  return line.empty() ? kNotExposed : line;
}

std::string compiler() {
#if defined(__clang__)
  return std::string("clang ") + __clang_version__;
#elif defined(__GNUC__)
  return std::string("gcc ") + __VERSION__;
#else
  return "unknown";
#endif
}

// CPUID's hypervisor bit, and the hypervisor's vendor string (leaf 0x40000000) when it is set.
std::pair<bool, std::string> hypervisor() {
#if defined(__x86_64__) || defined(__i386__)
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 31))) return {false, ""};
  __cpuid(0x40000000, a, b, c, d);
  std::array<char, 13> vendor{};
  std::memcpy(vendor.data(), &b, 4);
  std::memcpy(vendor.data() + 4, &c, 4);
  std::memcpy(vendor.data() + 8, &d, 4);
  std::string v = vendor.data();
  while (!v.empty() && v.back() == ' ') v.pop_back();
  return {true, v};
#else
  return {false, kNotExposed};
#endif
}

}  // namespace

void set_command_line(int argc, const char* const* argv) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_command_line.assign(argv, argv + argc);
  g_load.emplace();
}

// What other processes (and the hypervisor) took of the machine's CPUs since the command began.
nlohmann::ordered_json machine_load() {
  std::lock_guard<std::mutex> lock(g_mutex);
  const base::MachineLoad l = g_load ? g_load->read(g_job_cpu) : base::MachineLoad{};
  if (!l.known) return kNotExposed;
  return {{"other_processes_cpu_share", l.other_processes_share},
          {"steal_share", l.steal_share},
          {"seconds", l.seconds},
          {"job_cpu_seconds", g_job_cpu}};
}

void set_job_cpu_seconds(double others) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_job_cpu = others;
}

std::string git_commit() {
  return COMPAS_GIT_COMMIT;
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

nlohmann::ordered_json run_info() {
  nlohmann::ordered_json j;
  j["date"] = utc_now();
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    j["command_line"] = g_command_line;
  }
  j["compas_version"] = version();
  j["git_commit"] = git_commit();
  j["build"] = {
      {"type", COMPAS_BUILD_TYPE}, {"compiler", compiler()}, {"flags", COMPAS_BUILD_FLAGS}};
  const std::string mpi = comm::mpi_version();
  j["libraries"] = {{"ucx", comm::ucx_version()},
                    {"hwloc", threads::hwloc_version()},
                    {"papi", perf::papi_version()},
                    {"mpi", mpi.empty() ? "not built with MPI" : mpi}};
  j["memory_bytes"] = base::physical_memory_bytes();
  const std::string cpufreq = "/sys/devices/system/cpu/cpu0/cpufreq/";
  j["cpu_frequency"] = {{"governor", first_line(cpufreq + "scaling_governor")},
                        {"driver", first_line(cpufreq + "scaling_driver")},
                        {"boost", first_line("/sys/devices/system/cpu/cpufreq/boost")}};
  const auto [virtual_machine, vendor] = hypervisor();
  j["virtual_machine"] = virtual_machine;
  j["hypervisor"] = virtual_machine ? vendor : "none";
  j["machine_load"] = machine_load();
  return j;
}

}  // namespace compas::report

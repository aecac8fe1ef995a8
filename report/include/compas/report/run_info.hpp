// What a result was measured with, and when: the "run" object of every report (Report::to_json),
// so that a JSON file read back years later says how to reproduce it: the date, compas's version
// and commit, the command line, the compiler and its flags, the libraries' versions (UCX, hwloc,
// PAPI, MPI), the memory, the CPU frequency policy and whether the machine is virtual.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace compas::report {

// The program's command line, once, from main (before any report is made).
void set_command_line(int argc, const char* const* argv);

// {"date", "command_line", "compas_version", "git_commit", "build": {"type", "compiler",
// "flags"}, "libraries": {"ucx", "hwloc", "papi", "mpi"}, "memory_bytes", "cpu_frequency":
// {"governor", "driver", "boost"}, "virtual_machine", "hypervisor", "machine_load":
// {"other_processes_cpu_share", "steal_share", "seconds", "job_cpu_seconds"}}. machine_load
// covers the command from set_command_line on: the share of the machine's CPU time that every
// process but this job's used (0..1; the job's other processes on this host count as the job's
// once set_job_cpu_seconds said how much they used) and that the hypervisor took, which make a
// bandwidth or a time measured meanwhile low. Values the machine does not expose are "not
// exposed" (never guessed).
nlohmann::ordered_json run_info();

// The CPU seconds the job's other processes on this host have used (their whole lives): what
// machine_load counts as the job's, not as others'.
void set_job_cpu_seconds(double others);

// The git commit compas was built from ("unknown" outside a git checkout).
std::string git_commit();

// "2026-11-28T06:50:03Z" (UTC, now).
std::string utc_now();

}  // namespace compas::report

// Where a process's threads run, as COMPAS_REPORT_BINDING=1 (--report-bindings) has every process
// say it at Runtime start, in the spirit of mpirun --report-bindings.
#pragma once

#include <string>
#include <vector>

namespace compas::detail {

struct Binding {
  int rank = 0;
  std::string host;
  std::vector<int> affinity;              // OS cpus of the process's mask when the job formed
  std::vector<int> cpus;                  // OS cpus it uses (its share of them, COMPAS_CPUS)
  std::vector<std::vector<int>> threads;  // each team thread's OS cpus, read back
  std::vector<std::vector<int>> openmp;   // each OpenMP thread's, read back; empty: not pinned
  std::string openmp_note;                // why OpenMP's threads are not pinned (when they are not)
};

// One line, e.g. "compas: binding rank 1 on host h1: cpus 1 (affinity 0-1); threads 0->cpu 1,
// 1->cpu 1; openmp 0->cpu 1, 1->cpu 1\n" ("openmp not pinned (NOTE)" when OpenMP's threads are
// not compas's to bind).
std::string format_binding(const Binding& b);

// This machine's host name (gethostname), "?" when it cannot be read.
std::string host_name();

// Writes all of `text` to `fd` in one write(2) (continuing after a partial write), so that the
// lines of processes sharing one stream do not interleave within a process's text.
void write_whole(int fd, const std::string& text);

}  // namespace compas::detail

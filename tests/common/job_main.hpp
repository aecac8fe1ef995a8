// The job a test program of real jobs runs in (tests/kernels/*_job.cpp, tests/runtime):
// job_main.cpp's main() builds the Runtime (alone, or one rank of a compas-run job), runs the
// GoogleTest cases on every process and fails the program on every process when a case failed on
// any.
#pragma once

#include "compas/compas.hpp"

// This process's Runtime while the cases run.
extern compas::Runtime* g_rt;

// What every job test calls: this process's Runtime, its rank and the job's process count.
inline compas::Runtime& rt() {
  return *g_rt;
}
inline int me() {
  return g_rt->process();
}
inline int P() {
  return g_rt->processes();
}

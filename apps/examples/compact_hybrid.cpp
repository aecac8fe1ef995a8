// compact_openmp.cpp ported to hybrid mode with the porting layer: the same histogram and stream
// compaction on P processes x T threads; every `#pragma omp` line is kept. Run it alone (1 x T),
// `compas-run -n P -t T compact_hybrid N`, or under mpirun / srun. What changed
// (diff -u compact_openmp.cpp compact_hybrid.cpp):
//
//  1. `compas::Runtime rt(argc, argv)` joins the job and pins this process's threads, OpenMP's
//     included; rt.part(...) is this process's block of the global index range.
//  2. The histogram is built over this process's keys, then summed bin by bin over the processes
//     (compas::allreduce of the array, in rank order).
//  3. The compaction's scan starts at the number of kept keys on the processes before this one
//     (compas::exclusive_scan of this process's count), so every key gets its global place; the
//     checksums of the processes are summed.
#include <omp.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "compas/compas.hpp"

std::uint64_t mix(std::uint64_t z) {  // splitmix64
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

int main(int argc, char** argv) {
  compas::Runtime rt(argc, argv);  // (1)
  const long n = argc > 1 ? std::atol(argv[1]) : 20000000;
  constexpr int bins = 64;
  const compas::Range mine = rt.part({0, n});

  long count[bins] = {}, all[bins];
#pragma omp parallel for reduction(+ : count[:bins])
  for (long i = mine.lo; i < mine.hi; ++i) ++count[mix(i) >> 58];
  compas::allreduce<long>(rt, count, all, compas::op::sum{});  // (2)
  std::uint64_t top = 0;
  long total = 0;
  for (int b = 0; b < bins; ++b) {
    total += all[b];
    if (all[b] > all[top]) top = b;
  }

  long place = compas::exclusive_scan(rt, count[top], 0L, compas::op::sum{});  // (3)
  std::uint64_t check = 0;
#pragma omp parallel for reduction(inscan, + : place) reduction(+ : check)
  for (long i = mine.lo; i < mine.hi; ++i) {
    if (mix(i) >> 58 == top) check += place * mix(i);
#pragma omp scan exclusive(place)
    place += mix(i) >> 58 == top;
  }
  check = rt.allreduce(check, compas::op::sum{});

  std::uint64_t want = 0;
  long kept = 0;
  for (long i = 0; i < n; ++i)
    if (mix(i) >> 58 == top) want += kept++ * mix(i);
  if (rt.process() == 0)
    std::printf("n %ld processes %d threads %d: bin %lu holds %ld keys; result = %lu, serial %lu\n",
                n, rt.processes(), omp_get_max_threads(), top, all[top], check, want);
  return check == want && kept == all[top] && total == n ? 0 : 1;
}

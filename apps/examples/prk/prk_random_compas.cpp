// prk_random_openmp.cpp ported to processes x threads on compas: the table cut in one block per
// process, 1024 streams per process as in PRK's MPI version; the `#pragma omp` loops over the
// table are kept.
// What changed (diff -u prk_random_openmp.cpp prk_random_compas.cpp):
//  1. `compas::Runtime rt(argc, argv)` joins the job and pins this process's OpenMP threads.
//  2. The table becomes a 1-D DistArray (no halo); this process fills and checks its block.
//  3. This process runs its block of the streams in lockstep: each step makes one number per
//     stream, and compas::scatter xors them all into the table at their owners, one message
//     per owner (PRK's MPI version: buckets per rank, MPI_Alltoall of their sizes and
//     MPI_Alltoallv); the atomic update goes, each owner applying what it receives in turn.
//  4. The timer starts after rt.barrier() (PRK's MPI_Barrier) and the job's time is the slowest
//     process's; the wrong entries are summed over the processes; process 0 prints.
// Usage: prk_random_compas UPDATE_RATIO LOG2_TABLESIZE
//        (compas-run -n P -t T, mpirun, srun, or alone)
#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "compas/compas.hpp"
#include "prk_common.hpp"

int main(int argc, char** argv) {
  compas::Runtime rt(argc, argv);  // (1)
  prk::check_count(argc, argv, 2, {"UPDATE_RATIO", "LOG2_TABLESIZE"});
  const long ratio = prk::integer(argc, argv, 1, "update ratio", 1, 0, 1L << 20);
  const long log2size = prk::integer(argc, argv, 2, "log2 tablesize", 1, 0, 28);
  if ((ratio & (ratio - 1)) != 0)
    prk::bad_input("update ratio '" + std::to_string(ratio) + "': a power of 2 is needed");
  const long size = 1L << log2size, updates = ratio * size, per_round = updates / 2;
  // (3) 1024 streams per process (PRK's MPI version's vector length), the updates of a round
  // dealt out evenly: stream s makes steps + 1 numbers when s < extra, else steps.
  const long streams = std::min(1024L * rt.processes(), per_round);
  const long steps = per_round / streams, extra = per_round % streams;
  if (rt.process() == 0)
    std::printf(
        "Parallel Research Kernels: random access (compas)\nNumber of processes    = %d\n"
        "Number of threads      = %d\nTable size             = %ld\nUpdate ratio           = %ld\n"
        "Number of updates      = %ld\nVector length          = %ld\n",
        rt.processes(), omp_get_max_threads(), size, ratio, updates, streams);

  compas::DistArray<unsigned long> table = prk::or_bad_input([&] {  // (2)
    return compas::DistArray<unsigned long>(rt, size,
                                            {.halo = 0, .fill = compas::comm::Fill::none});
  });
#pragma omp parallel for
  for (long i = table.lo(); i < table.hi(); ++i) table[i] = static_cast<unsigned long>(i);
  const compas::Range mine = rt.part({0, streams});  // (3)
  std::vector<unsigned long> ran(mine.size());
  std::vector<compas::index> where;
  std::vector<unsigned long> value;
  const auto xor_into = [](unsigned long a, unsigned long b) { return a ^ b; };

  rt.barrier();  // (4)
  const double start = omp_get_wtime();
  for (int round = 0; round < 2; ++round) {
    for (long s = mine.lo; s < mine.hi; ++s)
      ran[s - mine.lo] = prk::random_start(static_cast<long>(prk::kSeqSeed) + (steps + 1) * s);
    for (long k = 0; k < steps + (extra > 0); ++k) {
      where.clear();
      value.clear();
      for (long s = mine.lo; s < mine.hi && (k < steps || s < extra); ++s) {
        unsigned long& r = ran[s - mine.lo];
        r = prk::random_next(r);
        where.push_back(static_cast<compas::index>(r & (size - 1)));
        value.push_back(r);
      }
      compas::scatter(table, std::span<const compas::index>(where),
                      std::span<const unsigned long>(value), xor_into);  // (3)
    }
  }
  const double seconds = rt.allreduce(omp_get_wtime() - start, compas::op::max{});  // (4)

  if (prk::perturbed() && table.owned().contains(size / 2)) table[size / 2] ^= 1;
  long wrong = 0;
#pragma omp parallel for reduction(+ : wrong)
  for (long i = table.lo(); i < table.hi(); ++i) wrong += table[i] != static_cast<unsigned long>(i);
  wrong = rt.allreduce(wrong, compas::op::sum{});
  const int bad = prk::random_verdict(updates, wrong, seconds, rt.process() == 0);
  return rt.allreduce(bad, compas::op::max{});
}

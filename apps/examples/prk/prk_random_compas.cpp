// prk_random_openmp.cpp ported to processes x threads on compas: the table cut in one block per
// process, the 1024 streams split over the processes; the `#pragma omp` loops are kept.
// What changed (diff -u prk_random_openmp.cpp prk_random_compas.cpp):
//  1. `compas::Runtime rt(argc, argv)` joins the job and pins this process's OpenMP threads.
//  2. The table becomes a 1-D DistArray (no halo); this process fills and checks its block.
//  3. This process runs its part of the streams, and `#pragma omp atomic table[j] ^= ran` becomes
//     add(j, ran) through the thread's handle on an UpdateBatch (batch.adder(): the batch's
//     constants in registers): the updates are bucketed per owning process, a full bucket goes
//     one-sided into its owner's inbox while the loop runs (the buffers stay bounded, with no
//     collective inside the loop), and batch.flush() at the end of each round trades what is
//     left (as PRK's MPI version does with MPI_Alltoall and MPI_Alltoallv) and returns with
//     every update applied by its owner.
//  4. The timer starts after compas::barrier(rt) (PRK's MPI_Barrier); the job's time is the slowest
//     process's; the wrong entries are summed over the processes; process 0 prints.
// Usage: prk_random_compas UPDATE_RATIO LOG2_TABLESIZE
//        (compas-run -n P -t T, mpirun, srun, or alone)
#include <omp.h>

#include <cstdio>

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
  const long streams = per_round < 1024 ? per_round : 1024, steps = per_round / streams;
  if (rt.process() == 0)
    std::printf(
        "Parallel Research Kernels: random access (compas)\nNumber of processes    = %d\n"
        "Number of threads      = %d\nTable size             = %ld\nUpdate ratio           = %ld\n"
        "Number of updates      = %ld\nVector length          = %ld\n",
        rt.processes(), omp_get_max_threads(), size, ratio, updates, streams);

  auto table = prk::or_bad_input(  // (2)
      [&] { return compas::DistArray<unsigned long>(rt, size, {.halo = 0}); });
#pragma omp parallel for
  for (long i = table.lo(); i < table.hi(); ++i) table[i] = static_cast<unsigned long>(i);
  const compas::Range mine = rt.part({0, streams});                                  // (3)
  compas::UpdateBatch<unsigned long> batch(table, compas::comm::AtomicOp::bit_xor);  // (3)

  compas::barrier(rt);  // (4)
  const double start = omp_get_wtime();
  for (int round = 0; round < 2; ++round) {
#pragma omp parallel for
    for (long s = mine.lo; s < mine.hi; ++s) {  // (3)
      unsigned long ran = prk::random_start(static_cast<long>(prk::kSeqSeed) + steps * s);
      const auto add = batch.adder();  // (3)
      for (long k = 0; k < steps; ++k) {
        ran = prk::random_next(ran);
        add(ran & (size - 1), ran);  // (3)
      }
    }
    batch.flush();  // (3)
  }
  const double seconds = rt.allreduce(omp_get_wtime() - start, compas::op::max{});

  if (prk::perturbed() && table.owned().contains(size / 2)) table[size / 2] ^= 1;
  long wrong = 0;
#pragma omp parallel for reduction(+ : wrong)
  for (long i = table.lo(); i < table.hi(); ++i) wrong += table[i] != static_cast<unsigned long>(i);
  wrong = rt.allreduce(wrong, compas::op::sum{});  // (4)
  const int bad = prk::random_verdict(updates, wrong, seconds, rt.process() == 0);
  return rt.allreduce(bad, compas::op::max{});
}

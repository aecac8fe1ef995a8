// The Parallel Research Kernels' random (HPC Challenge's RandomAccess), written after PRK's
// definition for one shared-memory node with OpenMP: a table of 2^LOG2_TABLESIZE entries, T[i] = i,
// and UPDATE_RATIO x its size updates T[ran & (size - 1)] ^= ran by 1024 streams of the
// generator (fewer when there are fewer updates per round), in two identical rounds that must
// leave the table as it was; the streams are split over the threads, the updates atomic (PRK's
// ATOMIC build: no wrong entry allowed). PRK's rate in GUPS (prk_common.hpp).
// prk_random_compas.cpp is its port to processes x threads.
// Usage: prk_random_openmp UPDATE_RATIO LOG2_TABLESIZE   (threads: OMP_NUM_THREADS)
#include <omp.h>

#include <cstdio>
#include <memory>

#include "prk_common.hpp"

int main(int argc, char** argv) {
  prk::check_count(argc, argv, 2, {"UPDATE_RATIO", "LOG2_TABLESIZE"});
  const long ratio = prk::integer(argc, argv, 1, "update ratio", 1, 0, 1L << 20);
  const long log2size = prk::integer(argc, argv, 2, "log2 tablesize", 1, 0, 28);
  if ((ratio & (ratio - 1)) != 0)
    prk::bad_input("update ratio '" + std::to_string(ratio) + "': a power of 2 is needed");
  const long size = 1L << log2size, updates = ratio * size, per_round = updates / 2;
  const long streams = per_round < 1024 ? per_round : 1024, steps = per_round / streams;
  std::printf(
      "Parallel Research Kernels: random access (OpenMP)\nNumber of threads      = %d\n"
      "Table size             = %ld\nUpdate ratio           = %ld\nNumber of updates      = %ld\n"
      "Vector length          = %ld\n",
      omp_get_max_threads(), size, ratio, updates, streams);

  auto table = std::make_unique_for_overwrite<unsigned long[]>(size);
#pragma omp parallel for
  for (long i = 0; i < size; ++i) table[i] = static_cast<unsigned long>(i);

  const double start = omp_get_wtime();
  for (int round = 0; round < 2; ++round) {
#pragma omp parallel for
    for (long s = 0; s < streams; ++s) {
      unsigned long ran = prk::random_start(static_cast<long>(prk::kSeqSeed) + steps * s);
      for (long k = 0; k < steps; ++k) {
        ran = prk::random_next(ran);
#pragma omp atomic
        table[ran & (size - 1)] ^= ran;
      }
    }
  }
  const double seconds = omp_get_wtime() - start;

  if (prk::perturbed()) table[size / 2] ^= 1;
  long wrong = 0;
#pragma omp parallel for reduction(+ : wrong)
  for (long i = 0; i < size; ++i) wrong += table[i] != static_cast<unsigned long>(i);
  return prk::random_verdict(updates, wrong, seconds, true);
}

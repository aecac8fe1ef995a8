// The incremental port from pure MPI: a program that initialises MPI itself, creates the Runtime
// on top, and keeps its own MPI calls between compas's (halo exchanges, collectives); MPI stays
// usable after the Runtime is gone, and the program finalises it. Run under mpirun (see
// mpi_interop.sh); prints "mpi interop: ok" on rank 0 and exits 0 when every check held on every
// rank.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <unistd.h>

#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "compas/compas.hpp"

namespace {

int g_failures = 0;

void expect(bool ok, const std::string& what) {
  if (ok) return;
  ++g_failures;
  std::fprintf(stderr, "mpi_interop: %s\n", what.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  try {
    compas::Runtime rt(argc, argv);
    expect(rt.process() == rank, "the Runtime's rank " + std::to_string(rt.process()) +
                                     " is not MPI's " + std::to_string(rank));
    expect(rt.processes() == size, "the Runtime's size " + std::to_string(rt.processes()) +
                                       " is not MPI's " + std::to_string(size));
    // mpirun --bind-to none gives every process the whole machine: the Runtime splits the cores
    // between the processes of the host, so no two threads of the job share a cpu unless the
    // job has more threads than the host has cpus.
    std::vector<int> mine;
    for (const auto& cpus : rt.team().binding()) mine.push_back(cpus.size() == 1 ? cpus[0] : -1);
    std::vector<int> all(mine.size() * static_cast<std::size_t>(size));
    MPI_Allgather(mine.data(), static_cast<int>(mine.size()), MPI_INT, all.data(),
                  static_cast<int>(mine.size()), MPI_INT, MPI_COMM_WORLD);
    const auto cpus = static_cast<std::size_t>(sysconf(_SC_NPROCESSORS_ONLN));
    if (all.size() <= cpus) {
      const std::set<int> distinct(all.begin(), all.end());
      std::string list;
      for (int c : all) list += std::to_string(c) + " ";
      expect(distinct.size() == all.size() && !distinct.count(-1),
             "threads of different processes share cpus (by rank, thread: " + list + ") on " +
                 std::to_string(cpus) + " cpus");
    }
    compas::DistArray<long> u(rt, 10L * size + 3, {.periodic = true});
    const compas::Range d = u.domain();
    for (long k = 1; k <= 20; ++k) {
      for (long i = u.lo(); i < u.hi(); ++i) u[i] = i * 1000 + k;
      u.exchange_halos();  // compas's one-sided halos...
      const long left = u.lo() - 1, right = u.hi();
      const long wl = (left + d.size()) % d.size(), wr = right % d.size();
      expect(u[left] == wl * 1000 + k && u[right] == wr * 1000 + k,
             "halo of exchange " + std::to_string(k) + " wrong on rank " + std::to_string(rank));
      // ...then the program's own messages, on MPI_COMM_WORLD with tag 0.
      long mine = rank * 100 + k, got = -1;
      const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
      MPI_Sendrecv(&mine, 1, MPI_LONG, next, 0, &got, 1, MPI_LONG, prev, 0, MPI_COMM_WORLD,
                   MPI_STATUS_IGNORE);
      expect(got == prev * 100 + k, "MPI_Sendrecv between compas calls got " + std::to_string(got));
      long mpi_sum = 0;
      MPI_Allreduce(&mine, &mpi_sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
      const long rt_sum = rt.allreduce(mine, compas::op::sum{});
      expect(mpi_sum == rt_sum, "MPI_Allreduce " + std::to_string(mpi_sum) + " vs rt.allreduce " +
                                    std::to_string(rt_sum));
    }
  } catch (const std::exception& e) {
    expect(false, std::string("rank ") + std::to_string(rank) + ": " + e.what());
  }
  // The Runtime is gone; MPI is still the program's.
  int finalized = 1;
  MPI_Finalized(&finalized);
  expect(!finalized, "MPI was finalized by the Runtime");
  int total = 0;
  MPI_Allreduce(&g_failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Finalize();
  if (rank == 0) std::printf("mpi interop: %s (%d processes)\n", total ? "FAILED" : "ok", size);
  return total ? 1 : 0;
}

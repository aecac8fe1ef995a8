// UpdateBatch::add and adder() from threads the batch was not made for (every rank of a compas-run
// job runs these, P = 1..3, T = 1..2): the threads of rt.run (compas's own team, where
// omp_get_thread_num() is 0 on every thread), an OpenMP team wider than omp_get_max_threads() when
// the batch was made, and threads the program starts itself. Every update arrives: the table after
// flush() equals the serial count of every thread's updates on every process. (Such adds shared
// one set of buckets: updates were lost at one process and a process crashed at two.)
#include <gtest/gtest.h>
#include <omp.h>

#include <cstdint>
#include <thread>
#include <vector>

#include "../common/job_main.hpp"
#include "compas/compas.hpp"

namespace {

using compas::index;
using compas::comm::AtomicOp;

constexpr index kN = 61;       // uneven over 2 and 3 processes
constexpr long kPer = 200000;  // updates per thread: many on few indices, so that any race shows

// Update k of adding thread `thread`: +1 at this index.
index at(long k, int thread) {
  return (k * 7919 + 13 * thread) % kN;
}

// The table after `threads` threads of every process each added kPer updates (from zero).
std::vector<std::int64_t> expected(int threads) {
  std::vector<std::int64_t> t(kN, 0);
  for (int p = 0; p < rt().processes(); ++p)
    for (int thread = 0; thread < threads; ++thread)
      for (long k = 0; k < kPer; ++k) ++t[static_cast<std::size_t>(at(k, thread))];
  return t;
}

void expect_table(const compas::DistArray<std::int64_t>& u, int threads) {
  const std::vector<std::int64_t> want = expected(threads);
  int wrong = 0;
  for (index i = u.lo(); i < u.hi(); ++i)
    if (u[i] != want[static_cast<std::size_t>(i)] && ++wrong <= 3)
      ADD_FAILURE() << "index " << i << " holds " << u[i] << ", want "
                    << want[static_cast<std::size_t>(i)] << " (" << threads
                    << " adding threads per process)";
}

TEST(UpdateBatchThreads, TheThreadsOfRunAddThroughAddAndTheirHandles) {
  for (bool handles : {false, true}) {
    SCOPED_TRACE(handles ? "adder()" : "add()");
    compas::DistArray<std::int64_t> u(rt(), kN);
    compas::UpdateBatch<std::int64_t> batch(u, AtomicOp::add);
    rt().run([&](compas::ThreadCtx& t) {
      if (handles) {
        const auto add = batch.adder();
        for (long k = 0; k < kPer; ++k) add(at(k, t.thread()), 1);
      } else {
        for (long k = 0; k < kPer; ++k) batch.add(at(k, t.thread()), 1);
      }
    });
    batch.flush();
    expect_table(u, rt().threads());
  }
}

// A job of one process whose team adds at once: the updates wait in each thread's buckets, one per
// slice of the block, and a bucket that fills is applied to its slice under that slice's lock with
// plain operations (before, every add was an atomic on the block: nothing was held). Few updates
// are all held until flush(); many are applied as the buckets fill, and arrive all the same.
TEST(UpdateBatchThreads, AOneProcessTeamHoldsItsUpdatesUntilABucketFills) {
  if (rt().processes() != 1 || rt().threads() < 2 || omp_get_max_threads() < 2)
    GTEST_SKIP() << "a job of one process of 2 threads or more runs it";
  compas::DistArray<std::int64_t> u(rt(), kN);
  compas::UpdateBatch<std::int64_t> batch(u, AtomicOp::add);
  constexpr long kFew = 100;  // fewer than a bucket holds
  rt().run([&](compas::ThreadCtx& t) {
    const auto add = batch.adder();
    for (long k = 0; k < kFew; ++k) add(at(k, t.thread()), 1);
  });
  EXPECT_EQ(batch.pending(), static_cast<std::size_t>(kFew * rt().threads()));
  for (index i = u.lo(); i < u.hi(); ++i) EXPECT_EQ(u[i], 0) << "index " << i << " before flush";
  batch.flush();
  EXPECT_EQ(batch.pending(), 0u);
  std::vector<std::int64_t> want(kN, 0);
  for (int thread = 0; thread < rt().threads(); ++thread)
    for (long k = 0; k < kFew; ++k) ++want[static_cast<std::size_t>(at(k, thread))];
  for (index i = u.lo(); i < u.hi(); ++i)
    EXPECT_EQ(u[i], want[static_cast<std::size_t>(i)]) << "index " << i;

  for (index i = u.lo(); i < u.hi(); ++i) u[i] = 0;
  rt().run([&](compas::ThreadCtx& t) {
    const auto add = batch.adder();
    for (long k = 0; k < kPer; ++k) add(at(k, t.thread()), 1);
  });
  EXPECT_LT(batch.pending(), static_cast<std::size_t>(kPer * rt().threads()));
  batch.flush();
  expect_table(u, rt().threads());
}

// A batch made while OpenMP's team size was over 1 (a job of one process cuts its block into
// slices), added to by threads the program starts (ThreadSanitizer sees their start and join, and
// the slices' locks, which libgomp's team would hide from it): every update arrives.
TEST(UpdateBatchThreads, ProgramThreadsFillAndApplyTheSlicesBuckets) {
  constexpr index kBig = 8 * 1024 + 61;  // 9 slices of 1024 at one process
  const auto big = [](long k, int thread) { return (k * 7919 + 13 * thread) % kBig; };
  const int before = omp_get_max_threads();
  omp_set_num_threads(2);
  compas::DistArray<std::int64_t> u(rt(), kBig);
  compas::UpdateBatch<std::int64_t> batch(u, AtomicOp::add);
  omp_set_num_threads(before);
  std::vector<std::thread> threads;
  for (int thread = 0; thread < 3; ++thread)
    threads.emplace_back([&batch, &big, thread] {
      for (long k = 0; k < kPer; ++k) batch.add(big(k, thread), 1);
    });
  for (auto& t : threads) t.join();
  batch.flush();
  EXPECT_EQ(batch.pending(), 0u);
  std::vector<std::int64_t> want(static_cast<std::size_t>(kBig), 0);
  for (int p = 0; p < rt().processes(); ++p)
    for (int thread = 0; thread < 3; ++thread)
      for (long k = 0; k < kPer; ++k) ++want[static_cast<std::size_t>(big(k, thread))];
  int wrong = 0;
  for (index i = u.lo(); i < u.hi(); ++i)
    if (u[i] != want[static_cast<std::size_t>(i)] && ++wrong <= 3)
      ADD_FAILURE() << "index " << i << " holds " << u[i] << ", want "
                    << want[static_cast<std::size_t>(i)];
}

// A batch made while OpenMP's team size was 1, added to by a team of 3 (one process alone applies
// updates at add(): plain operations then, which a second thread must not share). Run where the
// job has 2 threads per process: the tsan build leaves those variants out (libgomp's fork and join
// are invisible to ThreadSanitizer).
TEST(UpdateBatchThreads, AnOpenMPTeamWiderThanTheBatchWasMadeFor) {
  const int before = omp_get_max_threads();
  if (before < 2) GTEST_SKIP() << "a job of 2 threads per process runs it";
  omp_set_num_threads(1);
  compas::DistArray<std::int64_t> u(rt(), kN);
  compas::UpdateBatch<std::int64_t> batch(u, AtomicOp::add);
  omp_set_num_threads(before);
  int team = 0;
#pragma omp parallel num_threads(3)
  {
#pragma omp single
    team = omp_get_num_threads();
    const int me = omp_get_thread_num();
    if (me == 2) {
      const auto add = batch.adder();
      for (long k = 0; k < kPer; ++k) add(at(k, me), 1);
    } else {
      for (long k = 0; k < kPer; ++k) batch.add(at(k, me), 1);
    }
  }
  batch.flush();
  expect_table(u, team);
}

TEST(UpdateBatchThreads, ThreadsTheProgramStartsAddBesideTheOneThatMadeTheBatch) {
  compas::DistArray<std::int64_t> u(rt(), kN);
  compas::UpdateBatch<std::int64_t> batch(u, AtomicOp::add);
  std::vector<std::thread> others;
  for (int thread = 1; thread < 3; ++thread)
    others.emplace_back([&batch, thread] {
      for (long k = 0; k < kPer; ++k) batch.add(at(k, thread), 1);
    });
  for (long k = 0; k < kPer; ++k) batch.add(at(k, 0), 1);
  for (auto& t : others) t.join();
  batch.flush();
  expect_table(u, 3);
  EXPECT_EQ(batch.pending(), 0u);
}

}  // namespace

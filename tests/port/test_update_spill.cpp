// UpdateBatch with more updates between two flushes than its buffers hold (every rank of a
// compas-run job runs these, P x T from 1x1 to 4x2 oversubscribed): full buckets go one-sided to
// their owners' inboxes while the threads add, so what a process holds stays bounded
// (pending() at most one bucket per adding thread and process), and flush() still returns with
// every update applied. Each process's threads add different numbers of updates (one process
// and one thread none at all), in several rounds; every rank rebuilds every thread's updates and
// checks its block against their serial sum after each flush. A flush refused (one process making
// another collective) loses none of the buckets already sent and repeats none.
#include <gtest/gtest.h>
#include <omp.h>

#include <cstdint>
#include <exception>
#include <string>
#include <vector>

#include "../common/job_main.hpp"
#include "compas/compas.hpp"

namespace {

using compas::index;
using compas::comm::AtomicOp;

constexpr index kN = 4099;  // uneven over every process count, not a power of 2

template <class T>
using Batch = compas::UpdateBatch<T>;

// More than a process's buffers and the inboxes at the others hold together.
long many() {
  return static_cast<long>(Batch<std::uint64_t>::kBucket * Batch<std::uint64_t>::kInboxChunks) *
         (P() + 3);
}

// How many updates thread t of process p adds in round `round`: uneven over processes, threads and
// rounds; none from the last process in round 0 and none from thread 1 in round 1.
long count_of(int p, int t, int round) {
  if ((round == 0 && p == P() - 1 && P() > 1) || (round == 1 && t == 1)) return 0;
  return many() / (1 + t) + 977L * p + 5003L * round;
}

// Update k of thread t of process p in round `round`: (index, value), a mix of every owner.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
index at_of(int p, int t, int round, long k) {
  const auto h = mix(static_cast<std::uint64_t>(k) * 131 + static_cast<std::uint64_t>(p) * 7 +
                     static_cast<std::uint64_t>(t) * 3 + static_cast<std::uint64_t>(round) * 1009);
  return static_cast<index>(h % static_cast<std::uint64_t>(kN));
}
std::uint64_t value_of(int p, int t, int round, long k) {
  return mix(static_cast<std::uint64_t>(k) ^ (static_cast<std::uint64_t>(p) << 40) ^
             (static_cast<std::uint64_t>(t) << 50) ^ (static_cast<std::uint64_t>(round) << 56)) %
         1000;
}

// Every thread of an OpenMP team adds its updates of `round`, through add() on even threads and a
// handle on odd ones; returns the team's size.
template <class T>
int add_round(Batch<T>& batch, int round) {
  int team = 1;
#pragma omp parallel
  {
    const int t = omp_get_thread_num();
#pragma omp single
    team = omp_get_num_threads();
    const long n = count_of(me(), t, round);
    if (t % 2 == 0) {
      for (long k = 0; k < n; ++k)
        batch.add(at_of(me(), t, round, k), static_cast<T>(value_of(me(), t, round, k)));
    } else {
      const auto add = batch.adder();
      for (long k = 0; k < n; ++k)
        add(at_of(me(), t, round, k), static_cast<T>(value_of(me(), t, round, k)));
    }
  }
  return team;
}

// The table (from index i holding i) after rounds 0..rounds-1 of every process's `team` threads,
// applied serially.
template <class T>
std::vector<T> reference(int rounds, int team, AtomicOp op) {
  std::vector<T> t(static_cast<std::size_t>(kN));
  for (index i = 0; i < kN; ++i) t[static_cast<std::size_t>(i)] = static_cast<T>(i);
  for (int round = 0; round < rounds; ++round)
    for (int p = 0; p < P(); ++p)
      for (int th = 0; th < team; ++th)
        for (long k = 0; k < count_of(p, th, round); ++k) {
          T& x = t[static_cast<std::size_t>(at_of(p, th, round, k))];
          const auto v = static_cast<T>(value_of(p, th, round, k));
          if (op == AtomicOp::add) x = static_cast<T>(x + v);
          if constexpr (std::is_integral_v<T>) {
            if (op == AtomicOp::bit_xor) x ^= v;
          }
        }
  return t;
}

template <class T>
void check_rounds(AtomicOp op) {
  SCOPED_TRACE(testing::Message() << typeid(T).name() << ", op " << static_cast<int>(op));
  compas::DistArray<T> u(rt(), kN, {.halo = 0});
  for (index i = u.lo(); i < u.hi(); ++i) u[i] = static_cast<T>(i);
  Batch<T> batch(u, op);
  for (int round = 0; round < 3; ++round) {
    const int team = add_round(batch, round);
    // Less than one bucket per adding thread and owner waits here (per adding thread and slice in
    // a job of one process, whose block is cut into at most kSlices).
    const int owners = P() == 1 ? Batch<T>::kSlices : P();
    const auto bound = Batch<T>::kBucket * static_cast<std::size_t>(team * owners);
    EXPECT_LT(batch.pending(), bound);
    batch.flush();
    EXPECT_EQ(batch.pending(), 0u);
    const std::vector<T> want = reference<T>(round + 1, team, op);
    int wrong = 0;
    for (index i = u.lo(); i < u.hi(); ++i)
      if (u[i] != want[static_cast<std::size_t>(i)] && ++wrong <= 3)
        ADD_FAILURE() << "round " << round << ": index " << i << " holds " << u[i] << ", want "
                      << want[static_cast<std::size_t>(i)];
  }
}

TEST(UpdateBatchSpill, MoreUpdatesThanTheBuffersHoldAllArriveXor) {
  check_rounds<std::uint64_t>(AtomicOp::bit_xor);
}

TEST(UpdateBatchSpill, MoreUpdatesThanTheBuffersHoldAllArriveAdd) {
  check_rounds<std::int64_t>(AtomicOp::add);
}

// Whole numbers added as doubles: exact in any order, so the inboxes' order does not matter.
TEST(UpdateBatchSpill, MoreUpdatesThanTheBuffersHoldAllArriveDouble) {
  check_rounds<double>(AtomicOp::add);
}

// One process adds everything, to every owner, while the others go straight to flush(): they
// apply what arrives while they wait there, or the one adding would wait for room forever.
TEST(UpdateBatchSpill, ProcessesWaitingInFlushTakeWhatOneProcessStillSends) {
  compas::DistArray<std::int64_t> u(rt(), kN, {.halo = 0});
  Batch<std::int64_t> batch(u, AtomicOp::add);
  const long n = 4 * many();
  if (me() == 0)
    for (long k = 0; k < n; ++k) batch.add(static_cast<index>(k % kN), 1);
  batch.flush();
  for (index i = u.lo(); i < u.hi(); ++i)
    EXPECT_EQ(u[i], n / kN + (i < n % kN ? 1 : 0)) << "index " << i;
}

// A refused flush keeps the updates the batch holds, and the buckets already sent are applied at
// their owner: after the next flush every update is there exactly once. (Fewer buckets than an
// inbox holds: the owner making another collective applies nothing meanwhile.)
TEST(UpdateBatchSpill, ARefusedFlushLosesNoSentBucketAndRepeatsNone) {
  if (P() < 2) GTEST_SKIP() << "needs two processes";
  compas::DistArray<std::int64_t> u(rt(), kN, {.halo = 0});
  Batch<std::int64_t> batch(u, AtomicOp::add);
  const compas::Range last = u.partition().part(P() - 1);
  const long n = 3 * static_cast<long>(Batch<std::int64_t>::kBucket) + 17;
  if (me() == 0)
    for (long k = 0; k < n; ++k) batch.add(last.lo + k % last.size(), 1);
  if (me() == 0) {
    EXPECT_EQ(batch.pending(), 17u);  // three buckets sent
  }
  std::string err;
  try {
    if (me() == 1)
      (void)compas::allgather(rt(), 1);
    else
      batch.flush();
  } catch (const std::exception& e) {
    err = e.what();
  }
  EXPECT_NE(err.find("process 1 calls allgather"), std::string::npos) << err;
  if (me() == 0) {
    EXPECT_EQ(batch.pending(), 17u);
  }
  batch.flush();
  for (index i = u.lo(); i < u.hi(); ++i) {
    const long want =
        last.contains(i) ? n / last.size() + ((i - last.lo) < n % last.size() ? 1 : 0) : 0;
    EXPECT_EQ(u[i], want) << "index " << i;
  }
}

}  // namespace

// Signals and atomics of windows across real processes: put_signal, signal_add after a put,
// non-blocking atomics, fetch_add under contention, compare_swap. Part of test_comm_rma (see
// test_rma.cpp): every rank runs every test, in the same order.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "compas/comm/comm.hpp"
#include "rma_job.hpp"

namespace {

using namespace compas::comm;
using namespace rma_job;

TEST(Rma, PutSignalDataVisibleWhenSignalIs) {
  // Ring: rank r streams rounds of a growing payload to r+1; the receiver checks the whole
  // payload of round k as soon as its signal reaches k, before acknowledging.
  const int p = nranks();
  const int next = (rank() + 1) % p, prev = (rank() - 1 + p) % p;
  constexpr int kRounds = 200;
  constexpr std::size_t kMax = 70000;
  Window<std::uint32_t> w(comm(), kMax, 2);
  std::vector<std::uint32_t> msg(kMax);
  for (int k = 1; k <= kRounds; ++k) {
    const std::size_t n = (static_cast<std::size_t>(k) * 7919) % kMax + 1;
    for (std::size_t i = 0; i < n; ++i) msg[i] = static_cast<std::uint32_t>(k * 100003 + i);
    if (k > 1) w.wait_until(1, static_cast<std::uint64_t>(k - 1), next);  // next consumed k-1
    w.put_signal(next, 0, std::span<const std::uint32_t>(msg.data(), n), 0);
    w.wait_until(0, static_cast<std::uint64_t>(k), prev);
    auto got = w.local();
    for (std::size_t i = 0; i < n; ++i)
      ASSERT_EQ(got[i], static_cast<std::uint32_t>(k * 100003 + i)) << "round " << k << " i " << i;
    w.signal_add(prev, 1);
  }
  w.wait_until(1, kRounds, next);
  comm().barrier();
}

TEST(Rma, PutThenSignalAddIsOrdered) {
  // A plain put followed by a separate signal_add to the same peer: the payload must be visible
  // once the signal is (the signal may travel a different path than the put).
  const int p = nranks();
  const int next = (rank() + 1) % p, prev = (rank() - 1 + p) % p;
  constexpr int kRounds = 100;
  constexpr std::size_t kMax = 40000;
  Window<std::uint64_t> w(comm(), kMax, 2);
  std::vector<std::uint64_t> msg(kMax);
  for (int k = 1; k <= kRounds; ++k) {
    const std::size_t n = (static_cast<std::size_t>(k) * 4481) % kMax + 1;
    for (std::size_t i = 0; i < n; ++i) msg[i] = static_cast<std::uint64_t>(k) << 32 | i;
    if (k > 1) w.wait_until(1, static_cast<std::uint64_t>(k - 1), next);
    w.put(next, 0, std::span<const std::uint64_t>(msg.data(), n));
    w.signal_add(next, 0);
    w.wait_until(0, static_cast<std::uint64_t>(k), prev);
    auto got = w.local();
    for (std::size_t i = 0; i < n; ++i)
      ASSERT_EQ(got[i], static_cast<std::uint64_t>(k) << 32 | i) << "round " << k << " i " << i;
    w.signal_add(prev, 1);
  }
  w.wait_until(1, kRounds, next);
  comm().barrier();
}

TEST(Rma, NonBlockingAtomicsAndPutSignals) {
  const int p = nranks(), me = rank();
  // fetch_add_nb from every rank to every rank's counter, all outstanding at once.
  Window<std::uint64_t> w(comm(), 2 + 64, 1);
  constexpr int kAdds = 16;
  std::vector<std::uint64_t> got(static_cast<std::size_t>(p) * kAdds, ~0ull);
  {
    std::vector<Request> reqs;
    for (int k = 0; k < kAdds; ++k)
      for (int r = 0; r < p; ++r)
        reqs.push_back(
            w.fetch_add_nb(r, 0, std::uint64_t{1}, &got[static_cast<std::size_t>(k * p + r)]));
    for (auto& q : reqs) q.wait();
  }
  for (auto v : got) EXPECT_LT(v, static_cast<std::uint64_t>(p) * kAdds);
  // compare_swap_nb: one winner per round on rank 0's word 1.
  std::uint64_t old = ~0ull;
  w.compare_swap_nb(0, 1, std::uint64_t{0}, static_cast<std::uint64_t>(me + 1), &old).wait();
  // put_signal_nb: several outstanding to the next rank, each payload checked at the signal.
  const int next = (me + 1) % p, prev = (me - 1 + p) % p;
  std::vector<std::uint64_t> payload(64);
  for (std::size_t i = 0; i < payload.size(); ++i)
    payload[i] = 1000u * static_cast<unsigned>(me) + i;
  {
    std::vector<Request> reqs;
    for (std::size_t part = 0; part < 4; ++part)
      reqs.push_back(w.put_signal_nb(
          next, 2 + part * 16, std::span<const std::uint64_t>(payload.data() + part * 16, 16), 0));
    for (auto& q : reqs) q.wait();
  }
  w.wait_until(0, 4, prev);
  for (std::size_t i = 0; i < 64; ++i)
    ASSERT_EQ(w.local()[2 + i], 1000u * static_cast<unsigned>(prev) + i) << "i " << i;
  comm().barrier();
  EXPECT_EQ(w.local()[0], static_cast<std::uint64_t>(p) * kAdds);
  // Exactly one rank found 0 in the compare-swap, and the word holds its value.
  std::vector<std::uint64_t> olds(static_cast<std::size_t>(p));
  {
    Window<std::uint64_t> gather(comm(), static_cast<std::size_t>(p), 0);
    gather.put(0, static_cast<std::size_t>(me), std::span<const std::uint64_t>(&old, 1));
    comm().barrier();
    if (me == 0) {
      int winners = 0;
      std::uint64_t winner_value = 0;
      for (int r = 0; r < p; ++r)
        if (gather.local()[static_cast<std::size_t>(r)] == 0) {
          ++winners;
          winner_value = static_cast<std::uint64_t>(r + 1);
        }
      EXPECT_EQ(winners, 1);
      EXPECT_EQ(w.local()[1], winner_value);
    }
    comm().barrier();
  }
}

TEST(Rma, FetchAddUnderContentionIsExact) {
  // Every thread of every rank adds to every rank's counters; the totals are exact and the
  // fetched values are all distinct.
  const int p = nranks();
  // Blocking atomics from 2 threads of each rank to every rank: 4 ranks on 2 cores (over tcp
  // between namespaces) take about 45 s for 500 rounds; 100 contend just as well.
  constexpr int kThreads = 2;
  const int adds = p > 2 ? 100 : 500;
  Window<std::uint64_t> w64(comm(), 1);
  Window<std::int32_t> w32(comm(), 2);
  std::vector<std::vector<std::uint64_t>> seen(kThreads);
  std::vector<std::thread> threads;
  for (int th = 0; th < kThreads; ++th)
    threads.emplace_back([&, th] {
      for (int i = 0; i < adds; ++i)
        for (int t = 0; t < p; ++t) {
          const std::uint64_t old = w64.fetch_add(t, 0, 3);
          if (t == 0) seen[th].push_back(old);
          w32.fetch_add(t, 1, -2);
        }
    });
  for (auto& t : threads) t.join();
  comm().barrier();
  EXPECT_EQ(w64.local()[0], 3ull * kThreads * adds * static_cast<std::uint64_t>(p));
  EXPECT_EQ(w32.local()[1], -2 * kThreads * adds * p);
  EXPECT_EQ(w32.local()[0], 0);
  // Values rank 0 returned to this rank are multiples of 3, all different across its threads.
  std::vector<std::uint64_t> all;
  for (auto& s : seen) all.insert(all.end(), s.begin(), s.end());
  std::sort(all.begin(), all.end());
  EXPECT_EQ(std::adjacent_find(all.begin(), all.end()), all.end());
  for (auto v : all) ASSERT_EQ(v % 3, 0u);
  comm().barrier();
}

TEST(Rma, CompareSwapElectsOneWinnerPerRound) {
  const int p = nranks();
  constexpr int kRounds = 50;
  Window<std::int64_t> w(comm(), kRounds);
  int won = 0;
  for (int k = 0; k < kRounds; ++k) {
    const std::int64_t old = w.compare_swap(0, static_cast<std::size_t>(k), 0, rank() + 1);
    if (old == 0)
      ++won;
    else
      ASSERT_GE(old, 1);
  }
  Window<std::int64_t> wins(comm(), 1);
  wins.fetch_add(0, 0, won);
  comm().barrier();
  if (rank() == 0) {
    EXPECT_EQ(wins.local()[0], kRounds);
    for (int k = 0; k < kRounds; ++k) {
      EXPECT_GE(w.local()[k], 1);
      EXPECT_LE(w.local()[k], p);
    }
  }
  // A failed swap leaves the value alone and returns it.
  const std::int64_t cur = w.compare_swap(0, 0, -5, 99);
  EXPECT_NE(cur, -5);
  comm().barrier();
  if (rank() == 0) {
    EXPECT_NE(w.local()[0], 99);
  }
  comm().barrier();
}

TEST(Rma, CompareSwapSwapsOnlyOnMatch) {
  // Each rank works on its own word at the next rank, alone: exact results, 4 and 8 bytes.
  const int p = nranks();
  const int t = (rank() + 1) % p;
  Window<std::int64_t> w(comm(), static_cast<std::size_t>(p));
  Window<std::uint32_t> w32(comm(), static_cast<std::size_t>(p));
  const auto me = static_cast<std::size_t>(rank());
  EXPECT_EQ(w.compare_swap(t, me, 0, 777), 0);
  EXPECT_EQ(w.compare_swap(t, me, 5, 1), 777);  // no match: unchanged, old value returned
  EXPECT_EQ(w.compare_swap(t, me, 777, -3), 777);
  EXPECT_EQ(w32.compare_swap(t, me, 0, 0xdeadbeefu), 0u);
  EXPECT_EQ(w32.compare_swap(t, me, 1, 2), 0xdeadbeefu);
  EXPECT_EQ(w32.fetch_add(t, me, 1), 0xdeadbeefu);
  comm().barrier();
  const int from = (rank() - 1 + p) % p;
  EXPECT_EQ(w.local()[static_cast<std::size_t>(from)], -3);
  EXPECT_EQ(w32.local()[static_cast<std::size_t>(from)], 0xdeadbef0u);
  comm().barrier();
}

// Comm::stats() counts every operation of every thread exactly, those of the fast paths of a
// load/store peer (WindowImpl::direct_peer) as those of the full paths: the thread that made the
// Comm and another make the same blocking puts, gets, put_signals and fetch_adds to the next rank
// (load/store or UCX, as the job's variant has it); nothing else is counted between the two
// stats().
TEST(Comm, StatsCountEveryThreadsOperations) {
  const int t = (rank() + 1) % nranks();
  constexpr std::uint64_t kOps = 1000;
  WindowBytes w(comm(), 4096, 1);
  comm().barrier();
  const CommStats before = comm().stats();
  const auto operate = [&] {
    std::uint64_t v = 0;
    for (std::uint64_t k = 0; k < kOps; ++k) {
      w.put(t, 0, &v, 8);
      w.get(t, 64, &v, 8);
      w.put_signal(t, 128, &v, 8, 0);
      (void)w.fetch_add(t, 256, 1, 8);
    }
  };
  operate();
  std::thread other(operate);
  other.join();
  const CommStats after = comm().stats();
  EXPECT_EQ(after.puts - before.puts, 4 * kOps);  // put and put_signal, on two threads
  EXPECT_EQ(after.bytes_put - before.bytes_put, 4 * kOps * 8);
  EXPECT_EQ(after.gets - before.gets, 2 * kOps);
  EXPECT_EQ(after.bytes_got - before.bytes_got, 2 * kOps * 8);
  EXPECT_EQ(after.signals - before.signals, 2 * kOps);
  EXPECT_EQ(after.atomics - before.atomics, 2 * kOps);
  comm().flush_all();
  comm().barrier();
  EXPECT_EQ(w.signal(0), 2 * kOps);
  std::uint64_t sum = 0;
  std::memcpy(&sum, w.local() + 256, 8);
  EXPECT_EQ(sum, 2 * kOps);
  comm().barrier();
}

}  // namespace

// Barrier stress: every algorithm x every wait policy x several team sizes (2, 3, 4 and 8; on a
// small host the larger ones are oversubscribed). The property checked in each phase k:
//  - no thread leaves the barrier of phase k before every thread has entered it: after the
//    barrier every thread's arrival counter is at least k (and at most k + 1: nobody can be two
//    phases ahead), and a shared arrival count is at least k * T;
//  - plain (non-atomic) writes made before the barrier are visible after it.
// Payloads are double-buffered by phase parity, so one barrier per phase is enough: a thread can
// overwrite buffer k % 2 only in phase k + 2, after every thread has left phase k's checks.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "compas/threads/barrier.hpp"
#include "compas/threads/team.hpp"
#include "compas/threads/topology.hpp"
#include "compas/threads/wait.hpp"
#include "host_topology.hpp"

namespace ct = compas::threads;

namespace {

using compas_threads_test::host;

std::uint64_t payload(int tid, int phase) {
  return (static_cast<std::uint64_t>(tid) << 40) ^
         (static_cast<std::uint64_t>(phase) * 0x9E3779B97F4A7C15ull);
}

// Shared state of one stress run and its checks. `wait(tid)` is the barrier under test.
class PhaseChecker {
 public:
  explicit PhaseChecker(int threads)
      : n_(threads),
        arrived_(std::make_unique<Padded[]>(static_cast<std::size_t>(threads))),
        errors_(static_cast<std::size_t>(threads)) {
    for (auto& b : buffer_) b.assign(static_cast<std::size_t>(threads), 0);
  }

  template <class Wait>
  void run_thread(int tid, int phases, Wait&& wait) {
    Errors& err = errors_[static_cast<std::size_t>(tid)];
    for (int k = 1; k <= phases; ++k) {
      arrived_[static_cast<std::size_t>(tid)].phase.store(k, std::memory_order_relaxed);
      buffer_[k % 2][static_cast<std::size_t>(tid)] = payload(tid, k);
      total_.fetch_add(1, std::memory_order_relaxed);
      wait(tid);
      for (int j = 0; j < n_; ++j) {
        const int a = arrived_[static_cast<std::size_t>(j)].phase.load(std::memory_order_relaxed);
        if (a < k) note(err.early, k, j, a);
        if (a > k + 1) note(err.ahead, k, j, a);
        if (buffer_[k % 2][static_cast<std::size_t>(j)] != payload(j, k)) note(err.stale, k, j, a);
      }
      const long total = total_.load(std::memory_order_relaxed);
      if (total < static_cast<long>(k) * n_) note(err.count, k, -1, static_cast<int>(total));
    }
    err.done = true;
  }

  // Call after all threads finished.
  void check(int phases) const {
    for (int t = 0; t < n_; ++t) {
      const Errors& e = errors_[static_cast<std::size_t>(t)];
      EXPECT_TRUE(e.done) << "thread " << t;
      EXPECT_EQ(e.early.count, 0) << "thread " << t << " left phase " << e.early.phase
                                  << " while thread " << e.early.other << " was at phase "
                                  << e.early.value;
      EXPECT_EQ(e.ahead.count, 0) << "thread " << t << " in phase " << e.ahead.phase
                                  << " saw thread " << e.ahead.other << " at phase "
                                  << e.ahead.value;
      EXPECT_EQ(e.stale.count, 0) << "thread " << t << " in phase " << e.stale.phase
                                  << " read a stale payload of thread " << e.stale.other;
      EXPECT_EQ(e.count.count, 0) << "thread " << t << " in phase " << e.count.phase << " saw only "
                                  << e.count.value << " arrivals";
    }
    EXPECT_EQ(total_.load(), static_cast<long>(phases) * n_);
    for (int t = 0; t < n_; ++t)
      EXPECT_EQ(arrived_[static_cast<std::size_t>(t)].phase.load(), phases);
  }

 private:
  struct alignas(64) Padded {
    std::atomic<int> phase{0};
  };
  struct Failure {
    int count = 0, phase = 0, other = 0, value = 0;
  };
  struct alignas(64) Errors {
    Failure early, ahead, stale, count;
    bool done = false;
  };
  static void note(Failure& f, int phase, int other, int value) {
    if (f.count++ == 0) {
      f.phase = phase;
      f.other = other;
      f.value = value;
    }
  }

  const int n_;
  std::unique_ptr<Padded[]> arrived_;
  std::vector<std::uint64_t> buffer_[2];
  alignas(64) std::atomic<long> total_{0};
  std::vector<Errors> errors_;
};

// Phases for a configuration: enough to be a stress, few enough that the slowest one (spin with
// more threads than cores, where a waiter gives its core away only after 65536 pauses) stays
// within a few seconds.
int phases_for(ct::WaitPolicy policy, int threads, int cores) {
  if (threads <= cores) return policy == ct::WaitPolicy::spin ? 3000 : 2000;
  if (policy == ct::WaitPolicy::spin) return threads > 2 * cores ? 80 : 150;
  return 2000;
}

using Param = std::tuple<ct::BarrierAlgorithm, ct::WaitPolicy, int>;

std::string param_name(const testing::TestParamInfo<Param>& info) {
  return ct::to_string(std::get<0>(info.param)) + "_" + ct::to_string(std::get<1>(info.param)) +
         "_" + std::to_string(std::get<2>(info.param)) + "threads";
}

}  // namespace

// ---- through a Team (pinned on the host) ------------------------------------------------------

class BarrierStress : public testing::TestWithParam<Param> {};

TEST_P(BarrierStress, NoThreadLeavesEarly) {
  const auto [algorithm, policy, threads] = GetParam();
  ct::TeamOptions o;
  o.threads = threads;
  o.barrier = algorithm;
  o.wait = policy;
  o.allow_oversubscribe = threads > host().pus();
  ct::Team team(host(), o);
  ASSERT_EQ(team.barrier().algorithm(), algorithm);
  ASSERT_EQ(team.barrier().threads(), threads);
  ASSERT_EQ(team.oversubscribed(), threads > host().pus());

  const int phases = phases_for(policy, threads, host().pus());
  PhaseChecker checker(threads);
  team.run([&](ct::ThreadCtx& ctx) {
    checker.run_thread(ctx.thread(), phases, [&](int) { ctx.barrier(); });
  });
  checker.check(phases);
}

INSTANTIATE_TEST_SUITE_P(
    AllAlgorithmsPoliciesSizes, BarrierStress,
    testing::Combine(testing::Values(ct::BarrierAlgorithm::central,
                                     ct::BarrierAlgorithm::dissemination,
                                     ct::BarrierAlgorithm::tree),
                     testing::Values(ct::WaitPolicy::spin, ct::WaitPolicy::yield,
                                     ct::WaitPolicy::block, ct::WaitPolicy::automatic),
                     testing::Values(2, 3, 4, 8)),
    param_name);

// ---- Barrier::create directly, with std::thread workers and socket groups ---------------------

namespace {

struct GroupParam {
  ct::BarrierAlgorithm algorithm;
  ct::WaitPolicy policy;
  std::vector<int> socket_of_thread;
};

void PrintTo(const GroupParam& p, std::ostream* os) {
  *os << ct::to_string(p.algorithm) << "/" << ct::to_string(p.policy) << "/sockets{";
  for (int x : p.socket_of_thread) *os << x << ",";
  *os << "}";
}

std::string group_name(const testing::TestParamInfo<GroupParam>& info) {
  std::string s =
      ct::to_string(info.param.algorithm) + "_" + ct::to_string(info.param.policy) + "_sockets";
  for (int x : info.param.socket_of_thread) s += std::to_string(x);
  return s;
}

std::vector<GroupParam> group_params() {
  const std::vector<std::vector<int>> layouts = {{0, 0, 1, 1}, {0, 1, 0, 1},       {0, 0, 0, 1},
                                                 {0, 1, 2},    {3, 3, 1, 1, 1, 7}, {0, 1, 2, 3}};
  std::vector<GroupParam> out;
  for (auto p : {ct::WaitPolicy::spin, ct::WaitPolicy::yield, ct::WaitPolicy::block,
                 ct::WaitPolicy::automatic})
    for (const auto& l : layouts) out.push_back({ct::BarrierAlgorithm::tree, p, l});
  // The other algorithms ignore the socket groups; one layout each is enough.
  for (auto a : {ct::BarrierAlgorithm::central, ct::BarrierAlgorithm::dissemination})
    for (auto p : {ct::WaitPolicy::block, ct::WaitPolicy::automatic})
      out.push_back({a, p, {0, 0, 1, 1}});
  return out;
}

}  // namespace

class BarrierGroups : public testing::TestWithParam<GroupParam> {};

TEST_P(BarrierGroups, NoThreadLeavesEarly) {
  const GroupParam& p = GetParam();
  const int threads = static_cast<int>(p.socket_of_thread.size());
  const int cores = host().pus();
  const bool over = threads > cores;
  auto barrier =
      ct::Barrier::create(p.algorithm, threads, ct::resolve(p.policy, over), p.socket_of_thread);
  ASSERT_EQ(barrier->threads(), threads);
  ASSERT_EQ(barrier->algorithm(), p.algorithm);

  const int phases = phases_for(p.policy, threads, cores);
  PhaseChecker checker(threads);
  auto body = [&](int tid) { checker.run_thread(tid, phases, [&](int t) { barrier->wait(t); }); };
  std::vector<std::thread> workers;
  for (int t = 1; t < threads; ++t) workers.emplace_back(body, t);
  body(0);
  for (auto& w : workers) w.join();
  checker.check(phases);
}

INSTANTIATE_TEST_SUITE_P(SocketLayouts, BarrierGroups, testing::ValuesIn(group_params()),
                         group_name);

// ---- explicit backoffs that sleep on (almost) every wait: the futex and fence paths -----------

namespace {

struct BackoffParam {
  ct::BarrierAlgorithm algorithm;
  const char* name;
  ct::Backoff backoff;
  std::vector<int> socket_of_thread;
};

void PrintTo(const BackoffParam& p, std::ostream* os) {
  *os << ct::to_string(p.algorithm) << "/" << p.name << "/" << p.socket_of_thread.size()
      << " threads";
}

std::vector<BackoffParam> backoff_params() {
  const std::pair<const char*, ct::Backoff> backoffs[] = {
      {"sleep", {0, 0, true, false}},
      {"asymmetric_sleep", {0, 0, true, true}},
      {"short_spin_asymmetric_sleep", {64, 1, true, true}},
      {"short_spin_sleep", {64, 1, true, false}},
  };
  const std::vector<std::vector<int>> layouts = {{0, 0}, {0, 0, 1}, {0, 1, 0, 1, 1}};
  std::vector<BackoffParam> out;
  for (auto a : {ct::BarrierAlgorithm::central, ct::BarrierAlgorithm::dissemination,
                 ct::BarrierAlgorithm::tree})
    for (const auto& [name, b] : backoffs)
      for (const auto& l : layouts) out.push_back({a, name, b, l});
  return out;
}

std::string backoff_name(const testing::TestParamInfo<BackoffParam>& info) {
  return ct::to_string(info.param.algorithm) + "_" + info.param.name + "_" +
         std::to_string(info.param.socket_of_thread.size()) + "threads";
}

}  // namespace

class BarrierBackoffs : public testing::TestWithParam<BackoffParam> {};

TEST_P(BarrierBackoffs, NoThreadLeavesEarly) {
  const BackoffParam& p = GetParam();
  const int threads = static_cast<int>(p.socket_of_thread.size());
  auto barrier = ct::Barrier::create(p.algorithm, threads, p.backoff, p.socket_of_thread);
  const int phases = 2000;
  PhaseChecker checker(threads);
  auto body = [&](int tid) { checker.run_thread(tid, phases, [&](int t) { barrier->wait(t); }); };
  std::vector<std::thread> workers;
  for (int t = 1; t < threads; ++t) workers.emplace_back(body, t);
  body(0);
  for (auto& w : workers) w.join();
  checker.check(phases);
}

INSTANTIATE_TEST_SUITE_P(SleepingWaits, BarrierBackoffs, testing::ValuesIn(backoff_params()),
                         backoff_name);

// ---- the barrier can be reused across many short episodes by freshly started threads ---------

TEST(Barrier, ReusedByNewThreadsEachRound) {
  for (auto a : {ct::BarrierAlgorithm::central, ct::BarrierAlgorithm::dissemination,
                 ct::BarrierAlgorithm::tree}) {
    constexpr int kThreads = 3;
    auto barrier =
        ct::Barrier::create(a, kThreads, ct::resolve(ct::WaitPolicy::block, true), {0, 1, 1});
    std::atomic<int> counter{0};
    int errors = 0;
    for (int round = 1; round <= 50; ++round) {
      std::vector<std::thread> ts;
      std::atomic<int> bad{0};
      for (int t = 0; t < kThreads; ++t)
        ts.emplace_back([&, t] {
          counter.fetch_add(1);
          barrier->wait(t);
          if (counter.load() < round * kThreads) bad.fetch_add(1);
          barrier->wait(t);
        });
      for (auto& th : ts) th.join();
      errors += bad.load();
    }
    EXPECT_EQ(errors, 0) << ct::to_string(a);
    EXPECT_EQ(counter.load(), 50 * kThreads);
  }
}

// cancel() releases threads waiting for one that never comes, whatever their wait policy (the
// sleeping ones too), and every later wait returns false at once.
TEST(Barrier, CancelReleasesTheWaitersWithFalse) {
  for (auto algorithm : {ct::BarrierAlgorithm::central, ct::BarrierAlgorithm::dissemination,
                         ct::BarrierAlgorithm::tree})
    for (auto policy : {ct::WaitPolicy::spin, ct::WaitPolicy::yield, ct::WaitPolicy::block})
      for (int threads : {2, 3, 5}) {
        SCOPED_TRACE(ct::to_string(algorithm) + "/" + ct::to_string(policy) + "/" +
                     std::to_string(threads));
        auto barrier =
            ct::Barrier::create(algorithm, threads, ct::resolve(policy, true), std::vector<int>{});
        std::atomic<int> passed{0}, refused{0}, later_refused{0};
        std::vector<std::thread> waiters;
        // Threads 1..n-1 complete 10 episodes with thread 0, then wait in an 11th without it.
        for (int t = 1; t < threads; ++t)
          waiters.emplace_back([&, t] {
            for (int i = 0; i < 10; ++i) passed += barrier->wait(t) ? 1 : 0;
            refused += barrier->wait(t) ? 0 : 1;
            later_refused += barrier->wait(t) ? 0 : 1;
          });
        for (int i = 0; i < 10; ++i) EXPECT_TRUE(barrier->wait(0));
        std::this_thread::sleep_for(std::chrono::milliseconds(20));  // let them go to sleep
        EXPECT_FALSE(barrier->cancelled());
        barrier->cancel(0);  // thread 0 entered 10 episodes, not the 11th
        EXPECT_TRUE(barrier->cancelled());
        for (auto& w : waiters) w.join();
        EXPECT_EQ(passed.load(), 10 * (threads - 1));
        EXPECT_EQ(refused.load(), threads - 1);
        EXPECT_EQ(later_refused.load(), threads - 1);
        EXPECT_FALSE(barrier->wait(0));
      }
}

// Wait policies, WaitWord and the parsing of barrier algorithm names.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <thread>

#include "../../threads/src/yield_probe.hpp"
#include "compas/threads/barrier.hpp"
#include "compas/threads/wait.hpp"

namespace ct = compas::threads;

namespace {

// Yields until pred() holds; false after a generous deadline (a hang guard, not a timing check).
template <class Pred>
bool eventually(Pred pred) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!pred()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::yield();
  }
  return true;
}

constexpr ct::Backoff kSleepOnly{0, 0, true};  // straight to the futex

}  // namespace

TEST(Wait, PolicyNamesRoundTrip) {
  for (auto p : {ct::WaitPolicy::spin, ct::WaitPolicy::yield, ct::WaitPolicy::block,
                 ct::WaitPolicy::automatic})
    EXPECT_EQ(ct::parse_wait_policy(ct::to_string(p)), p) << ct::to_string(p);
  EXPECT_EQ(ct::to_string(ct::WaitPolicy::spin), "spin");
  EXPECT_EQ(ct::to_string(ct::WaitPolicy::yield), "yield");
  EXPECT_EQ(ct::to_string(ct::WaitPolicy::block), "block");
  EXPECT_EQ(ct::to_string(ct::WaitPolicy::automatic), "auto");
}

TEST(Wait, BadPolicyNameThrows) {
  for (const std::string bad : {"", "auto_", "Spin", "BLOCK", "sleep", "spin "}) {
    try {
      (void)ct::parse_wait_policy(bad);
      ADD_FAILURE() << "no exception for '" << bad << "'";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("'" + bad + "'"), std::string::npos) << e.what();
    }
  }
}

TEST(Wait, Resolve) {
  EXPECT_TRUE(ct::resolve(ct::WaitPolicy::automatic, true).sleep);
  EXPECT_TRUE(ct::resolve(ct::WaitPolicy::automatic, false).sleep);
  // auto: spin when every thread has a core, only briefly when oversubscribed.
  EXPECT_LT(ct::resolve(ct::WaitPolicy::automatic, true).spins,
            ct::resolve(ct::WaitPolicy::automatic, false).spins);
  EXPECT_GT(ct::resolve(ct::WaitPolicy::automatic, false).spins, 0);
  for (bool over : {false, true}) {
    EXPECT_FALSE(ct::resolve(ct::WaitPolicy::spin, over).sleep);
    EXPECT_GT(ct::resolve(ct::WaitPolicy::spin, over).spins, 0);
    EXPECT_FALSE(ct::resolve(ct::WaitPolicy::yield, over).sleep);
    EXPECT_GT(ct::resolve(ct::WaitPolicy::yield, over).yields, 0);
    EXPECT_TRUE(ct::resolve(ct::WaitPolicy::block, over).sleep);
  }
}

TEST(Wait, ResolveFences) {
  // The asymmetric (membarrier) fence only where sleeping is rare: auto with a core per thread.
  EXPECT_EQ(ct::resolve(ct::WaitPolicy::automatic, false).asymmetric_fence,
            ct::asymmetric_fences_supported());
  EXPECT_FALSE(ct::resolve(ct::WaitPolicy::automatic, true).asymmetric_fence);
  EXPECT_FALSE(ct::resolve(ct::WaitPolicy::block, false).asymmetric_fence);
  EXPECT_FALSE(ct::resolve(ct::WaitPolicy::block, true).asymmetric_fence);
}

TEST(Wait, ReachedWrapsAround) {
  EXPECT_TRUE(ct::reached(5, 5));
  EXPECT_TRUE(ct::reached(6, 5));
  EXPECT_FALSE(ct::reached(4, 5));
  EXPECT_TRUE(ct::reached(5, 0xFFFFFFF0u));
  EXPECT_FALSE(ct::reached(0xFFFFFFF0u, 5));
  EXPECT_TRUE(ct::reached(0, 0xFFFFFFFFu));
  EXPECT_FALSE(ct::reached(0xFFFFFFFFu, 0));
}

TEST(Wait, AlreadyReachedReturnsAtOnce) {
  ct::WaitWord w;
  w.value.store(10);
  EXPECT_EQ(ct::wait_until_reached(w, 5, kSleepOnly), 10u);
  EXPECT_EQ(ct::wait_until_reached(w, 10, kSleepOnly), 10u);
  EXPECT_EQ(w.sleepers.load(), 0u);
  EXPECT_EQ(w.add_and_wake(3), 13u);
  EXPECT_EQ(w.value.load(), 13u);
  w.store_and_wake(2);
  EXPECT_EQ(w.value.load(), 2u);
  EXPECT_EQ(alignof(ct::WaitWord), 64u);
}

TEST(Wait, SleeperIsWokenByStoreAndWake) {
  ct::WaitWord w;
  std::atomic<bool> done{false};
  std::uint32_t seen = 0;
  std::thread waiter([&] {
    seen = ct::wait_until_reached(w, 2, kSleepOnly);
    done.store(true);
  });
  ASSERT_TRUE(eventually([&] { return w.sleepers.load() == 1; })) << "waiter never slept";
  // A value short of the target wakes the sleeper, which must go back to sleep.
  w.store_and_wake(1);
  EXPECT_FALSE(done.load());
  w.store_and_wake(2);
  waiter.join();
  EXPECT_TRUE(done.load());
  EXPECT_EQ(seen, 2u);
  EXPECT_EQ(w.sleepers.load(), 0u);
}

TEST(Wait, SleepersAreWokenByAddAndWake) {
  ct::WaitWord w;
  constexpr int kWaiters = 4;
  std::atomic<int> woken{0};
  std::thread waiters[kWaiters];
  for (auto& t : waiters)
    t = std::thread([&] {
      if (ct::reached(ct::wait_until_reached(w, 3, kSleepOnly), 3)) woken.fetch_add(1);
    });
  ASSERT_TRUE(eventually([&] { return w.sleepers.load() == kWaiters; }));
  EXPECT_EQ(w.add_and_wake(1), 1u);
  EXPECT_EQ(w.add_and_wake(1), 2u);
  EXPECT_EQ(woken.load(), 0);
  EXPECT_EQ(w.add_and_wake(1), 3u);
  for (auto& t : waiters) t.join();
  EXPECT_EQ(woken.load(), kWaiters);
  EXPECT_EQ(w.sleepers.load(), 0u);
}

TEST(Wait, SleeperAcrossWrapAround) {
  ct::WaitWord w;
  w.value.store(0xFFFFFFF0u);
  std::uint32_t seen = 0;
  std::thread waiter([&] { seen = ct::wait_until_reached(w, 5, kSleepOnly); });
  ASSERT_TRUE(eventually([&] { return w.sleepers.load() == 1; }));
  w.store_and_wake(0xFFFFFFFFu);  // still short of 5 in serial-number order
  w.store_and_wake(7);
  waiter.join();
  EXPECT_EQ(seen, 7u);
}

TEST(Wait, AsymmetricSleeperIsWoken) {
  // A sleeper fencing through membarrier, woken by a fence-free publish with the same Backoff,
  // and by store_and_wake, which must wake sleepers "whatever Backoff they wait with".
  const ct::Backoff asym{0, 0, true, true};
  for (bool use_publish : {true, false}) {
    ct::WaitWord w;
    std::uint32_t seen = 0;
    std::thread waiter([&] { seen = ct::wait_until_reached(w, 1, asym); });
    ASSERT_TRUE(eventually([&] { return w.sleepers.load() == 1; }));
    if (use_publish)
      w.publish(1, asym);
    else
      w.store_and_wake(1);
    waiter.join();
    EXPECT_EQ(seen, 1u) << (use_publish ? "publish" : "store_and_wake");
  }
}

TEST(Wait, PublishWakesSymmetricSleeper) {
  const ct::Backoff sym{0, 0, true, false};
  ct::WaitWord w;
  std::uint32_t seen = 0;
  std::thread waiter([&] { seen = ct::wait_until_reached(w, 4, sym); });
  ASSERT_TRUE(eventually([&] { return w.sleepers.load() == 1; }));
  w.publish(4, sym);
  waiter.join();
  EXPECT_EQ(seen, 4u);
}

namespace {

struct PingPongParam {
  const char* name;
  ct::Backoff backoff;
  bool use_publish;  // else store_and_wake
  std::uint32_t rounds = 20000;
};

std::string ping_pong_name(const testing::TestParamInfo<PingPongParam>& info) {
  return info.param.name;
}

}  // namespace

// Two threads hand a token back and forth through two words, each waiting for the other's
// value, many times: a wake-up lost anywhere stops the exchange. A watchdog turns such a hang
// into a failure (after a deadline far beyond what the exchange takes) by unblocking both.
class WaitPingPong : public testing::TestWithParam<PingPongParam> {};

TEST_P(WaitPingPong, NoLostWakeups) {
  const PingPongParam& p = GetParam();
  const std::uint32_t kRounds = p.rounds;
  constexpr std::uint32_t kUnstick = 0x40000000u;  // reaches every target of this test
  ct::WaitWord ping, pong;
  std::atomic<bool> done{false}, stuck{false};
  std::uint32_t lost_at = 0;
  auto post = [&](ct::WaitWord& w, std::uint32_t v) {
    if (p.use_publish)
      w.publish(v, p.backoff);
    else
      w.store_and_wake(v);
  };
  std::thread watchdog([&] {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!done.load() && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    if (done.load()) return;
    stuck.store(true);
    lost_at = ping.value.load();
    while (!done.load()) {  // until both sides have given up
      ping.store_and_wake(kUnstick);
      pong.store_and_wake(kUnstick);
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  });
  std::thread partner([&] {
    for (std::uint32_t i = 1; i <= kRounds && !stuck.load(); ++i) {
      ct::wait_until_reached(ping, i, p.backoff);
      if (!stuck.load()) post(pong, i);
    }
  });
  for (std::uint32_t i = 1; i <= kRounds && !stuck.load(); ++i) {
    post(ping, i);
    ct::wait_until_reached(pong, i, p.backoff);
  }
  partner.join();
  done.store(true);
  watchdog.join();
  EXPECT_FALSE(stuck.load()) << "a wake-up was lost around round " << lost_at;
  EXPECT_EQ(ping.sleepers.load(), 0u);
  EXPECT_EQ(pong.sleepers.load(), 0u);
}

INSTANTIATE_TEST_SUITE_P(
    Backoffs, WaitPingPong,
    testing::Values(PingPongParam{"sleep_publish", {0, 0, true, false}, true},
                    PingPongParam{"sleep_store_and_wake", {0, 0, true, false}, false},
                    PingPongParam{"asymmetric_sleep_publish", {0, 0, true, true}, true},
                    PingPongParam{"asymmetric_sleep_store_and_wake", {0, 0, true, true}, false},
                    PingPongParam{
                        "asymmetric_spin_then_sleep_publish", {40, 1, true, true}, true, 5000},
                    PingPongParam{"spin_then_sleep_publish", {40, 1, true, false}, true, 5000},
                    PingPongParam{"yield_publish", {0, 1000000, false, false}, true, 5000},
                    PingPongParam{"auto_alone_publish",
                                  ct::resolve(ct::WaitPolicy::automatic, false), true, 500},
                    PingPongParam{"auto_shared_publish",
                                  ct::resolve(ct::WaitPolicy::automatic, true), true, 5000}),
    ping_pong_name);

TEST(Wait, EveryPolicyWakes) {
  for (auto p : {ct::WaitPolicy::spin, ct::WaitPolicy::yield, ct::WaitPolicy::block,
                 ct::WaitPolicy::automatic}) {
    for (bool over : {false, true}) {
      ct::WaitWord w;
      std::uint32_t seen = 0;
      std::thread waiter([&] { seen = ct::wait_until_reached(w, 1, ct::resolve(p, over)); });
      std::this_thread::yield();
      w.store_and_wake(1);
      waiter.join();
      EXPECT_EQ(seen, 1u) << ct::to_string(p);
    }
  }
}

// The probe behind the oversubscribed auto wait (yields_hand_over), fed yields of both kinds: one
// that gives the CPU away (a short sleep: the other thread pinned to the CPU runs) must be found
// to hand over; one that keeps the CPU (a busy wait of a millisecond, as a yield the scheduler
// ignores until its next tick) must not, the limit passing first. The limits are generous in the
// direction each case must not reach.
void sleep_yield() {
  std::this_thread::sleep_for(std::chrono::microseconds(20));
}
void keep_cpu_yield() {
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(1);
  while (std::chrono::steady_clock::now() < until) {
  }
}

TEST(YieldProbe, AYieldThatGivesTheCpuAwayHandsOver) {
  EXPECT_TRUE(ct::detail::yield_hands_over(sleep_yield, 16, std::chrono::seconds(20)));
}

TEST(YieldProbe, AYieldThatKeepsTheCpuDoesNot) {
  EXPECT_FALSE(ct::detail::yield_hands_over(keep_cpu_yield, 64, std::chrono::milliseconds(10)));
}

TEST(BarrierAlgorithm, NamesRoundTrip) {
  for (auto a : {ct::BarrierAlgorithm::central, ct::BarrierAlgorithm::dissemination,
                 ct::BarrierAlgorithm::tree})
    EXPECT_EQ(ct::parse_barrier_algorithm(ct::to_string(a)), a);
  EXPECT_EQ(ct::to_string(ct::BarrierAlgorithm::central), "central");
  EXPECT_EQ(ct::to_string(ct::BarrierAlgorithm::dissemination), "dissemination");
  EXPECT_EQ(ct::to_string(ct::BarrierAlgorithm::tree), "tree");
}

TEST(BarrierAlgorithm, BadNamesThrow) {
  for (const std::string bad : {"", "Central", "butterfly", "tree ", "dissem"}) {
    try {
      (void)ct::parse_barrier_algorithm(bad);
      ADD_FAILURE() << "no exception for '" << bad << "'";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("'" + bad + "'"), std::string::npos) << e.what();
    }
  }
}

TEST(BarrierAlgorithm, CreateChecksArguments) {
  const ct::Backoff b = ct::resolve(ct::WaitPolicy::block, false);
  for (auto a : {ct::BarrierAlgorithm::central, ct::BarrierAlgorithm::dissemination,
                 ct::BarrierAlgorithm::tree}) {
    EXPECT_THROW((void)ct::Barrier::create(a, 0, b), std::invalid_argument);
    EXPECT_THROW((void)ct::Barrier::create(a, 3, b, {0, 1}), std::invalid_argument);
    auto bar = ct::Barrier::create(a, 3, b, {0, 0, 1});
    ASSERT_NE(bar, nullptr);
    EXPECT_EQ(bar->threads(), 3);
    EXPECT_EQ(bar->algorithm(), a);
    EXPECT_EQ(bar->backoff().spins, b.spins);
    EXPECT_EQ(bar->backoff().sleep, b.sleep);
    // One thread never waits.
    auto one = ct::Barrier::create(a, 1, b);
    for (int i = 0; i < 1000; ++i) one->wait(0);
  }
}

#include "compas/base/machine.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace {

using namespace std::chrono_literals;
using compas::base::FutexScope;

// A thread sleeping on a futex word wakes when another changes the word and wakes it.
void expect_wake(FutexScope scope) {
  std::atomic<std::uint32_t> word{0};
  std::atomic<bool> asleep{false}, woke{false};
  std::thread sleeper([&] {
    asleep.store(true);
    while (word.load() == 0) compas::base::futex_wait(word, 0, -1, scope);
    woke.store(true);
  });
  while (!asleep.load()) compas::base::cpu_relax();
  std::this_thread::sleep_for(20ms);  // most likely in the futex by now
  EXPECT_FALSE(woke.load());
  word.store(1);
  compas::base::futex_wake_all(word, scope);
  sleeper.join();
  EXPECT_TRUE(woke.load());
}

TEST(Futex, WakesAPrivateSleeper) {
  expect_wake(FutexScope::process);
}

TEST(Futex, WakesASharedSleeper) {
  expect_wake(FutexScope::shared);
}

TEST(Futex, WakeOneWakesOneSleeperOfTwo) {
  std::atomic<std::uint32_t> word{0};
  std::atomic<int> awake{0}, started{0};
  auto sleep = [&] {
    started.fetch_add(1);
    compas::base::futex_wait(word, 0, 2'000'000'000);  // 2 s at most
    awake.fetch_add(1);
  };
  std::thread a(sleep), b(sleep);
  while (started.load() < 2) compas::base::cpu_relax();
  std::this_thread::sleep_for(50ms);
  compas::base::futex_wake(word, 1);
  std::this_thread::sleep_for(200ms);
  EXPECT_EQ(awake.load(), 1);  // the other sleeps on until its timeout
  compas::base::futex_wake_all(word);
  a.join();
  b.join();
  EXPECT_EQ(awake.load(), 2);
}

TEST(Futex, WaitReturnsAtOnceOnAnotherValueAndAfterItsTimeout) {
  std::atomic<std::uint32_t> word{7};
  auto t0 = std::chrono::steady_clock::now();
  compas::base::futex_wait(word, 6);  // not the value: returns at once, no timeout needed
  compas::base::futex_wait(word, 7, 20'000'000);  // 20 ms
  const auto took = std::chrono::steady_clock::now() - t0;
  EXPECT_GE(took, 15ms);
  EXPECT_LT(took, 2s);
}

}  // namespace

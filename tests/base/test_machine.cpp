#include "compas/base/machine.hpp"

#include <gtest/gtest.h>

#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <thread>

namespace {

using namespace std::chrono_literals;
using compas::base::FutexScope;

// Whether thread `tid` of this process is blocked in the kernel (state S in its stat line).
bool blocked(pid_t tid) {
  std::ifstream in("/proc/self/task/" + std::to_string(tid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto paren = stat.rfind(')');
  return paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] == 'S';
}

// A thread sleeping on a futex word wakes when another changes the word and wakes it. The word is
// changed once the sleeper is seen blocked (in the futex: it does nothing else).
void expect_wake(FutexScope scope) {
  std::atomic<std::uint32_t> word{0};
  std::atomic<pid_t> tid{0};
  std::atomic<bool> woke{false};
  std::thread sleeper([&] {
    tid.store(static_cast<pid_t>(::syscall(SYS_gettid)));
    while (word.load() == 0) compas::base::futex_wait(word, 0, -1, scope);
    woke.store(true);
  });
  while (tid.load() == 0) compas::base::cpu_relax();
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (!blocked(tid.load()) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::yield();
  EXPECT_TRUE(blocked(tid.load())) << "the sleeper never blocked";
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

// Whether thread `tid` of this process is inside the futex system call now (its
// /proc/self/task/TID/syscall starts with the futex number): the handshake that tells a sleeper
// is really asleep, where a fixed sleep only makes it likely.
bool in_futex(pid_t tid) {
  std::ifstream in("/proc/self/task/" + std::to_string(tid) + "/syscall");
  long nr = -1;
  return (in >> nr) && nr == SYS_futex;
}

// Polls `done` until it holds, for 10 s at most.
bool eventually(const std::function<bool()>& done) {
  const auto until = std::chrono::steady_clock::now() + 10s;
  while (!done()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::yield();
  }
  return true;
}

TEST(Futex, WakeOneWakesOneSleeperOfTwo) {
  std::atomic<std::uint32_t> word{0};
  std::atomic<int> awake{0};
  std::atomic<pid_t> tids[2] = {0, 0};
  auto sleep = [&](int k) {
    tids[k].store(static_cast<pid_t>(::syscall(SYS_gettid)));
    compas::base::futex_wait(word, 0, 5'000'000'000);  // 5 s at most
    awake.fetch_add(1);
  };
  std::thread a(sleep, 0), b(sleep, 1);
  ASSERT_TRUE(eventually([&] {
    return tids[0] && tids[1] && in_futex(tids[0]) && in_futex(tids[1]);
  })) << "the sleepers never slept";
  compas::base::futex_wake(word, 1);
  ASSERT_TRUE(eventually([&] { return awake.load() == 1; })) << "nobody woke";
  // The other sleeps on until its timeout: still inside the futex call, and not counted.
  const pid_t other = in_futex(tids[0]) ? tids[0].load() : tids[1].load();
  EXPECT_TRUE(in_futex(other));
  EXPECT_EQ(awake.load(), 1);
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

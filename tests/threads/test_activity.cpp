// Activity accounting of the threads layer (activity.hpp): barrier episodes counted per thread
// and folded in by Team::run, and waits that did not find their value at once.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "compas/threads/activity.hpp"
#include "compas/threads/team.hpp"
#include "compas/threads/wait.hpp"
#include "host_topology.hpp"

namespace ct = compas::threads;

namespace {

using compas_threads_test::host;

// Makes one thread wait on a word until it is certainly asleep, then wakes it: one wait that
// did not find its value at once.
void one_slow_wait() {
  ct::WaitWord w;
  std::thread waiter([&] { ct::wait_until_reached(w, 1, ct::Backoff{0, 0, true, false}); });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (w.sleepers.load() == 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::yield();
  w.store_and_wake(1);
  waiter.join();
}

// Restores the accounting switch.
class AccountingGuard {
 public:
  explicit AccountingGuard(bool on) : previous_(ct::wait_accounting()) {
    ct::set_wait_accounting(on);
  }
  ~AccountingGuard() { ct::set_wait_accounting(previous_); }

 private:
  bool previous_;
};

}  // namespace

TEST(Activity, AccountingSwitch) {
  AccountingGuard guard(false);
  EXPECT_FALSE(ct::wait_accounting());
  ct::set_wait_accounting(true);
  EXPECT_TRUE(ct::wait_accounting());
  ct::set_wait_accounting(false);
  EXPECT_FALSE(ct::wait_accounting());
}

TEST(Activity, TeamBarriersAreCounted) {
  for (int threads : {1, 2, 5}) {
    ct::TeamOptions o;
    o.threads = threads;
    o.allow_oversubscribe = threads > host().pus();
    ct::Team team(host(), o);
    const auto before = ct::activity_totals();
    team.run([](ct::ThreadCtx& ctx) {
      for (int i = 0; i < 10; ++i) ctx.barrier();
    });
    team.run([](ct::ThreadCtx& ctx) {
      for (int i = 0; i < 3; ++i) ctx.barrier();
    });
    const auto after = ct::activity_totals();
    EXPECT_EQ(after.barriers - before.barriers, static_cast<std::uint64_t>(13 * threads))
        << threads << " threads";
    // A run without barriers adds none.
    team.run([](ct::ThreadCtx&) {});
    EXPECT_EQ(ct::activity_totals().barriers, after.barriers);
  }
}

TEST(Activity, SlowWaitsAreTimedWhileAccounting) {
  AccountingGuard guard(true);
  const auto before = ct::activity_totals();
  one_slow_wait();
  const auto after = ct::activity_totals();
  EXPECT_EQ(after.waits - before.waits, 1u);
  EXPECT_GT(after.wait_ns, before.wait_ns);
  // A wait that finds its value at once is not a wait.
  ct::WaitWord w;
  w.store_and_wake(5);
  ct::wait_until_reached(w, 5, ct::Backoff{0, 0, true, false});
  EXPECT_EQ(ct::activity_totals().waits, after.waits);
}

TEST(Activity, NoWaitTimeWithoutAccounting) {
  AccountingGuard guard(false);
  const auto before = ct::activity_totals();
  one_slow_wait();
  EXPECT_EQ(ct::activity_totals().wait_ns, before.wait_ns);
}

// Outside profiling, a wait costs nothing extra: not even the count is kept.
TEST(Activity, SlowWaitsAreNotCountedWithoutAccounting) {
  AccountingGuard guard(false);
  const auto before = ct::activity_totals();
  one_slow_wait();
  EXPECT_EQ(ct::activity_totals().waits - before.waits, 0u);
}

// The machine's load besides this process (compas/base/cpu_load.hpp): /proc/stat's cpu line,
// the shares over an interval, and a real child process's CPU time counted as another's.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>

#include "compas/base/cpu_load.hpp"

namespace {

using compas::base::CpuTimes;

TEST(CpuLoad, ProcStatsCpuLineSumsBusyTimeWithStealAndLeavesIdleOut) {
  const auto t = compas::base::parse_proc_stat(
      "cpu  100 5 30 1000 20 3 2 40 7 0\ncpu0 50 2 15 500 10 1 1 20 3 0\n");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->busy, 100u + 5 + 30 + 3 + 2 + 40);
  EXPECT_EQ(t->steal, 40u);
  EXPECT_EQ(t->total, t->busy + 1000 + 20);
  // Old kernels print fewer fields; a per-CPU line or text is not the total line.
  EXPECT_FALSE(compas::base::parse_proc_stat("cpu  1 2 3 4"));
  EXPECT_FALSE(compas::base::parse_proc_stat("cpu0 1 2 3 4 5 6 7 8"));
  EXPECT_FALSE(compas::base::parse_proc_stat("cpu  1 2 x 4 5 6 7 8"));
  EXPECT_FALSE(compas::base::parse_proc_stat(""));
}

TEST(CpuLoad, TheSharesLeaveThisProcesssOwnTimeOut) {
  // 2 CPUs for 1 s at 100 ticks/s: 200 ticks; 150 busy, of which this process used 0.5 s and
  // steal 20 ticks: others 100 of 200.
  const CpuTimes a{1000, 100, 5000};
  const CpuTimes b{1150, 120, 5200};
  const auto l = compas::base::load_between(a, b, 0.5, 100, 1.0);
  ASSERT_TRUE(l.known);
  EXPECT_DOUBLE_EQ(l.other_processes_share, 0.5);
  EXPECT_DOUBLE_EQ(l.steal_share, 0.1);
  // This process's time measured a little above the machine's busy time: no negative share.
  EXPECT_DOUBLE_EQ(compas::base::load_between(a, b, 2.0, 100, 1.0).other_processes_share, 0.0);
  // Counters that went backwards or did not move say nothing.
  EXPECT_FALSE(compas::base::load_between(b, a, 0, 100, 1.0).known);
  EXPECT_FALSE(compas::base::load_between(a, a, 0, 100, 1.0).known);
}

// A child that burns 0.4 s of CPU inside the interval is another process's time: at least 0.3 s
// of the machine's CPU time goes to others (other work on the machine can only add to it).
TEST(CpuLoad, AChildsCpuTimeCountsAsAnotherProcesssLoad) {
  if (!compas::base::machine_cpu_times()) GTEST_SKIP() << "/proc/stat cannot be read here";
  const compas::base::LoadMeter meter;
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    volatile double x = 0;
    while (compas::base::process_cpu_seconds() < 0.4) x = x + 1;
    std::_Exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  const auto l = meter.read();
  ASSERT_TRUE(l.known);
  const double cpus = static_cast<double>(::sysconf(_SC_NPROCESSORS_ONLN));
  EXPECT_GE(l.other_processes_share * l.seconds * cpus, 0.3)
      << "share " << l.other_processes_share << " over " << l.seconds << " s on " << cpus
      << " CPUs";
  EXPECT_LE(l.other_processes_share, 1.0);
}

// A command shorter than one clock tick (compas topology: a few ms) still gets its load: read()
// waits for /proc/stat to move on (at most a few ticks) instead of saying it is not known.
TEST(CpuLoad, AnIntervalShorterThanATickIsStillMeasured) {
  if (!compas::base::machine_cpu_times()) GTEST_SKIP() << "/proc/stat cannot be read here";
  for (int i = 0; i < 20; ++i) {
    const compas::base::LoadMeter meter;
    const auto l = meter.read();
    ASSERT_TRUE(l.known) << "read " << i << " after " << l.seconds << " s";
    EXPECT_LT(l.seconds, 1.0);
  }
}

}  // namespace

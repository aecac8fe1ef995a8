// StopSchedule at chosen times: the deadline, the grace before SIGKILL, a second request.
#include "compas/base/stop_schedule.hpp"

#include <gtest/gtest.h>

#include <chrono>

namespace {

using compas::base::StopSchedule;
using namespace std::chrono_literals;

const StopSchedule::Clock::time_point t0{std::chrono::seconds(1000)};

TEST(StopSchedule, WithoutATimeLimitNothingIsDue) {
  StopSchedule s(3000ms);
  s.set_time_limit(t0, 0);
  EXPECT_FALSE(s.deadline_passed(t0 + 1000h));
  EXPECT_FALSE(s.kill_due(t0 + 1000h));
  EXPECT_EQ(s.next(), StopSchedule::kNever);
  s.set_time_limit(t0, -5);
  EXPECT_FALSE(s.deadline_passed(t0 + 1000h));
  s.set_time_limit(t0, 1e300);  // beyond the clock: no limit, not an overflow into the past
  EXPECT_FALSE(s.deadline_passed(t0 + 1000h));
}

TEST(StopSchedule, TheDeadlineStopsThenTheGraceKills) {
  StopSchedule s(3000ms);
  s.set_time_limit(t0, 2.5);
  EXPECT_EQ(s.next(), t0 + 2500ms);
  EXPECT_FALSE(s.deadline_passed(t0 + 2499ms));
  ASSERT_TRUE(s.deadline_passed(t0 + 2500ms));
  s.stop(t0 + 2600ms);
  EXPECT_TRUE(s.stopping());
  EXPECT_FALSE(s.deadline_passed(t0 + 2700ms)) << "the deadline is spent once the stop went";
  EXPECT_EQ(s.next(), t0 + 5600ms);
  EXPECT_FALSE(s.kill_due(t0 + 5599ms));
  EXPECT_TRUE(s.kill_due(t0 + 5600ms));
  EXPECT_TRUE(s.killed());
  EXPECT_FALSE(s.kill_due(t0 + 9000ms)) << "SIGKILL is due once";
  EXPECT_FALSE(s.kill_now());
  EXPECT_EQ(s.next(), StopSchedule::kNever);
}

TEST(StopSchedule, AStopBeforeTheDeadlineTakesItsPlace) {
  StopSchedule s(1000ms);
  s.set_time_limit(t0, 10);
  s.stop(t0 + 1s);
  EXPECT_EQ(s.next(), t0 + 2s);
  s.stop(t0 + 1500ms);  // a later stop does not move the kill
  EXPECT_EQ(s.next(), t0 + 2s);
  EXPECT_FALSE(s.deadline_passed(t0 + 11s));
  EXPECT_TRUE(s.kill_due(t0 + 2s));
}

TEST(StopSchedule, ASecondRequestKillsAtOnceAndOnce) {
  StopSchedule s(3000ms);
  s.stop(t0);
  EXPECT_TRUE(s.kill_now());
  EXPECT_TRUE(s.killed());
  EXPECT_FALSE(s.kill_now());
  EXPECT_FALSE(s.kill_due(t0 + 1h)) << "killed already: the grace's SIGKILL does not follow";
}

}  // namespace

// When a supervisor stops what it supervises, and when it kills it: the run's deadline passes (or
// a stop is asked for) and the polite signal goes (SIGTERM, SIGINT, a forwarded one); SIGKILL
// follows once `grace` has passed, or at once on a second request. compas-run (a job's ranks) and
// the study (one kernel run) both keep this schedule; the clock is the caller's, so that the
// schedule is a plain value and every transition can be tested at chosen times.
#pragma once

#include <chrono>

namespace compas::base {

class StopSchedule {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr Clock::time_point kNever = Clock::time_point::max();

  explicit StopSchedule(std::chrono::milliseconds grace) : grace_(grace) {}

  // The run's time limit: `seconds` after `now`; 0 or less: none.
  void set_time_limit(Clock::time_point now, double seconds);

  // True once: the first call at or after the deadline, before any stop. The caller then sends
  // its polite signal and calls stop().
  bool deadline_passed(Clock::time_point now) const;
  // The polite signal went at `now`: SIGKILL is due `grace` later. The deadline is then spent;
  // a later stop() does not move the kill.
  void stop(Clock::time_point now);
  // True once: the first call at or after the kill is due. Marks the run killed.
  bool kill_due(Clock::time_point now);
  // A further request to stop while stopping: true once (kill now), false when already killed.
  bool kill_now();

  bool stopping() const { return stopping_; }
  bool killed() const { return killed_; }
  // The next time something is due (kNever when nothing is).
  Clock::time_point next() const;

 private:
  std::chrono::milliseconds grace_;
  Clock::time_point deadline_ = kNever;
  Clock::time_point kill_at_ = kNever;
  bool stopping_ = false;
  bool killed_ = false;
};

}  // namespace compas::base

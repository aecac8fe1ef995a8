// StopSchedule: the deadline, the polite stop and the kill after the grace.
#include "compas/base/stop_schedule.hpp"

namespace compas::base {

void StopSchedule::set_time_limit(Clock::time_point now, double seconds) {
  if (seconds <= 0) {
    deadline_ = kNever;
    return;
  }
  const auto limit = std::chrono::duration<double>(seconds);
  // A limit beyond what the clock holds is no limit.
  if (limit >= std::chrono::duration<double>(kNever - now)) {
    deadline_ = kNever;
    return;
  }
  deadline_ = now + std::chrono::duration_cast<Clock::duration>(limit);
}

bool StopSchedule::deadline_passed(Clock::time_point now) const {
  return !stopping_ && deadline_ != kNever && now >= deadline_;
}

void StopSchedule::stop(Clock::time_point now) {
  if (stopping_) return;
  stopping_ = true;
  kill_at_ = now + grace_;
}

bool StopSchedule::kill_due(Clock::time_point now) {
  if (killed_ || kill_at_ == kNever || now < kill_at_) return false;
  killed_ = true;
  return true;
}

bool StopSchedule::kill_now() {
  if (killed_) return false;
  killed_ = true;
  return true;
}

StopSchedule::Clock::time_point StopSchedule::next() const {
  if (killed_) return kNever;
  return stopping_ ? kill_at_ : deadline_;
}

}  // namespace compas::base

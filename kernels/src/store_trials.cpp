// The sort's trials of the two store kinds (store_trials.hpp).
#include "store_trials.hpp"

#include <algorithm>
#include <cstdio>
#include <limits>

namespace compas::kernels {

namespace {

constexpr std::array<bool, StoreTrials::kTrials> kStreams = {false, true, true, false};

}  // namespace

void StoreTrials::use_for(std::size_t size_key, int threads) {
  if (size_key == size_key_ && threads == threads_) return;
  *this = StoreTrials{};
  size_key_ = size_key;
  threads_ = threads;
}

bool StoreTrials::streams_at(int trial) {
  return trial >= 0 && trial < kTrials && kStreams[static_cast<std::size_t>(trial)];
}

void StoreTrials::record(double seconds) {
  if (!running()) return;
  seconds_[static_cast<std::size_t>(count_++)] = seconds;
}

double StoreTrials::fastest(bool streaming) const {
  double best = std::numeric_limits<double>::infinity();
  for (int i = 0; i < count_; ++i)
    if (kStreams[static_cast<std::size_t>(i)] == streaming)
      best = std::min(best, seconds_[static_cast<std::size_t>(i)]);
  return best;
}

bool StoreTrials::stream() const {
  return fastest(true) < fastest(false);
}

std::string StoreTrials::reason(const char* trials_of) const {
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "%s: timed on %d of %d trials (%s; cached, streaming, streaming, cached), the "
                "fastest cached %.3f ms, the fastest streaming %.3f ms",
                stream() ? "streaming" : "cached", count_, kTrials, trials_of, fastest(false) * 1e3,
                fastest(true) * 1e3);
  return buf;
}

}  // namespace compas::kernels

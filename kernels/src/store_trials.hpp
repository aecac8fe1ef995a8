// How the sort's `--stores auto` times streaming against cached stores in the doubtful band
// (keys between the caches below the last level and the last level): a few trials of whole
// passes (LSD) or scatters (buckets), spread over the first sorts of a size.
//
// One trial of each kind decided before, so one pass stalled by the machine (4-8 ms stalls were
// seen among 10 ms passes) could pick the wrong kind for the whole run. Now four trials in the
// order cached, streaming, streaming, cached (a drift over the trials weighs on both kinds alike),
// and each kind's time is the fastest of its trials: a stall only adds time, so the fastest trial
// is the kind's speed. Until all four have run, the faster so far is used.
#pragma once

#include <array>
#include <cstddef>
#include <string>

namespace compas::kernels {

class StoreTrials {
 public:
  static constexpr int kTrials = 4;

  // Whether the trials held were made for this size and team.
  bool holds(std::size_t size_key, int threads) const {
    return size_key == size_key_ && threads == threads_;
  }
  // Keeps the trials when they were made for this size and team, else starts over.
  void use_for(std::size_t size_key, int threads);
  bool running() const { return count_ < kTrials; }
  int count() const { return count_; }
  // The kind of trial `trial` (0 .. kTrials - 1; true: streaming), and of the next one.
  static bool streams_at(int trial);
  bool next_streams() const { return running() && streams_at(count_); }
  void record(double seconds);
  // The faster kind on the trials so far (cached before one trial of each).
  bool stream() const;
  // For the JSON: the choice and the fastest time of each kind over its trials.
  std::string reason(const char* trials_of) const;

 private:
  double fastest(bool streaming) const;
  std::size_t size_key_ = 0;
  int threads_ = 0;
  int count_ = 0;
  std::array<double, kTrials> seconds_{};
};

}  // namespace compas::kernels

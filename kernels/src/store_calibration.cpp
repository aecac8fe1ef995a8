// The block schedule of --stores auto's calibration sweeps and its decision.
#include "store_calibration.hpp"

#include <cstdio>
#include <vector>

#include "compas/base/statistics.hpp"

namespace compas::kernels::calibration {

bool streams(int sweep) {
  return (sweep - kFirst) / kBlock % 2 == 0;
}

bool timed(int sweep) {
  return (sweep - kFirst) % kBlock >= kUntimed;
}

namespace {

// The timed sweeps of each kind among sweeps kFirst..last of `took`.
struct TimedSweeps {
  std::vector<double> streaming, cached;
};
TimedSweeps timed_sweeps(std::span<const double> took, int last) {
  TimedSweeps t;
  for (int k = kFirst; k <= last && static_cast<std::size_t>(k) < took.size(); ++k)
    if (timed(k))
      (streams(k) ? t.streaming : t.cached).push_back(took[static_cast<std::size_t>(k)]);
  return t;
}

}  // namespace

double streaming_minus_cached(std::span<const double> took) {
  const TimedSweeps t = timed_sweeps(took, kLast);
  return base::median(t.streaming) - base::median(t.cached);
}

Vote early_vote(std::span<const double> took) {
  const TimedSweeps t = timed_sweeps(took, kEarlyLast);
  if (t.streaming.empty() || t.cached.empty()) return Vote::unclear;
  const base::Spread a = base::spread(t.streaming), b = base::spread(t.cached);
  if (a.max < b.min && a.median * (1 + kClearMargin) < b.median) return Vote::streaming;
  if (b.max < a.min && b.median * (1 + kClearMargin) < a.median) return Vote::cached;
  return Vote::unclear;
}

Vote job_vote(Vote lowest, Vote highest) {
  return lowest == highest ? lowest : Vote::unclear;
}

namespace {

std::string mib(std::uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  return buf;
}

}  // namespace

StoresPlan plan_stores(Asked asked, bool can_stream, int sweeps, std::uint64_t field_bytes,
                       std::uint64_t below_last_level, std::uint64_t last_level) {
  const std::string field = "the field (" + mib(field_bytes) + ", both copies)";
  if (!can_stream) return {false, false, "cached: this CPU has no streaming sweep"};
  if (asked == Asked::cached) return {false, false, "cached: --stores cached"};
  if (asked == Asked::streaming) return {false, true, "streaming: --stores streaming"};
  if (field_bytes <= below_last_level)
    return {false, false,
            "cached: " + field + " fits the caches below the last level (" + mib(below_last_level) +
                ")"};
  if (field_bytes > 2 * last_level)
    return {
        false, true,
        "streaming: " + field + " exceeds twice the last-level caches (" + mib(last_level) + ")"};
  const std::string between = field + " lies between the caches below the last level (" +
                              mib(below_last_level) + ") and twice the last level (" +
                              mib(last_level) + ")";
  if (sweeps >= kMinSweeps) return {true, false, "timing both kinds: " + between};
  return {false, false,
          "cached: " + between + ", and the run is too short to time both kinds (" +
              std::to_string(sweeps) + " < " + std::to_string(kMinSweeps) + " sweeps)"};
}

std::string timed_reason(double streaming_minus_cached) {
  char buf[160];
  std::snprintf(buf, sizeof buf,
                "%s: timed, the median streaming sweep minus the median cached one, summed over "
                "processes, is %+.1f us",
                streaming_minus_cached < 0 ? "streaming" : "cached", streaming_minus_cached * 1e6);
  return buf;
}

std::string early_reason(Vote vote) {
  const char* kind = vote == Vote::streaming ? "streaming" : "cached";
  return std::string(kind) +
         ": timed, after one block of each kind every process found every timed " + kind +
         " sweep faster than every one of the other kind, the medians more than " +
         std::to_string(static_cast<int>(kClearMargin * 100)) + "% apart";
}

}  // namespace compas::kernels::calibration

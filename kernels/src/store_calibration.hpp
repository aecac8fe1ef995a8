// How `--stores auto` times streaming against cached stores over a kernel's first sweeps.
//
// A sweep that follows one of the other kind pays for it: after streaming stores the next sweep
// reads its source from memory (the stores bypassed the caches), after cached ones the source is
// in the cache. Alternating single sweeps therefore charges each kind for the other, and favours
// streaming on a field that fits the cache (Laplace n = 640 ran 2.4x slower with the choice it
// made). The two copies of the field alternate, so the change takes at least two sweeps to wash
// out (the first reads one copy as the other kind left it, the second the other copy), and three
// on one thread of this machine (cached sweeps after streaming ones at n = 640: 285, 301, 221,
// then 102 us). So the kinds run in blocks of kBlock sweeps, the first kUntimed of each block are
// not timed, and the kind with the smaller median of its timed sweeps wins (a sweep stalled by
// the machine, seen at 4-8 ms among 0.1-0.3 ms ones, does not decide).
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace compas::kernels::calibration {

inline constexpr int kBlock = 6;                             // sweeps of one kind in a row
inline constexpr int kUntimed = 3;                           // the first ones of a block, not timed
inline constexpr int kBlocks = 4;                            // streaming, cached, streaming, cached
inline constexpr int kFirst = 2;                             // sweep 1 only warms up
inline constexpr int kLast = kFirst + kBlock * kBlocks - 1;  // the last calibration sweep
// Shorter runs do not calibrate: the calibration would be most of the run.
inline constexpr int kMinSweeps = kLast + 3;
inline constexpr int kTimedPerKind = (kBlock - kUntimed) * kBlocks / 2;
// The last sweep of the first streaming and the first cached block: a clear difference by then
// decides (early_vote), and the worse kind runs half as many sweeps.
inline constexpr int kEarlyLast = kFirst + 2 * kBlock - 1;
// How far apart the two kinds' medians must be to decide early: more than a run's sweeps move
// from one moment to the next, less than what choosing wrong costs (2.4x at Laplace n = 640).
inline constexpr double kClearMargin = 0.10;

// Whether calibration sweep `sweep` (kFirst..kLast) uses streaming stores, and is timed.
bool streams(int sweep);
bool timed(int sweep);

// `took[s]` is how long sweep s took (indices kFirst..kLast used): the median of the timed
// streaming sweeps minus that of the timed cached ones (negative: streaming is faster).
double streaming_minus_cached(std::span<const double> took);

// What the first two blocks (sweeps kFirst..kEarlyLast of `took`) say: a kind is clearly faster
// when every one of its timed sweeps took less than every timed sweep of the other and the
// medians differ by more than kClearMargin; otherwise unclear, and all blocks run.
enum class Vote : int { cached = -1, unclear = 0, streaming = 1 };
Vote early_vote(std::span<const double> took);
// The job's vote from the lowest and highest of its processes' votes: a kind only when every
// process voted for it (each process sweeps its own part; they must agree to stop together).
Vote job_vote(Vote lowest, Vote highest);

// What `--stores auto` does before any timing, from the sizes alone (a rule right for caches of
// any size): a field within the caches below the last level is swept with cached stores; one
// beyond twice the last-level caches streams (its copies cannot stay in the cache between sweeps,
// and streaming stores save the reads a cached store makes of each line); in between only a
// measurement tells (a virtual machine's reported last level may not be there), so the kinds are
// timed when the run has kMinSweeps sweeps, else it stays cached.
struct StoresPlan {
  bool calibrate = false;  // time both kinds on the first sweeps
  bool stream = false;     // the kind without timing (or until the timing decides)
  std::string reason;      // for the JSON: the rule and the sizes it compared
};
enum class Asked { automatic, cached, streaming };
StoresPlan plan_stores(Asked asked, bool can_stream, int sweeps, std::uint64_t field_bytes,
                       std::uint64_t below_last_level, std::uint64_t last_level);

// The calibration's verdict for the JSON: streaming minus cached median sweep, seconds.
std::string timed_reason(double streaming_minus_cached);
// The same when the first two blocks decided (a job_vote other than unclear).
std::string early_reason(Vote vote);

}  // namespace compas::kernels::calibration

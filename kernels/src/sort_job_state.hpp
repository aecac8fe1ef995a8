// Internal to the sort job (sort_job.hpp): one run's state on a process, shared by the job's
// driver and verification (sort_job.cpp) and the distributed sort's phases: splitters,
// partition, exchange (sort_job_partition.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "compas/comm/window.hpp"
#include "compas/kernels/sort_job.hpp"

namespace compas::kernels::sort::detail {

// Sample size: about 16K keys over the job (a quantile within ~1% of N / P), at least 256 per
// process.
constexpr std::uint64_t kSamples = 16384, kMinSamplesPerProcess = 256;

// Where the keys equal to one splitter value may go: processes [first, last].
struct TieValue {
  std::uint32_t value = 0;
  int first = 0, last = 0;
};

// What thread 0 of each process computes between barriers and every thread reads.
struct Plan {
  std::vector<std::uint32_t> u;             // distinct splitter values, ascending
  std::vector<TieValue> ties;               // one per value of u
  std::vector<int> interval_rank;           // non-tie keys of interval j (between u[j-1] and u[j])
  std::vector<std::uint64_t> less;          // keys of the job below u[i]
  std::vector<std::uint64_t> equal;         // keys of the job equal to u[i]
  std::vector<std::uint64_t> equal_before;  // keys equal to u[i] on lower-ranked processes
  std::vector<std::uint64_t> matrix;        // [q * P + r]: keys process q sends to process r
  std::vector<int> team_sizes;              // threads of each process
  std::uint64_t received = 0;               // keys this process receives
};

// Each thread's block is cut into kLanes consecutive parts that it walks interleaved (key i of
// every part, then key i + 1): each part has its own counters and send positions, so the
// read-modify-write chains of the counting and the scatter are four independent ones instead of
// one (with few destinations, consecutive keys hit the same counter and would wait on each other).
// Parts are ordered (thread, lane), which keeps the partition stable.
constexpr int kLanes = 4;

// One part's counts and cursors, read by the other threads between barriers.
struct alignas(64) Part {
  std::vector<std::uint64_t> interval;  // non-tie keys per interval (m + 1)
  std::vector<std::uint64_t> equal;     // ties per value (m)
  std::vector<std::uint64_t> dest;      // keys per destination process (P)
  std::vector<std::uint64_t> next;      // next send position per destination
  // Per tie value: (process, keys) runs in process order, and the cursor into them.
  std::vector<std::vector<std::pair<int, std::uint64_t>>> tie_runs;
};

// One thread's block of the process's keys, cut into its kLanes parts.
struct Lanes {
  const std::uint32_t* kp;  // the process's keys
  std::size_t first;        // this thread's parts: [first, first + kLanes)
  std::size_t lane_lo[kLanes], lane_len[kLanes];
  std::size_t common;  // the shortest lane (block_range: last)
  const std::uint32_t* lane_keys[kLanes];

  Lanes(threads::ThreadCtx& t, const std::uint32_t* keys, std::size_t nloc)
      : kp(keys), first(static_cast<std::size_t>(t.thread()) * kLanes) {
    const auto [lo, hi] = t.block(nloc);
    for (int q = 0; q < kLanes; ++q) {
      const auto [a, b] = threads::block_range(hi - lo, kLanes, q);
      lane_lo[q] = lo + a;
      lane_len[q] = b - a;
    }
    common = lane_len[kLanes - 1];
    for (int q = 0; q < kLanes; ++q) lane_keys[q] = kp + lane_lo[q];
  }

  // f(lane, key) over this thread's keys, lanes interleaved.
  template <class F>
  void each_key(F&& f) const {
    static_assert(kLanes == 4);
    const std::size_t len = common;  // a local bound: f's stores cannot change it
    for (std::size_t i = 0; i < len; ++i) {
      const std::uint32_t k0 = lane_keys[0][i], k1 = lane_keys[1][i], k2 = lane_keys[2][i],
                          k3 = lane_keys[3][i];
      f(0, k0);
      f(1, k1);
      f(2, k2);
      f(3, k3);
    }
    for (int q = 0; q < kLanes; ++q)
      if (lane_len[q] > len) f(q, kp[lane_lo[q] + len]);
  }
};

// The verification's first key out of order: the lowest process that has one, and where.
struct Where {
  std::uint64_t rank, pos;
};

// A process's first and last key after the sort, and how many it holds.
struct Ends {
  std::uint32_t first, last;
  std::uint64_t count;
};

// One run of the job on this process: its buffers, the plan thread 0 computes between barriers,
// and what the repetitions measure. Thread 0 alone writes the shared state; the barriers order it.
struct SortJob {
  Runtime& rt;
  const JobParams& jp;
  const int np, me, nt;
  const std::uint64_t n;
  std::size_t nlo = 0, nloc = 0;
  Options local;

  KeyBuffer keys, send, tmp;
  std::optional<comm::Window<std::uint32_t>> win;
  std::uint64_t signal_target = 0;  // of the current window
  Workspace ws;
  Plan plan;
  std::vector<Part> parts;

  JobResult res;
  Fingerprint before;
  std::string failures;
  Stats stats;
  double my_bytes = 0;
  std::vector<double> seconds;
  double t0_leader = 0, cpu0 = 0, my_cpu = 0;

  SortJob(Runtime& runtime, const JobParams& params);

  // sort_job.cpp. Every thread's part of every repetition: input, sort, verification; then the
  // job's statistics.
  void repetitions(threads::ThreadCtx& t);
  void first_input(threads::ThreadCtx& t, std::size_t lo, std::size_t hi);
  std::span<std::uint32_t> timed_sort(threads::ThreadCtx& t, int it);
  void verify(threads::ThreadCtx& t, std::span<std::uint32_t> out, int it);
  void report(std::span<const std::uint32_t> out, const Where& w, const Fingerprint& after,
              const std::vector<Ends>& ends, int it);
  void job_stats(threads::ThreadCtx& t);
  JobResult result();

  // sort_job_partition.cpp. The distributed sort (steps 1-5 of sort_job.hpp) on this thread;
  // returns the sorted keys.
  std::span<std::uint32_t> distributed(threads::ThreadCtx& t);
  void draw_splitters(threads::ThreadCtx& t, const std::uint32_t* kp);
  void count(threads::ThreadCtx& t, const Lanes& l);
  void job_counts(threads::ThreadCtx& t);
  void destinations(threads::ThreadCtx& t, const Lanes& l);
  void count_matrix(threads::ThreadCtx& t);
  void scatter(threads::ThreadCtx& t, const Lanes& l);
  void exchange(threads::ThreadCtx& t);
  std::uint64_t sent(int q, int r) const {
    return plan.matrix[static_cast<std::size_t>(q) * np + r];
  }
};

}  // namespace compas::kernels::sort::detail

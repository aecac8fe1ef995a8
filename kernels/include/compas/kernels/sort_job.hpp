// Radix sort on a job of P processes x T threads (sort.hpp has the local sort).
//
// The N keys are split over the processes first (Runtime::process_block), then over the threads of
// each (COMPaS section 4); every process generates its own block of the global sequence. One
// sort of the job:
//  1. Splitters from a sample. Each process draws a stratified sample of its keys (16K over the
//     job, at least 256 per process), the samples are allgathered, and the P-1 splitters are the
//     sample's P-quantiles, the same on every process. Keys between two splitter values go to the
//     process between them, so skewed data (npb, high) is balanced as well as the sample allows.
//  2. Ties are split by position. Keys equal to a splitter value (all of them for the equal
//     distribution) cannot be split by value. They take the places they will have in the sorted
//     output: the keys equal to v are numbered in (process, thread, position) order, the i-th
//     has global rank (keys < v) + i, and goes to the process whose equal share of the N places
//     holds that rank (clamped to the processes v may go to). The output stays globally sorted
//     (those processes hold only v beside keys below or above it) and equal keys are spread
//     evenly: all-equal keys end up N/P per process.
//  3. Partition. Each thread counts its keys per destination (and per tie value), team and job
//     scans give every thread its place in a send buffer laid out by destination, and the threads
//     scatter their keys there.
//  4. Exchange: an alltoallv on a window. The P x P counts are allgathered first, so every
//     process knows where in each receiver's window its block goes (after those of lower
//     ranks); each thread then put_signals its share of each block straight into the receiver's
//     window (its own block is copied), and thread 0 waits until every sender's every thread has
//     signalled. The window grows (collectively, every process agreeing from the same counts) only
//     when a receiver would get more keys than it holds.
//  5. The local radix sort of what arrived, on the team.
// Regions: "compute" (counting, scattering, local passes), "communicate" (sample, counts,
// puts and their wait), "synchronize" (barriers, and threads waiting while thread 0
// communicates).
//
// Verification (not timed): each process's keys in order, each process's last key <= the next
// non-empty process's first, and the multiset kept: the key count and the sum and xor of a
// 64-bit hash of every key, over the whole job (Runtime allreduce), equal before and after.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compas/kernels/sort.hpp"
#include "compas/runtime/runtime.hpp"

namespace compas::kernels::detail {
struct TestHooks;  // compas/kernels/test_hooks.hpp: for tests, not part of the interface
}  // namespace compas::kernels::detail

namespace compas::kernels::sort {

struct JobParams {
  std::uint64_t keys = std::uint64_t{4} << 20;  // the whole job's (the paper's size: 4M)
  Dist dist = Dist::uniform;
  int iters = 1;    // sorts of the same keys; best and median reported
  Options local{};  // digit width and stores of the local sort (cache_bytes from the topology)
  std::uint64_t seed = kDefaultSeed;
  const detail::TestHooks* test = nullptr;  // faults tests inject (none when null)
  // When set: this process's sorted keys after the last sort are copied here.
  std::vector<std::uint32_t>* output = nullptr;
  // Keys the receive window holds at first (0: 1.25 N / P + 64); it grows when a process would
  // receive more. Small values exercise the growth.
  std::size_t window_keys = 0;
};

struct JobResult {
  std::uint64_t keys = 0;
  Dist dist = Dist::uniform;
  int iters = 0;
  std::vector<double> iteration_seconds;  // each sort, slowest process
  double seconds = 0;                     // their median (as every kernel reports)
  double median_seconds = 0;              // the same, under its old name
  double best_seconds = 0;                // the fastest of them
  double cpu_seconds = 0;  // CPU time of every process over all timed sorts (wallclock vs CPU)
  double mkeys_per_s = 0;  // keys / seconds / 1e6
  double bytes = 0;        // byte model of one sort, whole job
  double model_gbs = 0;    // bytes / seconds / 1e9
  bool verified = false;
  std::string verification;                  // what was checked, and what failed
  std::uint64_t min_keys = 0, max_keys = 0;  // keys per process after the exchange
  int passes = 0;   // local passes that moved keys (the most of any process)
  int skipped = 0;  // local passes skipped (the fewest of any process)
  bool streaming = false;
  std::string stores_reason;  // why (Stats::stores_reason of the last local sort)
  std::string method;  // the local sort's: lsd, buckets, or "buckets and lsd" (some processes)
  int digit_bits = 0;
};

// Throws std::invalid_argument naming a bad value: no keys, iters < 1, bad local options.
// `processes_here`: the job's processes on this host (0: all of them), whose memory this host must
// give together; too much throws std::invalid_argument naming the size and the host's limit
// (base::memory_limit), before anything is allocated.
void check(const JobParams& p, int processes, int processes_here = 0);

// Collective: every process calls it (outside Runtime::run); runs on the runtime's team.
JobResult run(Runtime& rt, const JobParams& p);

}  // namespace compas::kernels::sort

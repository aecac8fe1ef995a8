// Memory-bandwidth probe (COMPaS section 2.1, Tables 1-2): the bandwidth of the load, store, copy
// and triad kernels per thread and in total as threads are added, and the saturation point, the
// thread count after which adding threads no longer raises the total much.
//
// Bytes are counted as STREAM and likwid-bench count them: bytes read plus bytes written, no
// write-allocate traffic (load 8 B, store 8 B, copy 16 B, triad 24 B per element). GB/s means
// 1e9 bytes per second, as likwid-bench's MByte/s means 1e6.
//
// The working set (`size_bytes`) is the total over all arrays of a kernel and all threads, like
// likwid-bench's `-w S0:SIZE:T`. Each thread first-touches its own block of every array, so its
// pages sit on its NUMA node, and streams over that block only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "compas/base/isa.hpp"
#include "compas/base/memory.hpp"
#include "compas/base/size.hpp"
#include "compas/base/stores.hpp"
#include "compas/perf/counters.hpp"
#include "compas/perf/region.hpp"
#include "compas/threads/placement.hpp"
#include "compas/threads/topology.hpp"

namespace compas::probes {

enum class MembwKernel {
  load,   // s += a[i]            8 B per element (read)
  store,  // a[i] = s             8 B (written)
  copy,   // c[i] = a[i]         16 B
  triad,  // a[i] = b[i] + s*c[i] 24 B (STREAM triad, 3 streams)
};

std::string to_string(MembwKernel k);
// "load", "store", "copy", "triad" (also the paper's "read", "write"). Throws
// std::invalid_argument naming the value.
MembwKernel parse_membw_kernel(const std::string& name);
// Comma-separated list, in the order given, duplicates dropped. Throws std::invalid_argument.
std::vector<MembwKernel> parse_membw_kernels(const std::string& list);
int membw_arrays(MembwKernel k);             // arrays the kernel streams over: 1, 1, 2, 3
int membw_bytes_per_element(MembwKernel k);  // bytes counted per element: 8, 8, 16, 24
bool membw_has_stores(MembwKernel k);        // false for load only

// Instruction set of the kernels (base::Isa; base::cpu_runs says whether this CPU has it). `sse2`
// is the x86-64 baseline (compiler-vectorized loops, _mm_stream_pd for non-temporal stores);
// `generic` is plain C++ elsewhere (no non-temporal stores).
// "auto" (empty: calibrate, see MembwOptions::isa), "avx512", "avx2", "sse2", "generic". Throws
// std::invalid_argument naming the value, also for an instruction set this CPU lacks.
std::optional<base::Isa> parse_membw_isa(const std::string& name);
base::Isa best_membw_isa();  // AVX-512F, else AVX2+FMA, else the baseline

// The stores of the store, copy and triad kernels: base::Stores (direct is the sort's alone).
// automatic tries both where the working set exceeds the caches below the last level (L2s) and
// keeps the faster; cached: ordinary stores (the line is read for ownership, then written back);
// streaming: non-temporal stores that bypass the caches, then an sfence.
using StoreMode = base::Stores;
// What membw's reports call them: "auto", "temporal", "non-temporal".
std::string store_mode_name(base::Stores m);
// "auto", "temporal" or "cached", "non-temporal" (also "nt") or "streaming". Throws
// std::invalid_argument naming the value.
base::Stores parse_store_mode(const std::string& name);

using threads::nt_threshold;  // see compas/threads/placement.hpp

// "4096", "64KiB", "1MiB", "1GiB", "1GB", "512M", "1.5G", "2 MiB": a positive byte count
// (base::SizeSyntax::bytes). Throws std::invalid_argument naming the value.
using base::parse_size;
// 1073741824 -> "1 GiB", 1000000000 -> "1 GB", 1536 -> "1.5 KiB", 100 -> "100 B".
using base::format_size;
// Installed physical memory in bytes (sysconf), 0 when unknown.
using base::physical_memory_bytes;

// The kernels themselves, on one block of memory, exposed for tests and for other probes. Any
// alignment and length work; non-temporal stores need no particular alignment of the caller (an
// unaligned head is written normally) and end with an sfence. The arrays must not overlap.
// `non_temporal` is ignored by the generic kernels. Throws std::invalid_argument when `isa` is not
// supported by this CPU (base::cpu_runs).
namespace membw {
double load(base::Isa isa, const double* a, std::size_t n);  // returns the sum of a[0..n)
void store(base::Isa isa, double* a, std::size_t n, double s, bool non_temporal);
void copy(base::Isa isa, double* c, const double* a, std::size_t n, bool non_temporal);
void triad(base::Isa isa, double* a, const double* b, const double* c, double s, std::size_t n,
           bool non_temporal);
}  // namespace membw

struct MembwOptions {
  std::vector<int> threads{1};  // thread counts; run in ascending order, duplicates dropped
  std::size_t size_bytes = std::size_t{1} << 30;  // total working set: all arrays, all threads
  std::vector<MembwKernel> kernels{MembwKernel::load, MembwKernel::store, MembwKernel::copy,
                                   MembwKernel::triad};
  threads::BindSpec bind{};
  int repeats = 5;  // timed repeats per kernel x thread count; the median is reported
  bool oversubscribe = false;
  base::Stores stores = base::Stores::automatic;
  // Kernel instruction set. Empty (auto): the best this CPU runs, and AVX2 as well where that is
  // AVX-512 (on some machines the 256-bit kernels stream faster); both are tried and the faster
  // kept, like the store variants.
  std::optional<base::Isa> isa;
  // A repeat runs the kernel over the whole working set as many times as it takes to last at
  // least this long (once for large sets).
  double min_repeat_ms = 50;
  bool huge_pages = true;  // madvise(MADV_HUGEPAGE) on the arrays
  // The arrays' pages on this NUMA node (logical index) whichever thread touches them; empty:
  // where the first touch puts them (each thread's own node).
  std::optional<int> memory_numa;
  // Counters (choose_events). When something was requested, every team gets a Profile and each
  // thread runs the timed repeats of every kernel as a region; nothing else is counted. Default:
  // nothing requested, no profile, no counter reads near the timed code.
  perf::EventChoice events{};
};

// One variant tried by the calibration before the timed repeats: best of its tries.
struct MembwTry {
  base::Isa isa = base::Isa::generic;
  bool non_temporal = false;
  double gbs = 0;
};

struct MembwRecord {
  MembwKernel kernel = MembwKernel::load;
  int threads = 1;
  std::string cpus;                   // OS PUs of the team, "0,1"
  bool oversubscribed = false;        // some PU runs two threads of the team
  std::size_t working_set_bytes = 0;  // all arrays, all threads (size_bytes rounded down)
  std::size_t elements = 0;           // per array, all threads
  int passes = 1;                     // sweeps over the working set per repeat
  int repeats = 0;
  std::uint64_t bytes_per_repeat = 0;  // counted bytes (read + written) of one repeat
  double bandwidth_gbs = 0;            // total: bytes / (last end - first start), median repeat
  double min_bandwidth_gbs = 0;
  double max_bandwidth_gbs = 0;
  double per_thread_gbs = 0;           // bandwidth_gbs / threads
  std::vector<double> thread_gbs;      // each thread's own rate (its bytes / its time), median
  double seconds = 0;                  // median repeat time
  std::optional<bool> non_temporal;    // stores used; empty for load
  base::Isa isa = base::Isa::generic;  // kernel variant used
  std::vector<MembwTry> tried;         // calibration, when more than one variant was possible
  bool verified = false;               // the arrays hold what the kernel must have computed
  // When counters were requested: the timed repeats as one region ("copy T=2") over the team's
  // threads, with the counters read and the derived metrics (bandwidth_gbs from the kernel's own
  // bytes over the slowest thread's time; memory traffic from last-level misses, ...).
  std::optional<perf::RegionSummary> region;
};

struct MembwSummary {
  MembwKernel kernel = MembwKernel::load;
  // The smallest thread count after which total bandwidth grows by less than 10% (see
  // membw_saturation_point); empty when it keeps growing or fewer than two counts ran.
  std::optional<int> saturation_threads;
  // False when a step's gain, over the spread of the repeats, lies across the 10% threshold: no
  // point is named then (saturation_threads empty) and saturation_note says which step and why.
  bool saturation_resolved = true;
  std::string saturation_note;
  int max_threads = 0;   // the largest count measured
  int counts = 0;        // thread counts measured
  double peak_gbs = 0;   // highest total bandwidth over the thread counts
  int peak_threads = 0;  // where it was reached
  std::string stores;    // "none" (load), "temporal", "non-temporal", or "mixed"
};

struct MembwResult {
  std::vector<MembwRecord> records;     // kernel-major: for each kernel, ascending thread counts
  std::vector<MembwSummary> summaries;  // one per kernel, in the order asked
  std::vector<int> threads;             // thread counts measured, ascending
  std::vector<std::string> counter_errors;  // threads whose event set could not be made
};

// Runs the probe. Throws std::invalid_argument for bad options: no thread counts, a count < 1,
// no kernels, repeats < 1, a working set below 64 bytes per array per thread or above half of
// physical memory, more threads than PUs without oversubscribe, an unsupported ISA.
MembwResult run_membw(const threads::Topology& topo, const MembwOptions& options);

// Saturation point of a bandwidth series measured at ascending thread counts: the first
// threads[i] such that total[i+1] < total[i] * (1 + min_gain). Empty when every step gains at
// least min_gain, or fewer than two points. {1,2,3}/{10,19,20} -> 2; {1,2,3}/{10,20,40} -> none;
// {1,2}/{10,10.5} -> 1. Throws std::invalid_argument when the lengths differ.
std::optional<int> membw_saturation_point(const std::vector<int>& threads,
                                          const std::vector<double>& total_gbs,
                                          double min_gain = 0.10);

// The same from medians with the spread of their repeats: a step saturates when even the widest
// gain its ranges allow (max[i+1] / min[i] - 1) is below min_gain, and grows when even the
// smallest (min[i+1] / max[i] - 1) reaches it. The first step that does neither makes the point
// not resolved (the spread is larger than the step): then `threads` is empty and the step and its
// gain range are given. With min == median == max this is membw_saturation_point.
struct BandwidthSpread {
  double median = 0, min = 0, max = 0;
};
struct Saturation {
  std::optional<int> threads;  // the saturation point, when resolved
  bool resolved = true;
  int from = 0, to = 0;                         // unresolved: the step
  double gain = 0, gain_min = 0, gain_max = 0;  // unresolved: its gain, median and range
  std::string note() const;  // "" when resolved; else the step, its gain range and the threshold
};
Saturation membw_saturation(const std::vector<int>& threads,
                            const std::vector<BandwidthSpread>& total, double min_gain = 0.10);

}  // namespace compas::probes

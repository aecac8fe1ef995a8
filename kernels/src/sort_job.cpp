#include "compas/kernels/sort_job.hpp"

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <stdexcept>

#include "compas/base/statistics.hpp"
#include "compas/comm/window.hpp"
#include "compas/kernels/test_hooks.hpp"
#include "compas/perf/region.hpp"
#include "compas/perf/timer.hpp"
#include "funneled.hpp"
#include "job_memory.hpp"
#include "sort_job_state.hpp"

namespace compas::kernels::sort {

namespace {

using Clock = std::chrono::steady_clock;

std::string hex(std::uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%016" PRIx64, v);
  return buf;
}

// Bytes of key buffers one process holds: keys and the other buffer alone, or keys, send buffer,
// window and the local sort's other buffer (the last two with room for imbalance).
double process_bytes(std::uint64_t keys, int processes) {
  const double per = static_cast<double>(keys) / processes + 1;
  return processes == 1 ? 8 * per : 4 * per * (2 + 2 * 1.25);
}

}  // namespace

void check(const JobParams& p, int processes, int processes_here) {
  if (p.keys == 0) throw std::invalid_argument("--keys 0: sort needs at least one key");
  if (p.iters < 1)
    throw std::invalid_argument("--iters " + std::to_string(p.iters) + ": at least 1");
  check(p.local);
  kernels::detail::check_job_memory("--keys " + std::to_string(p.keys),
                                    process_bytes(p.keys, processes), processes, processes_here,
                                    base::Mapping::shared);
}

namespace detail {

namespace {

std::string out_of_order(const Where& w, int me, std::span<const std::uint32_t> out) {
  std::string s = "process ";
  s += std::to_string(w.rank);
  s += ": keys out of order at position ";
  s += std::to_string(w.pos);
  if (static_cast<int>(w.rank) == me) {
    s += " (";
    s += std::to_string(out[w.pos]);
    s += " after ";
    s += std::to_string(out[w.pos - 1]);
    s += ")";
  }
  return s;
}

std::string boundary_out_of_order(const std::vector<Ends>& ends, int prev, int r) {
  std::string s = "process ";
  s += std::to_string(prev);
  s += "'s last key ";
  s += std::to_string(ends[static_cast<std::size_t>(prev)].last);
  s += " is above process ";
  s += std::to_string(r);
  s += "'s first ";
  s += std::to_string(ends[static_cast<std::size_t>(r)].first);
  return s;
}

std::string multiset_changed(const Fingerprint& after, const Fingerprint& before, std::uint64_t n) {
  std::string s = "the multiset of keys changed: ";
  s += std::to_string(after.count);
  s += " keys (expected ";
  s += std::to_string(n);
  s += "), hash sum ";
  s += hex(after.sum);
  s += " vs ";
  s += hex(before.sum);
  s += ", hash xor ";
  s += hex(after.xor_);
  s += " vs ";
  s += hex(before.xor_);
  return s;
}

}  // namespace

SortJob::SortJob(Runtime& runtime, const JobParams& params)
    : rt(runtime),
      jp(params),
      np(rt.processes()),
      me(rt.process()),
      nt(rt.threads()),
      n(jp.keys),
      local(jp.local) {
  const auto [lo, hi] = rt.process_block(static_cast<compas::index>(n));
  nlo = static_cast<std::size_t>(lo);
  nloc = static_cast<std::size_t>(hi - lo);
  if (local.cache_bytes == Options{}.cache_bytes) local.cache_bytes = cache_bytes(rt.topology());
  if (local.calibrate_bytes == Options{}.calibrate_bytes)
    local.calibrate_bytes = threads::nt_threshold(rt.topology(), rt.team().placement());
  if (local.bucket_bytes == Options{}.bucket_bytes)
    local.bucket_bytes = bucket_cache_bytes(rt.topology());

  keys = KeyBuffer(nloc);
  if (np == 1) {
    tmp = KeyBuffer(nloc);
  } else {
    send = KeyBuffer(nloc);
    const std::size_t cap =
        jp.window_keys ? jp.window_keys : static_cast<std::size_t>(n / np + n / np / 4 + 64);
    win.emplace(rt.comm(), cap, 1);
    tmp = KeyBuffer(cap);
  }
  parts.resize(static_cast<std::size_t>(nt) * kLanes);

  res.keys = n;
  res.dist = jp.dist;
  res.iters = jp.iters;
  res.digit_bits = local.digit_bits;
}

void SortJob::repetitions(threads::ThreadCtx& t) {
  const auto [lo, hi] = t.block(nloc);
  for (int it = 0; it < jp.iters; ++it) {
    // Input (not timed): this thread's part of this process's block of the sequence.
    generate(jp.dist, n, nlo + lo, std::span<std::uint32_t>(keys.data() + lo, hi - lo), jp.seed);
    if (it == 0) first_input(t, lo, hi);
    const std::span<std::uint32_t> out = timed_sort(t, it);
    // Verification (not timed).
    verify(t, out, it);
    t.barrier();
  }
  job_stats(t);
}

// Before the first sort: the other buffers touched where this thread will write them, outside the
// timed part, and the fingerprint of the input.
void SortJob::first_input(threads::ThreadCtx& t, std::size_t lo, std::size_t hi) {
  // Touch the other buffers where this thread will write them, outside the timed part.
  auto touch = [&](std::uint32_t* p, std::size_t len) {
    const auto [a, b] = t.block(len);
    if (b > a) std::memset(p + a, 0, (b - a) * 4);
  };
  if (np == 1) {
    touch(tmp.data(), nloc);
  } else {
    touch(send.data(), nloc);
    touch(tmp.data(), tmp.size());
    touch(win->local().data(), win->size());
  }
  const Fingerprint f = fingerprint(std::span<const std::uint32_t>(keys.data() + lo, hi - lo));
  const Fingerprint all =
      rt.allreduce(t, f, [](Fingerprint a, const Fingerprint& b) { return a + b; });
  if (t.is_leader()) before = all;
}

// One sort, timed from a job barrier to the slowest process's end; returns the sorted keys.
std::span<std::uint32_t> SortJob::timed_sort(threads::ThreadCtx& t, int it) {
  rt.barrier(t);  // every process starts together: the time is the slowest one's
  if (t.is_leader()) {
    t0_leader = std::chrono::duration<double>(Clock::now().time_since_epoch()).count();
    cpu0 = perf::process_cpu_seconds();
  }
  std::span<std::uint32_t> out =
      np == 1 ? sort(t, keys.span(), tmp.span(), ws, local, &stats) : distributed(t);
  t.barrier();
  double mine = 0;
  if (t.is_leader()) {
    mine = std::chrono::duration<double>(Clock::now().time_since_epoch()).count() - t0_leader;
    my_cpu += perf::process_cpu_seconds() - cpu0;
  }
  const double secs = rt.allreduce(t, mine, op::max{});
  if (t.is_leader()) {
    seconds.push_back(secs);
    // The byte model of this process: the local passes, and for a job the partition (count
    // read, scatter read and write) and the exchange (read, write) of its keys.
    my_bytes = stats.bytes + (np > 1 ? 20.0 * static_cast<double>(nloc) : 0.0);
    if (jp.output && it == jp.iters - 1) jp.output->assign(out.begin(), out.end());
    if (kernels::detail::hooks_of(jp.test).inject_fault && it == jp.iters - 1 && me == 0 &&
        !out.empty())
      out[out.size() / 2] ^= 1u;
  }
  t.barrier();
  return out;
}

// Each thread checks the order of its block of the sorted keys (and the first key after it) and
// takes its fingerprint; the job reduces both, and thread 0 gathers the processes' ends.
void SortJob::verify(threads::ThreadCtx& t, std::span<std::uint32_t> out, int it) {
  const auto [a, b] = t.block(out.size());
  std::uint64_t bad = ~std::uint64_t{0};  // first position out of order, job-wide order
  for (std::size_t i = std::max<std::size_t>(a, 1); i < b + (b < out.size() ? 1 : 0); ++i)
    if (out[i] < out[i - 1]) {
      bad = i;
      break;
    }
  const Fingerprint f = fingerprint(std::span<const std::uint32_t>(out.data() + a, b - a));
  const Fingerprint after =
      rt.allreduce(t, f, [](Fingerprint x, const Fingerprint& y) { return x + y; });
  const Where w = rt.allreduce(
      t, Where{bad == ~std::uint64_t{0} ? ~std::uint64_t{0} : static_cast<std::uint64_t>(me), bad},
      [](const Where& x, const Where& y) {
        return (y.rank < x.rank || (y.rank == x.rank && y.pos < x.pos)) ? y : x;
      });
  std::vector<Ends> ends(static_cast<std::size_t>(np));
  if (t.is_leader()) {
    const Ends e{out.empty() ? 0u : out.front(), out.empty() ? 0u : out.back(), out.size()};
    if (np > 1)
      rt.collectives().allgather(std::span<const Ends>(&e, 1), std::span<Ends>(ends));
    else
      ends[0] = e;
    report(out, w, after, ends, it);
  }
}

// Thread 0: what failed (the first sort that failed is kept), and the keys per process.
void SortJob::report(std::span<const std::uint32_t> out, const Where& w, const Fingerprint& after,
                     const std::vector<Ends>& ends, int it) {
  std::string why;
  auto add = [&](const std::string& s) {
    if (!why.empty()) why += "; ";
    why += s;
  };
  if (w.rank != ~std::uint64_t{0}) add(out_of_order(w, me, out));
  int prev = -1;
  for (int r = 0; r < np; ++r) {
    if (ends[static_cast<std::size_t>(r)].count == 0) continue;
    if (prev >= 0 &&
        ends[static_cast<std::size_t>(prev)].last > ends[static_cast<std::size_t>(r)].first)
      add(boundary_out_of_order(ends, prev, r));
    prev = r;
  }
  if (after.count != n || !(after == before)) add(multiset_changed(after, before, n));
  if (!why.empty() && failures.empty()) {
    failures = "sort ";
    failures += std::to_string(it + 1);
    failures += ": ";
    failures += why;
  }
  std::uint64_t lo_keys = ~std::uint64_t{0}, hi_keys = 0;
  for (const Ends& e : ends) {
    lo_keys = std::min(lo_keys, e.count);
    hi_keys = std::max(hi_keys, e.count);
  }
  res.min_keys = lo_keys;
  res.max_keys = hi_keys;
}

// The job's bytes, CPU time and local sort statistics, reduced over every process.
void SortJob::job_stats(threads::ThreadCtx& t) {
  const double bytes = rt.allreduce(t, t.is_leader() ? my_bytes : 0.0, op::sum{});
  const double cpu = rt.allreduce(t, t.is_leader() ? my_cpu : 0.0, op::sum{});
  const int passes = rt.allreduce(t, stats.passes, op::max{});
  const int skipped = rt.allreduce(t, stats.skipped, op::min{});
  const int streaming = rt.allreduce(t, stats.streaming ? 1 : 0, op::max{});
  // Buckets if every process sorted in buckets, lsd if none did, else both (a skewed share).
  const int in_buckets = rt.allreduce(t, stats.method == Method::buckets ? 1 : 0, op::sum{});
  if (t.is_leader()) {
    res.bytes = bytes;
    res.cpu_seconds = cpu;
    res.passes = passes;
    res.skipped = skipped;
    res.streaming = streaming != 0;
    res.stores_reason = "this process's local sort, last repetition: " + stats.stores_reason;
    res.method = in_buckets == rt.processes() * t.threads() ? "buckets"
                 : in_buckets == 0                          ? "lsd"
                                                            : "buckets and lsd";
  }
}

JobResult SortJob::result() {
  res.iteration_seconds = seconds;
  const auto spread = base::spread(seconds);
  // The median, as every kernel reports (the best beside it).
  res.seconds = res.median_seconds = spread.median;
  res.best_seconds = spread.min;
  res.mkeys_per_s = res.seconds > 0 ? static_cast<double>(n) / res.seconds / 1e6 : 0;
  res.model_gbs = res.seconds > 0 ? res.bytes / res.seconds / 1e9 : 0;
  res.verified = failures.empty();
  if (res.verified) {
    res.verification = std::to_string(n);
    res.verification += " keys sorted over ";
    res.verification += std::to_string(np);
    res.verification +=
        " process(es): each process's keys in order, process boundaries in order, "
        "the multiset kept (count, sum and xor of key hashes)";
  } else {
    res.verification = failures;
  }
  return res;
}

}  // namespace detail

JobResult run(Runtime& rt, const JobParams& jp) {
  check_funneled(rt, "kernels::sort::run");
  check(jp, rt.processes(), rt.processes_here());
  detail::SortJob job(rt, jp);
  rt.run([&](threads::ThreadCtx& t) { job.repetitions(t); });
  return job.result();
}

}  // namespace compas::kernels::sort

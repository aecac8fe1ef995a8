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
#include "compas/perf/membw.hpp"
#include "compas/perf/region.hpp"
#include "compas/perf/timer.hpp"

namespace compas::kernels::sort {

namespace {

// Sample size: about 16K keys over the job (a quantile within ~1% of N / P), at least 256 per
// process.
constexpr std::uint64_t kSamples = 16384, kMinSamplesPerProcess = 256;

using Clock = std::chrono::steady_clock;

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

// The number of splitter values <= k (the interval of k), and whether k equals the last of them.
// Branch-free (conditional moves, no test of j > 0 either): with uniform keys every comparison is
// a coin toss, and a branch on one made the counting pass seven times slower.
inline std::size_t interval_of(const std::uint32_t* u, std::size_t m, std::uint32_t k, bool& tie) {
  if (m == 0) {
    tie = false;
    return 0;
  }
  const std::uint32_t* b = u;
  for (std::size_t len = m; len > 1;) {
    const std::size_t half = len / 2;
    b = b[half] <= k ? b + half : b;
    len -= half;
  }
  // b is the last value <= k, or u[0] when none is: k is a tie exactly when *b == k.
  tie = *b == k;
  return static_cast<std::size_t>(b - u) + (*b <= k ? 1 : 0);
}

std::string hex(std::uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%016" PRIx64, v);
  return buf;
}

std::string gib(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GiB", bytes / (1024.0 * 1024 * 1024));
  return buf;
}

// Bytes of key buffers one process holds: keys and the other buffer alone, or keys, send buffer,
// window and the local sort's other buffer (the last two with room for imbalance).
double process_bytes(std::uint64_t keys, int processes) {
  const double per = static_cast<double>(keys) / processes + 1;
  return processes == 1 ? 8 * per : 4 * per * (2 + 2 * 1.25);
}

// The partition's scatter of one thread: keys of the kLanes parts starting at lane_keys (the
// last part the shortest), each to out[next[lane][destination]++]. Ties (keys equal to u[i]) take
// the destinations of their part's runs in turn. Kept out of line: inlined into the job's body,
// the loop ran several times slower.
[[gnu::noinline]] void scatter_parts(const std::uint32_t* const* lane_keys,
                                     const std::size_t* lane_len, const std::uint32_t* u,
                                     std::size_t m, const int* irank, Part* parts,
                                     std::uint32_t* __restrict out, std::uint64_t* const* next) {
  std::vector<std::size_t> run(m * kLanes, 0);     // [lane][value]: current tie run
  std::vector<std::uint64_t> left(m * kLanes, 0);  // keys left in it
  for (int q = 0; q < kLanes; ++q)
    for (std::size_t i = 0; i < m; ++i)
      if (!parts[q].tie_runs[i].empty()) left[q * m + i] = parts[q].tie_runs[i][0].second;
  auto place = [&](int q, std::uint32_t k) {
    bool tie = false;
    const std::size_t j = interval_of(u, m, k, tie);
    int r;
    if (!tie) {
      r = irank[j];
    } else {
      const std::size_t i = static_cast<std::size_t>(q) * m + j - 1;
      const auto& runs = parts[q].tie_runs[j - 1];
      while (left[i] == 0) left[i] = runs[++run[i]].second;
      r = runs[run[i]].first;
      --left[i];
    }
    out[next[q][r]++] = k;
  };
  static_assert(kLanes == 4);
  const std::size_t common = lane_len[kLanes - 1];
  for (std::size_t i = 0; i < common; ++i) {
    const std::uint32_t k0 = lane_keys[0][i], k1 = lane_keys[1][i], k2 = lane_keys[2][i],
                        k3 = lane_keys[3][i];
    place(0, k0);
    place(1, k1);
    place(2, k2);
    place(3, k3);
  }
  for (int q = 0; q < kLanes; ++q)
    if (lane_len[q] > common) place(q, lane_keys[q][common]);
}

}  // namespace

void check(const JobParams& p, int processes) {
  if (p.keys == 0) throw std::invalid_argument("--keys 0: sort needs at least one key");
  if (p.iters < 1)
    throw std::invalid_argument("--iters " + std::to_string(p.iters) + ": at least 1");
  check(p.local);
  const double need = process_bytes(p.keys, processes);
  const std::uint64_t phys = perf::physical_memory_bytes();
  if (phys && need > 0.9 * static_cast<double>(phys)) {
    std::string msg = "--keys ";
    msg += std::to_string(p.keys);
    msg += ": needs about ";
    msg += gib(need);
    msg += " per process, more than this machine's ";
    msg += gib(static_cast<double>(phys));
    msg += " of memory allows";
    throw std::invalid_argument(msg);
  }
}

JobResult run(Runtime& rt, const JobParams& jp) {
  check(jp, rt.nodes());
  const int np = rt.nodes(), me = rt.node(), nt = rt.threads();
  const std::uint64_t n = jp.keys;
  const auto [nlo, nhi] = rt.node_block(static_cast<std::size_t>(n));
  const std::size_t nloc = nhi - nlo;
  Options local = jp.local;
  if (local.cache_bytes == Options{}.cache_bytes) local.cache_bytes = cache_bytes(rt.topology());
  if (local.calibrate_bytes == Options{}.calibrate_bytes)
    local.calibrate_bytes = threads::nt_threshold(rt.topology(), rt.team().placement());
  if (local.bucket_bytes == Options{}.bucket_bytes)
    local.bucket_bytes = bucket_cache_bytes(rt.topology());

  KeyBuffer keys(nloc), send, tmp;
  std::optional<comm::Window<std::uint32_t>> win;
  std::uint64_t signal_target = 0;  // of the current window
  if (np == 1) {
    tmp = KeyBuffer(nloc);
  } else {
    send = KeyBuffer(nloc);
    const std::size_t cap =
        jp.window_keys ? jp.window_keys : static_cast<std::size_t>(n / np + n / np / 4 + 64);
    win.emplace(rt.comm(), cap, 1);
    tmp = KeyBuffer(cap);
  }
  Workspace ws;
  Plan plan;
  std::vector<Part> parts(static_cast<std::size_t>(nt) * kLanes);

  JobResult res;
  res.keys = n;
  res.dist = jp.dist;
  res.iters = jp.iters;
  res.digit_bits = local.digit_bits;
  Fingerprint before;
  std::string failures;
  Stats stats;
  double my_bytes = 0;

  // The distributed sort (steps 1-5 of the header) on this thread; returns the sorted keys.
  auto distributed = [&](threads::ThreadCtx& t) -> std::span<std::uint32_t> {
    const int tid = t.tid();
    const std::uint32_t* kp = keys.data();
    const std::size_t first = static_cast<std::size_t>(tid) * kLanes;  // this thread's parts
    const auto [lo, hi] = t.block(nloc);
    std::size_t lane_lo[kLanes], lane_len[kLanes];
    for (int q = 0; q < kLanes; ++q) {
      const auto [a, b] = threads::block_range(hi - lo, kLanes, q);
      lane_lo[q] = lo + a;
      lane_len[q] = b - a;
    }
    const std::size_t common = lane_len[kLanes - 1];  // the shortest lane (block_range: last)
    // f(lane, key) over this thread's keys, lanes interleaved.
    const std::uint32_t* lane_keys[kLanes];
    for (int q = 0; q < kLanes; ++q) lane_keys[q] = kp + lane_lo[q];
    static_assert(kLanes == 4);
    auto each_key = [&](auto&& f) {
      for (std::size_t i = 0; i < common; ++i) {
        const std::uint32_t k0 = lane_keys[0][i], k1 = lane_keys[1][i], k2 = lane_keys[2][i],
                            k3 = lane_keys[3][i];
        f(0, k0);
        f(1, k1);
        f(2, k2);
        f(3, k3);
      }
      for (int q = 0; q < kLanes; ++q)
        if (lane_len[q] > common) f(q, kp[lane_lo[q] + common]);
    };
    // 1. Splitters from a sample.
    if (t.is_leader()) {
      COMPAS_REGION(t, "communicate");
      const std::uint64_t k = std::min<std::uint64_t>(
          std::max<std::uint64_t>(kMinSamplesPerProcess, kSamples / np), n / np);
      std::vector<std::uint32_t> sample(k), all(k * np);
      const std::uint64_t stride = k ? nloc / k : 1;
      for (std::uint64_t j = 0; j < k; ++j) {
        const std::uint64_t jitter =
            (key_hash(static_cast<std::uint32_t>(j)) + static_cast<std::uint64_t>(me) * 977) %
            stride;
        sample[j] = kp[j * stride + jitter];
      }
      rt.collectives().allgather(std::span<const std::uint32_t>(sample),
                                 std::span<std::uint32_t>(all));
      std::sort(all.begin(), all.end());
      plan.u.clear();
      plan.ties.clear();
      for (int r = 1; r < np; ++r) {
        const std::uint32_t s = all.empty() ? 0 : all[all.size() * r / np];
        if (plan.u.empty() || plan.u.back() != s) {
          plan.u.push_back(s);
          plan.ties.push_back({s, r - 1, r});
        } else {
          plan.ties.back().last = r;
        }
      }
      plan.interval_rank.assign(plan.u.size() + 1, 0);
      for (std::size_t j = 1; j <= plan.u.size(); ++j)
        plan.interval_rank[j] = plan.ties[j - 1].last;
    }
    {
      COMPAS_REGION(t, "synchronize");
      t.barrier();
    }
    const std::vector<std::uint32_t>& u = plan.u;
    const std::size_t m = u.size();
    // 2-3. Count per interval and tie value.
    {
      COMPAS_REGION(t, "compute");
      // counts[lane][j]: keys of interval j; counts[lane][m + j]: keys equal to u[j - 1].
      const std::size_t w = 2 * m + 1;
      std::vector<std::uint64_t> counts(w * kLanes, 0);
      std::uint64_t* c = counts.data();
      const std::uint32_t* up = u.data();
      each_key([&](int q, std::uint32_t k) {
        bool tie = false;
        const std::size_t j = interval_of(up, m, k, tie);
        ++c[static_cast<std::size_t>(q) * w + j + (tie ? m : 0)];
      });
      for (int q = 0; q < kLanes; ++q) {
        const auto at = counts.begin() + static_cast<std::ptrdiff_t>(q * w);
        Part& part = parts[first + static_cast<std::size_t>(q)];
        part.interval.assign(at, at + static_cast<std::ptrdiff_t>(m + 1));
        part.equal.assign(at + static_cast<std::ptrdiff_t>(m + 1),
                          at + static_cast<std::ptrdiff_t>(w));
      }
    }
    {
      COMPAS_REGION(t, "synchronize");
      t.barrier();
    }
    if (t.is_leader()) {
      COMPAS_REGION(t, "communicate");
      std::vector<std::uint64_t> totals(2 * m + 1, 0), all(totals.size() * np);
      for (const Part& p : parts) {
        for (std::size_t j = 0; j <= m; ++j) totals[j] += p.interval[j];
        for (std::size_t i = 0; i < m; ++i) totals[m + 1 + i] += p.equal[i];
      }
      rt.collectives().allgather(std::span<const std::uint64_t>(totals),
                                 std::span<std::uint64_t>(all));
      plan.less.assign(m, 0);
      plan.equal.assign(m, 0);
      plan.equal_before.assign(m, 0);
      std::vector<std::uint64_t> interval(m + 1, 0);
      for (int q = 0; q < np; ++q) {
        const std::uint64_t* row = all.data() + static_cast<std::size_t>(q) * totals.size();
        for (std::size_t j = 0; j <= m; ++j) interval[j] += row[j];
        for (std::size_t i = 0; i < m; ++i) {
          plan.equal[i] += row[m + 1 + i];
          if (q < me) plan.equal_before[i] += row[m + 1 + i];
        }
      }
      std::uint64_t below = 0;
      for (std::size_t i = 0; i < m; ++i) {
        below += interval[i];
        plan.less[i] = below;
        below += plan.equal[i];
      }
    }
    {
      COMPAS_REGION(t, "synchronize");
      t.barrier();
    }
    // Each part's keys per destination; its ties go to the processes whose share of the sorted
    // order holds their ranks.
    for (int q = 0; q < kLanes; ++q) {
      COMPAS_REGION(t, "compute");
      const std::size_t v0 = first + static_cast<std::size_t>(q);
      Part& mine = parts[v0];
      mine.dest.assign(static_cast<std::size_t>(np), 0);
      for (std::size_t j = 0; j <= m; ++j)
        mine.dest[static_cast<std::size_t>(plan.interval_rank[j])] += mine.interval[j];
      mine.tie_runs.assign(m, {});
      for (std::size_t i = 0; i < m; ++i) {
        std::uint64_t g0 = plan.equal_before[i];
        for (std::size_t v = 0; v < v0; ++v) g0 += parts[v].equal[i];
        const std::uint64_t g1 = g0 + mine.equal[i];
        const TieValue& tv = plan.ties[i];
        // First tie number that belongs to process r (r > first): ceil(r N / P) - less.
        auto boundary = [&](int r) -> std::uint64_t {
          const std::uint64_t place = (static_cast<std::uint64_t>(r) * n + np - 1) / np;
          return place > plan.less[i] ? std::min(place - plan.less[i], plan.equal[i]) : 0;
        };
        for (int r = tv.first; r <= tv.last; ++r) {
          const std::uint64_t a = r == tv.first ? 0 : boundary(r);
          const std::uint64_t b = r == tv.last ? plan.equal[i] : boundary(r + 1);
          const std::uint64_t from = std::max(a, g0), to = std::min(b, g1);
          if (to > from) {
            mine.tie_runs[i].push_back({r, to - from});
            mine.dest[static_cast<std::size_t>(r)] += to - from;
          }
        }
      }
    }
    {
      COMPAS_REGION(t, "synchronize");
      t.barrier();
    }
    // The counts matrix, and room for what arrives.
    if (t.is_leader()) {
      COMPAS_REGION(t, "communicate");
      std::vector<std::uint64_t> row(static_cast<std::size_t>(np) + 1, 0);
      for (const Part& p : parts)
        for (int r = 0; r < np; ++r) row[static_cast<std::size_t>(r)] += p.dest[r];
      row[static_cast<std::size_t>(np)] = static_cast<std::uint64_t>(nt);
      std::vector<std::uint64_t> all(row.size() * np);
      rt.collectives().allgather(std::span<const std::uint64_t>(row),
                                 std::span<std::uint64_t>(all));
      plan.matrix.assign(static_cast<std::size_t>(np) * np, 0);
      plan.team_sizes.assign(static_cast<std::size_t>(np), 0);
      std::uint64_t most = 0;
      for (int r = 0; r < np; ++r) {
        std::uint64_t recv = 0;
        for (int q = 0; q < np; ++q) {
          const std::uint64_t c = all[static_cast<std::size_t>(q) * row.size() + r];
          plan.matrix[static_cast<std::size_t>(q) * np + r] = c;
          recv += c;
        }
        most = std::max(most, recv);
        if (r == me) plan.received = recv;
        plan.team_sizes[static_cast<std::size_t>(r)] =
            static_cast<int>(all[static_cast<std::size_t>(r) * row.size() + np]);
      }
      if (most > win->size()) {  // every process takes the same decision from the same counts
        const std::size_t cap = static_cast<std::size_t>(most + most / 8 + 64);
        win.reset();
        win.emplace(rt.comm(), cap, 1);
        signal_target = 0;
        tmp = KeyBuffer(cap);
      }
    }
    {
      COMPAS_REGION(t, "synchronize");
      t.barrier();
    }
    auto sent = [&](int q, int r) { return plan.matrix[static_cast<std::size_t>(q) * np + r]; };
    // 3. Scatter into the send buffer, laid out by destination, threads in order.
    {
      COMPAS_REGION(t, "compute");
      std::uint64_t* next[kLanes];
      for (int q = 0; q < kLanes; ++q) {
        const std::size_t v0 = first + static_cast<std::size_t>(q);
        Part& mine = parts[v0];
        mine.next.assign(static_cast<std::size_t>(np), 0);
        std::uint64_t base = 0;
        for (int r = 0; r < np; ++r) {
          std::uint64_t before = 0;
          for (std::size_t v = 0; v < v0; ++v) before += parts[v].dest[r];
          mine.next[static_cast<std::size_t>(r)] = base + before;
          base += sent(me, r);
        }
        next[q] = mine.next.data();
      }
      scatter_parts(lane_keys, lane_len, u.data(), m, plan.interval_rank.data(), &parts[first],
                    send.data(), next);
    }
    {
      COMPAS_REGION(t, "synchronize");
      t.barrier();
    }
    // 4. Exchange: this thread's share of every block, straight into the receivers' windows.
    {
      COMPAS_REGION(t, "communicate");
      std::vector<std::uint64_t> send_at(static_cast<std::size_t>(np), 0);
      for (int r = 1; r < np; ++r)
        send_at[static_cast<std::size_t>(r)] =
            send_at[static_cast<std::size_t>(r - 1)] + sent(me, r - 1);
      for (int d = 0; d < np; ++d) {
        const int r = (me + d) % np;
        std::uint64_t recv_at = 0;  // blocks of lower-ranked senders come first
        for (int q = 0; q < me; ++q) recv_at += sent(q, r);
        const auto [a, b] = threads::block_range(static_cast<std::size_t>(sent(me, r)), nt, tid);
        const std::uint32_t* from = send.data() + send_at[static_cast<std::size_t>(r)] + a;
        if (r == me) {
          if (b > a) std::memcpy(win->local().data() + recv_at + a, from, (b - a) * 4);
        } else if (b > a) {
          win->put_signal(r, static_cast<std::size_t>(recv_at + a),
                          std::span<const std::uint32_t>(from, b - a), 0);
        } else {
          win->signal_add(r, 0);
        }
      }
      if (t.is_leader()) {
        for (int q = 0; q < np; ++q)
          if (q != me) signal_target += static_cast<std::uint64_t>(plan.team_sizes[q]);
        win->wait_until(0, signal_target);
      }
    }
    {
      COMPAS_REGION(t, "synchronize");
      t.barrier();
    }
    // 5. The local sort of what arrived.
    const std::size_t got = static_cast<std::size_t>(plan.received);
    return sort(t, win->local().first(got), tmp.span().first(got), ws, local, &stats);
  };

  std::vector<double> seconds;
  double t0_leader = 0, cpu0 = 0, my_cpu = 0;
  rt.run([&](threads::ThreadCtx& t) {
    const auto [lo, hi] = t.block(nloc);
    for (int it = 0; it < jp.iters; ++it) {
      // Input (not timed): this thread's part of this process's block of the sequence.
      generate(jp.dist, n, nlo + lo, std::span<std::uint32_t>(keys.data() + lo, hi - lo), jp.seed);
      if (it == 0) {
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
        const Fingerprint f =
            fingerprint(std::span<const std::uint32_t>(keys.data() + lo, hi - lo));
        const Fingerprint all =
            rt.allreduce(t, f, [](Fingerprint a, const Fingerprint& b) { return a + b; });
        if (t.is_leader()) before = all;
      }
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
        if (jp.test.inject_fault && it == jp.iters - 1 && me == 0 && !out.empty())
          out[out.size() / 2] ^= 1u;
      }
      t.barrier();

      // Verification (not timed).
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
      struct Where {
        std::uint64_t rank, pos;
      };
      const Where w = rt.allreduce(
          t,
          Where{bad == ~std::uint64_t{0} ? ~std::uint64_t{0} : static_cast<std::uint64_t>(me), bad},
          [](const Where& x, const Where& y) {
            return (y.rank < x.rank || (y.rank == x.rank && y.pos < x.pos)) ? y : x;
          });
      struct Ends {
        std::uint32_t first, last;
        std::uint64_t count;
      };
      std::vector<Ends> ends(static_cast<std::size_t>(np));
      if (t.is_leader()) {
        const Ends e{out.empty() ? 0u : out.front(), out.empty() ? 0u : out.back(), out.size()};
        if (np > 1)
          rt.collectives().allgather(std::span<const Ends>(&e, 1), std::span<Ends>(ends));
        else
          ends[0] = e;
        std::string why;
        auto add = [&](const std::string& s) {
          if (!why.empty()) why += "; ";
          why += s;
        };
        if (w.rank != ~std::uint64_t{0}) {
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
          add(s);
        }
        int prev = -1;
        for (int r = 0; r < np; ++r) {
          if (ends[static_cast<std::size_t>(r)].count == 0) continue;
          if (prev >= 0 &&
              ends[static_cast<std::size_t>(prev)].last > ends[static_cast<std::size_t>(r)].first) {
            std::string s = "process ";
            s += std::to_string(prev);
            s += "'s last key ";
            s += std::to_string(ends[static_cast<std::size_t>(prev)].last);
            s += " is above process ";
            s += std::to_string(r);
            s += "'s first ";
            s += std::to_string(ends[static_cast<std::size_t>(r)].first);
            add(s);
          }
          prev = r;
        }
        if (after.count != n || !(after == before)) {
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
          add(s);
        }
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
      t.barrier();
    }
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
      res.method = in_buckets == rt.nodes() * t.nthreads() ? "buckets"
                   : in_buckets == 0                       ? "lsd"
                                                           : "buckets and lsd";
    }
  });

  res.iteration_seconds = seconds;
  const auto spread = base::spread(seconds);
  res.seconds = spread.min;
  res.median_seconds = spread.median;
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

}  // namespace compas::kernels::sort

// The distributed sort's phases (sort_job.hpp, steps 1-5): splitters from a sample, the
// partition of each thread's keys by destination (ties split by position), the exchange by
// put_signal into the receivers' windows, and the local sort of what arrived.
#include <algorithm>
#include <cstring>
#include <span>
#include <vector>

#include "compas/perf/region.hpp"
#include "sort_job_state.hpp"

namespace compas::kernels::sort::detail {

namespace {

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

void synchronize(threads::ThreadCtx& t) {
  COMPAS_REGION(t, "synchronize");
  t.barrier();
}

}  // namespace

std::span<std::uint32_t> SortJob::distributed(threads::ThreadCtx& t) {
  const Lanes lanes(t, keys.data(), nloc);
  // 1. Splitters from a sample.
  if (t.is_leader()) draw_splitters(t, lanes.kp);
  synchronize(t);
  // 2-3. Count per interval and tie value.
  count(t, lanes);
  synchronize(t);
  if (t.is_leader()) job_counts(t);
  synchronize(t);
  // Each part's keys per destination; its ties go to the processes whose share of the sorted
  // order holds their ranks.
  destinations(t, lanes);
  synchronize(t);
  // The counts matrix, and room for what arrives.
  if (t.is_leader()) count_matrix(t);
  synchronize(t);
  // 3. Scatter into the send buffer, laid out by destination, threads in order.
  scatter(t, lanes);
  synchronize(t);
  // 4. Exchange: this thread's share of every block, straight into the receivers' windows.
  exchange(t);
  synchronize(t);
  // 5. The local sort of what arrived.
  const std::size_t got = static_cast<std::size_t>(plan.received);
  return sort(t, win->local().first(got), tmp.span().first(got), ws, local, &stats);
}

// Thread 0: the sample, its allgather, and the splitter values with the processes their ties
// may go to.
void SortJob::draw_splitters(threads::ThreadCtx& t, const std::uint32_t* kp) {
  COMPAS_REGION(t, "communicate");
  const std::uint64_t k = std::min<std::uint64_t>(
      std::max<std::uint64_t>(kMinSamplesPerProcess, kSamples / np), n / np);
  std::vector<std::uint32_t> sample(k), all(k * np);
  const std::uint64_t stride = k ? nloc / k : 1;
  for (std::uint64_t j = 0; j < k; ++j) {
    const std::uint64_t jitter =
        (key_hash(static_cast<std::uint32_t>(j)) + static_cast<std::uint64_t>(me) * 977) % stride;
    sample[j] = kp[j * stride + jitter];
  }
  rt.collectives().allgather(std::span<const std::uint32_t>(sample), std::span<std::uint32_t>(all));
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
  for (std::size_t j = 1; j <= plan.u.size(); ++j) plan.interval_rank[j] = plan.ties[j - 1].last;
}

// This thread's keys per interval and per tie value, into its parts.
void SortJob::count(threads::ThreadCtx& t, const Lanes& l) {
  const std::vector<std::uint32_t>& u = plan.u;
  const std::size_t m = u.size();
  COMPAS_REGION(t, "compute");
  // counts[lane][j]: keys of interval j; counts[lane][m + j]: keys equal to u[j - 1].
  const std::size_t w = 2 * m + 1;
  std::vector<std::uint64_t> counts(w * kLanes, 0);
  std::uint64_t* c = counts.data();
  const std::uint32_t* up = u.data();
  l.each_key([&](int q, std::uint32_t k) {
    bool tie = false;
    const std::size_t j = interval_of(up, m, k, tie);
    ++c[static_cast<std::size_t>(q) * w + j + (tie ? m : 0)];
  });
  for (int q = 0; q < kLanes; ++q) {
    const auto at = counts.begin() + static_cast<std::ptrdiff_t>(q * w);
    Part& part = parts[l.first + static_cast<std::size_t>(q)];
    part.interval.assign(at, at + static_cast<std::ptrdiff_t>(m + 1));
    part.equal.assign(at + static_cast<std::ptrdiff_t>(m + 1), at + static_cast<std::ptrdiff_t>(w));
  }
}

// Thread 0: the process's totals, allgathered; the job's keys below and equal to each splitter
// value, and those equal to it on lower-ranked processes.
void SortJob::job_counts(threads::ThreadCtx& t) {
  const std::size_t m = plan.u.size();
  COMPAS_REGION(t, "communicate");
  std::vector<std::uint64_t> totals(2 * m + 1, 0), all(totals.size() * np);
  for (const Part& p : parts) {
    for (std::size_t j = 0; j <= m; ++j) totals[j] += p.interval[j];
    for (std::size_t i = 0; i < m; ++i) totals[m + 1 + i] += p.equal[i];
  }
  rt.collectives().allgather(std::span<const std::uint64_t>(totals), std::span<std::uint64_t>(all));
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

// Each part's keys per destination, and the runs of destinations its ties take.
void SortJob::destinations(threads::ThreadCtx& t, const Lanes& l) {
  const std::size_t m = plan.u.size();
  for (int q = 0; q < kLanes; ++q) {
    COMPAS_REGION(t, "compute");
    const std::size_t v0 = l.first + static_cast<std::size_t>(q);
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
}

// Thread 0: the P x P counts, allgathered with the team sizes; the window grows when a receiver
// would get more keys than it holds.
void SortJob::count_matrix(threads::ThreadCtx& t) {
  COMPAS_REGION(t, "communicate");
  std::vector<std::uint64_t> row(static_cast<std::size_t>(np) + 1, 0);
  for (const Part& p : parts)
    for (int r = 0; r < np; ++r) row[static_cast<std::size_t>(r)] += p.dest[r];
  row[static_cast<std::size_t>(np)] = static_cast<std::uint64_t>(nt);
  std::vector<std::uint64_t> all(row.size() * np);
  rt.collectives().allgather(std::span<const std::uint64_t>(row), std::span<std::uint64_t>(all));
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

// Each part's send positions (after the lower parts' keys for the same destination), then the
// scatter of this thread's keys to them.
void SortJob::scatter(threads::ThreadCtx& t, const Lanes& l) {
  COMPAS_REGION(t, "compute");
  std::uint64_t* next[kLanes];
  for (int q = 0; q < kLanes; ++q) {
    const std::size_t v0 = l.first + static_cast<std::size_t>(q);
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
  scatter_parts(l.lane_keys, l.lane_len, plan.u.data(), plan.u.size(), plan.interval_rank.data(),
                &parts[l.first], send.data(), next);
}

// This thread's share of every block into its receiver's window (its own block copied); thread 0
// then waits for every other process's every thread.
void SortJob::exchange(threads::ThreadCtx& t) {
  const int tid = t.thread();
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

}  // namespace compas::kernels::sort::detail

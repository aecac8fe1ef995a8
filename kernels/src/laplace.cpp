#include "compas/kernels/laplace.hpp"

#include <time.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include "compas/base/hash.hpp"
#include "compas/perf/membw.hpp"
#include "compas/perf/region.hpp"
#include "compas/perf/timer.hpp"
#include "compas/runtime/dist_array.hpp"
#include "store_calibration.hpp"

namespace compas::kernels::laplace {

namespace {

constexpr double kPi = 3.14159265358979323846;
// --stores auto times sweeps calibration::kFirst..kLast (store_calibration.hpp) in runs of at
// least kCalibrateFrom sweeps.
constexpr int kCalibrateSweeps = calibration::kLast, kCalibrateFrom = calibration::kMinSweeps;
constexpr double kAmpA = 0.5, kAmpB = 0.25;  // the two eigenmodes' amplitudes
constexpr int kModeA[2] = {1, 1}, kModeB[2] = {3, 2};

double harmonic(double x, double y) {
  return x * x - y * y;
}

double mode(const int ab[2], double x, double y) {
  return std::sin(ab[0] * kPi * x) * std::sin(ab[1] * kPi * y);
}

double eigenvalue(const int ab[2], double h) {
  return 0.5 * (std::cos(ab[0] * kPi * h) + std::cos(ab[1] * kPi * h));
}

// splitmix64 mixes a point's position and bits into one word; the job's hash is the wrapping sum
// of the words, so it does not depend on who computed which point.
using base::splitmix64;

// One row of a sweep: out[j] = 0.25 * (above[j] + below[j] + mid[j-1] + mid[j+1]), j = 1..n,
// evaluated in exactly this order in every variant (vector lanes too), so the bits never depend
// on which variant ran. `change` (when not null) gets max |out[j] - mid[j]|. The streaming
// variant writes with non-temporal stores (no read of the destination line: 16 instead of 24
// bytes of memory traffic per point) and must be followed by an sfence before others read.
using RowFn = void (*)(const double*, const double*, const double*, double*, std::size_t, double*);

void row_generic(const double* above, const double* mid, const double* below, double* out,
                 std::size_t n, double* change) {
  double c = 0;
  for (std::size_t j = 1; j <= n; ++j) {
    const double v = 0.25 * (above[j] + below[j] + mid[j - 1] + mid[j + 1]);
    if (change) c = std::max(c, std::fabs(v - mid[j]));
    out[j] = v;
  }
  if (change) *change = std::max(*change, c);
}

#if defined(__x86_64__)
__attribute__((target("avx2"))) void row_avx2(const double* above, const double* mid,
                                              const double* below, double* out, std::size_t n,
                                              double* change, bool stream) {
  std::size_t j = 1;
  double c = 0;
  auto scalar = [&](std::size_t jj) {
    const double v = 0.25 * (above[jj] + below[jj] + mid[jj - 1] + mid[jj + 1]);
    if (change) c = std::max(c, std::fabs(v - mid[jj]));
    out[jj] = v;
  };
  // Peel to a 32-byte aligned destination (streaming stores need it).
  while (j <= n && (reinterpret_cast<std::uintptr_t>(out + j) & 31) != 0) scalar(j++);
  const __m256d quarter = _mm256_set1_pd(0.25);
  const __m256d sign = _mm256_set1_pd(-0.0);
  __m256d vc = _mm256_setzero_pd();
  for (; j + 4 <= n + 1; j += 4) {
    __m256d v = _mm256_add_pd(_mm256_loadu_pd(above + j), _mm256_loadu_pd(below + j));
    v = _mm256_add_pd(v, _mm256_loadu_pd(mid + j - 1));
    v = _mm256_add_pd(v, _mm256_loadu_pd(mid + j + 1));
    v = _mm256_mul_pd(quarter, v);
    if (change)
      vc = _mm256_max_pd(vc, _mm256_andnot_pd(sign, _mm256_sub_pd(v, _mm256_loadu_pd(mid + j))));
    if (stream)
      _mm256_stream_pd(out + j, v);
    else
      _mm256_store_pd(out + j, v);
  }
  for (; j <= n; ++j) scalar(j);
  if (change) {
    alignas(32) double lanes[4];
    _mm256_store_pd(lanes, vc);
    for (double l : lanes) c = std::max(c, l);
    *change = std::max(*change, c);
  }
}
// kRows consecutive rows at once: src points at the row above the first (src + pitch at the
// first row), dst at the first row written. Each of the kRows + 2 source rows is loaded once per
// column block and serves up to three output rows, so only one row in kRows + 2 is re-read from
// the L2 instead of two in three (rows of 8192 doubles do not fit the L1): at n = 8192 on one
// thread 4 rows ran 1.4x faster than 1 with streaming stores. Same expression per point as
// row_avx2, so the same bits. Needs out + 1 32-byte aligned in every row (the padded layout).
constexpr int kRows = 4;
template <bool kChange, bool kStream>
__attribute__((target("avx2"))) void rows_avx2_t(const double* src, double* dst, std::size_t pitch,
                                                 std::size_t n, double* change) {
  const double* in[kRows + 2];
  double* out[kRows];
  for (int i = 0; i < kRows + 2; ++i) in[i] = src + static_cast<std::size_t>(i) * pitch;
  for (int i = 0; i < kRows; ++i) out[i] = dst + static_cast<std::size_t>(i) * pitch;
  const __m256d quarter = _mm256_set1_pd(0.25);
  const __m256d sign = _mm256_set1_pd(-0.0);
  __m256d vc = _mm256_setzero_pd();
  std::size_t j = 1;
  for (; j + 4 <= n + 1; j += 4) {
    __m256d c[kRows + 2];
    for (int i = 0; i < kRows + 2; ++i) c[i] = _mm256_loadu_pd(in[i] + j);
    for (int i = 0; i < kRows; ++i) {
      __m256d v = _mm256_add_pd(c[i], c[i + 2]);
      v = _mm256_add_pd(v, _mm256_loadu_pd(in[i + 1] + j - 1));
      v = _mm256_add_pd(v, _mm256_loadu_pd(in[i + 1] + j + 1));
      v = _mm256_mul_pd(quarter, v);
      if constexpr (kChange)
        vc = _mm256_max_pd(vc, _mm256_andnot_pd(sign, _mm256_sub_pd(v, c[i + 1])));
      if constexpr (kStream)
        _mm256_stream_pd(out[i] + j, v);
      else
        _mm256_store_pd(out[i] + j, v);
    }
  }
  double cmax = 0;
  for (; j <= n; ++j)
    for (int i = 0; i < kRows; ++i) {
      const double* a = in[i];
      const double* m = in[i + 1];
      const double* b = in[i + 2];
      const double v = 0.25 * (a[j] + b[j] + m[j - 1] + m[j + 1]);
      if constexpr (kChange) cmax = std::max(cmax, std::fabs(v - m[j]));
      out[i][j] = v;
    }
  if constexpr (kChange) {
    alignas(32) double lanes[4];
    _mm256_store_pd(lanes, vc);
    for (double l : lanes) cmax = std::max(cmax, l);
    *change = std::max(*change, cmax);
  }
}
// The loops compiled once per case: the tests of `change` and `stream` out of the inner loop.
void rows_avx2(const double* src, double* dst, std::size_t pitch, std::size_t n, double* change,
               bool stream) {
  if (change)
    stream ? rows_avx2_t<true, true>(src, dst, pitch, n, change)
           : rows_avx2_t<true, false>(src, dst, pitch, n, change);
  else
    stream ? rows_avx2_t<false, true>(src, dst, pitch, n, change)
           : rows_avx2_t<false, false>(src, dst, pitch, n, change);
}
void row_avx2_cached(const double* a, const double* m, const double* b, double* o, std::size_t n,
                     double* c) {
  row_avx2(a, m, b, o, n, c, false);
}
void row_avx2_stream(const double* a, const double* m, const double* b, double* o, std::size_t n,
                     double* c) {
  row_avx2(a, m, b, o, n, c, true);
}
#endif

RowFn choose_row(bool stream) {
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx2")) return stream ? row_avx2_stream : row_avx2_cached;
#endif
  (void)stream;
  return row_generic;
}

}  // namespace

Schedule parse_schedule(const std::string& text) {
  if (text == "dynamic") return Schedule::dynamic;
  if (text == "fixed" || text == "static") return Schedule::fixed;
  throw std::invalid_argument("laplace: --schedule '" + text +
                              "' is not allowed: dynamic or fixed (static)");
}

std::string to_string(Schedule s) {
  return s == Schedule::dynamic ? "dynamic" : "fixed";
}

double Result::mlups() const {
  return seconds > 0 ? flops / 4.0 / seconds / 1e6 : 0.0;
}

void check(const Params& p, int processes) {
  if (p.n < 1 || p.n > (std::size_t{1} << 20))
    throw std::invalid_argument("laplace: --n " + std::to_string(p.n) +
                                " is not allowed: 1 .. 1048576 interior points per side");
  if (p.n < static_cast<std::size_t>(processes))
    throw std::invalid_argument("laplace: --n " + std::to_string(p.n) + " is smaller than the " +
                                std::to_string(processes) +
                                " processes: every process needs at least one row");
  if (p.iters < 1)
    throw std::invalid_argument("laplace: --iters " + std::to_string(p.iters) +
                                " is not allowed: at least 1 sweep");
  if (!(p.tol >= 0) || !std::isfinite(p.tol))
    throw std::invalid_argument("laplace: --tol " + std::to_string(p.tol) +
                                " is not allowed: 0 (fixed sweeps) or a positive number");
  if (p.check_every < 1)
    throw std::invalid_argument("laplace: --check-every " + std::to_string(p.check_every) +
                                " is not allowed: at least 1");
}

Result run(Runtime& rt, const Params& p) {
  check(p, rt.nodes());
  const std::size_t n = p.n, width = n + 2;
  const double h = 1.0 / static_cast<double>(n + 1);
  const int me = rt.node(), nodes = rt.nodes();
  const auto [row_lo, row_hi] = rt.node_block(n);  // interior rows, 0-based
  const std::size_t rows = row_hi - row_lo;
  // The two copies of the field (Jacobi reads one and writes the other): the grid's interior rows
  // and columns 1..n, rows over processes, one halo row above and below (the neighbour's edge row
  // or the boundary) and one halo column each side (the boundary). DistArray pads rows to whole
  // 64-byte lines with the interior starting on one, so streaming stores write whole lines (with
  // n a multiple of 8) and never share one with a halo column or another row (a line written
  // partly by streaming and partly by plain stores leaves a write-combining buffer half full):
  // streaming sweeps at n = 8192 ran 3% (one thread) and 7% (two) faster than on unpadded rows.
  // Not zeroed: the first-touch loop below writes every element of both copies from the thread
  // that sweeps it.
  const Range inner{1, static_cast<index>(n) + 1};
  DistArray<double, 2> field[2] = {
      DistArray<double, 2>(rt, Range2{inner, inner}, {.fill = comm::Fill::none}),
      DistArray<double, 2>(rt, Range2{inner, inner}, {.fill = comm::Fill::none})};
  const auto pitch = static_cast<std::size_t>(field[0].pitch());
  // Streaming stores pay when the two copies do not fit the caches: then every sweep goes to
  // memory anyway, and skipping the destination's read saves a third of the traffic. Whether they
  // fit is not always knowable (virtual machines report last-level caches that are not there), so
  // `auto` times both kinds when the field exceeds the caches below the last level, in blocks of
  // sweeps of one kind (store_calibration.hpp: a sweep right after the other kind pays for it);
  // each process takes the difference of the two kinds' median sweeps (one sweep slowed by the
  // machine does not decide), and the job keeps the kind that took less time summed over
  // processes. When after one block of each kind every process finds one kind clearly faster
  // (calibration::early_vote), the job keeps it at once and the worse kind runs half as long.
  // Fields beyond twice the last level stream without timing (calibration::plan_stores).
  const std::uint64_t field_bytes =
      2 * static_cast<std::uint64_t>(field[0].with_halos().rows.size()) * pitch * sizeof(double);
  std::uint64_t cache_total = 0;
  for (const auto& c : rt.topology().caches())
    if (c.type != "instruction" && c.level >= 2)
      cache_total = std::max<std::uint64_t>(cache_total, c.size_bytes * std::max(c.count, 1));
  const std::uint64_t below_last_level =
      threads::nt_threshold(rt.topology(), rt.team().placement());
  const RowFn row_cached = choose_row(false), row_stream = choose_row(true);
  const bool can_stream = row_stream != row_generic;
  const calibration::Asked asked = p.stores == Stores::cached      ? calibration::Asked::cached
                                   : p.stores == Stores::streaming ? calibration::Asked::streaming
                                                                   : calibration::Asked::automatic;
  const calibration::StoresPlan plan = calibration::plan_stores(
      asked, can_stream, p.iters, field_bytes, below_last_level, cache_total);
  const bool calibrate_here = plan.calibrate;
  bool stream = plan.stream;
  bool calibrated = false;
  std::string reason = plan.reason;
  // Local row r of a copy (r = 0 is the halo above the first interior row) from its halo column.
  auto at = [&](int copy, std::size_t local_row) {
    return field[copy].row(static_cast<index>(row_lo + local_row));
  };
  // Global grid row of local row r (r = 0 is the halo above the first interior row).
  auto grid_row = [&](std::size_t r) { return row_lo + r; };

  // The rows each thread sweeps (Schedule): thread u owns the local rows block_range(rows, nt, u),
  // cut into groups of whole kRows blocks (the last one takes the rest). Its counter holds the
  // next group not yet taken. Two sets of counters, one per parity of the sweep: in sweep k each
  // owner resets its counter of the set sweep k + 1 uses, which nobody touches between the barrier
  // that ended sweep k - 1 and the one that ends sweep k; so a thread that starts a sweep late
  // finds its groups already being taken.
  const int nt = rt.threads();
  const bool dynamic = p.schedule == Schedule::dynamic && nt > 1;
  constexpr std::size_t kGroups = 16;
  std::vector<std::vector<std::pair<std::size_t, std::size_t>>> groups(
      static_cast<std::size_t>(nt));
  for (int u = 0; u < nt; ++u) {
    const auto [a, b] = threads::block_range(rows, nt, u);
    const std::size_t blocks = (b - a) / kRows;
    const std::size_t count = dynamic ? std::clamp<std::size_t>(blocks, 1, kGroups) : 1;
    for (std::size_t g = 0; g < count; ++g) {
      const auto [g0, g1] =
          threads::block_range(blocks, static_cast<int>(count), static_cast<int>(g));
      groups[static_cast<std::size_t>(u)].emplace_back(a + g0 * kRows,
                                                       g + 1 == count ? b : a + g1 * kRows);
    }
  }
  struct alignas(64) Counter {
    std::atomic<std::size_t> next{0};
  };
  const std::unique_ptr<Counter[]> counters(new Counter[2 * static_cast<std::size_t>(nt)]);
  auto counter = [&](int sweep, int u) -> std::atomic<std::size_t>& {
    return counters[static_cast<std::size_t>(sweep % 2 * nt + u)].next;
  };
  const std::vector<int>& socket_of = rt.team().placement().socket_of_thread;
  auto same_socket = [&](int u, int v) {
    return socket_of.size() < static_cast<std::size_t>(nt) ||
           socket_of[static_cast<std::size_t>(u)] == socket_of[static_cast<std::size_t>(v)];
  };

  Result res;
  double t_wall = 0, t_cpu = 0;
  double moved_points = 0;
  double max_change = 0;
  int sweeps = 0;
  std::uint64_t hash = 0;
  double max_error = 0;

  // The job's vote after the first two calibration blocks: the leader of each process votes from
  // its sweeps, the other threads leave the lowest and highest votes as they are.
  auto decide_early = [&](threads::ThreadCtx& t, std::span<const double> took) {
    using calibration::Vote;
    struct Votes {
      int lowest, highest;
    };
    const Vote mine = t.is_leader() ? calibration::early_vote(took) : Vote::unclear;
    const Votes v = rt.allreduce(
        t,
        t.is_leader() ? Votes{static_cast<int>(mine), static_cast<int>(mine)}
                      : Votes{static_cast<int>(Vote::streaming), static_cast<int>(Vote::cached)},
        [](Votes a, Votes b) {
          return Votes{std::min(a.lowest, b.lowest), std::max(a.highest, b.highest)};
        });
    return calibration::job_vote(static_cast<Vote>(v.lowest), static_cast<Vote>(v.highest));
  };

  rt.run([&](threads::ThreadCtx& t) {
    // First touch by the thread that will sweep the rows; both copies get boundary and start.
    const auto [a, b] = threads::block_range(rows + 2, t.nthreads(), t.tid());
    for (std::size_t r = a; r < b; ++r) {
      const double y = static_cast<double>(grid_row(r)) * h;
      for (int c = 0; c < 2; ++c) {
        double* row = at(c, r);
        for (std::size_t j = 0; j < width; ++j) {
          const double x = static_cast<double>(j) * h;
          const bool boundary =
              j == 0 || j == width - 1 || grid_row(r) == 0 || grid_row(r) == n + 1;
          row[j] = harmonic(x, y) +
                   (boundary ? 0.0 : kAmpA * mode(kModeA, x, y) + kAmpB * mode(kModeB, x, y));
        }
      }
    }
    const auto [ra, rb] = threads::block_range(rows, t.nthreads(), t.tid());
    // Every process calibrates, or none does (the calibration ends in a collective).
    const bool calibrate = rt.allreduce(t, calibrate_here ? 1 : 0, op::min{}) == 1;
    if (t.is_leader()) calibrated = calibrate;
    rt.barrier(t);
    const auto w0 = std::chrono::steady_clock::now();
    const double c0 = t.is_leader() ? perf::process_cpu_seconds() : 0.0;
    int k = 0;
    double change = 0;
    double moved = 0;  // rows of other threads swept here, summed over sweeps
    std::array<double, kCalibrateSweeps + 2> started{};  // leader: when sweep k began
    int calibrate_last = kCalibrateSweeps;  // the last sweep that calibrates (when calibrate)
    for (k = 1; k <= p.iters; ++k) {
      const int src = (k - 1) % 2, dst = k % 2;
      const bool checking = (p.tol > 0 && k % p.check_every == 0) || k == p.iters;
      double local_change = 0;
      if (calibrate && k <= calibrate_last + 1) {
        if (t.is_leader())
          started[static_cast<std::size_t>(k)] =
              std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
        if (k == calibration::kEarlyLast + 1 || k == kCalibrateSweeps + 1) {
          COMPAS_REGION(t, "synchronize");
          std::array<double, kCalibrateSweeps + 1> took{};
          for (int s = 1; s < k; ++s)
            took[static_cast<std::size_t>(s)] =
                started[static_cast<std::size_t>(s + 1)] - started[static_cast<std::size_t>(s)];
          if (k == calibration::kEarlyLast + 1) {
            // Stop here when every process saw a clear difference the same way.
            const calibration::Vote v = decide_early(t, took);
            if (v != calibration::Vote::unclear) {
              calibrate_last = calibration::kEarlyLast;
              if (t.is_leader()) {
                stream = v == calibration::Vote::streaming;
                reason = calibration::early_reason(v);
              }
            }
          } else {
            const double streaming_minus_cached = calibration::streaming_minus_cached(took);
            const double sum =
                rt.allreduce(t, t.is_leader() ? streaming_minus_cached : 0.0, op::sum{});
            if (t.is_leader()) {
              stream = sum < 0;
              reason = calibration::timed_reason(sum);
            }
          }
          t.barrier();
        }
      }
      const bool streaming = calibrate && k <= calibrate_last
                                 ? k >= calibration::kFirst && calibration::streams(k)
                                 : stream;
      const RowFn row = streaming ? row_stream : row_cached;
      // Local rows [lo, hi) (0-based interior rows; row r of the field is at r + 1).
      auto sweep_rows = [&](std::size_t lo, std::size_t hi) {
        std::size_t r = 1 + lo;
#if defined(__x86_64__)
        // Blocks of kRows rows where the rows allow it (AVX2, aligned interiors), then one by one.
        if (row != row_generic && (reinterpret_cast<std::uintptr_t>(at(dst, 1) + 1) & 31) == 0)
          for (; r + kRows <= 1 + hi; r += kRows)
            rows_avx2(at(src, r - 1), at(dst, r), pitch, n, checking ? &local_change : nullptr,
                      streaming);
#endif
        for (; r < 1 + hi; ++r) {
          const double* above = at(src, r - 1);
          const double* mid = at(src, r);
          const double* below = at(src, r + 1);
          double* out = at(dst, r);
          row(above, mid, below, out, n, checking ? &local_change : nullptr);
        }
      };
      {
        COMPAS_REGION(t, "compute");
        if (!dynamic) {
          sweep_rows(ra, rb);
        } else {
          const int me_t = t.tid();
          if (me_t == p.test.slow_thread) {
            const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(1);
            while (counter(k, me_t).load(std::memory_order_relaxed) <
                       groups[static_cast<std::size_t>(me_t)].size() &&
                   std::chrono::steady_clock::now() < until)
              std::this_thread::yield();
          }
          counter(k + 1, me_t).store(0, std::memory_order_relaxed);
          // My groups, then those of the threads on my socket (their first-touched pages).
          for (int i = 0; i < nt; ++i) {
            const int u = (me_t + i) % nt;
            if (!same_socket(u, me_t)) continue;
            const auto& mine = groups[static_cast<std::size_t>(u)];
            auto& next = counter(k, u);
            for (std::size_t g; (g = next.fetch_add(1, std::memory_order_relaxed)) < mine.size();) {
              sweep_rows(mine[g].first, mine[g].second);
              if (u != me_t) moved += static_cast<double>(mine[g].second - mine[g].first);
            }
          }
        }
#if defined(__x86_64__)
        if (streaming) _mm_sfence();  // streaming stores are visible before the barrier releases
#endif
      }
      {
        COMPAS_REGION(t, "synchronize");
        t.barrier();
      }
      if (t.is_leader() && nodes > 1) {
        COMPAS_REGION(t, "communicate");
        // My first and last new rows into the neighbours' halos, theirs into mine; the barrier
        // above and the one (or the allreduce) below stand around it.
        field[dst].exchange_halos(t, TeamSync::none);
      }
      if (checking) {
        COMPAS_REGION(t, "synchronize");
        change = rt.allreduce(t, local_change, op::max{});
        if (p.tol > 0 && change <= p.tol) break;
      } else if (nodes > 1) {
        COMPAS_REGION(t, "synchronize");
        t.barrier();
      }
    }
    const int done = std::min(k, p.iters);
    rt.barrier(t);
    if (t.is_leader()) {
      t_wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
      t_cpu = perf::process_cpu_seconds() - c0;
      sweeps = done;
      max_change = change;
    }
    t.barrier();

    // Verification and hash over the final copy.
    const int fin = sweeps % 2;
    if (p.test.inject_fault && me == 0 && t.is_leader()) at(fin, 1)[1 + n / 2] += 1e-6;
    t.barrier();
    const double la = std::pow(eigenvalue(kModeA, h), sweeps);
    const double lb = std::pow(eigenvalue(kModeB, h), sweeps);
    double err = 0;
    std::uint64_t hsh = 0;
    for (std::size_t r = 1 + ra; r < 1 + rb; ++r) {
      const double y = static_cast<double>(grid_row(r)) * h;
      const double* row = at(fin, r);
      for (std::size_t j = 1; j <= n; ++j) {
        const double x = static_cast<double>(j) * h;
        const double want = p.tol > 0 ? harmonic(x, y)
                                      : harmonic(x, y) + kAmpA * la * mode(kModeA, x, y) +
                                            kAmpB * lb * mode(kModeB, x, y);
        err = std::max(err, std::fabs(row[j] - want));
        hsh += splitmix64((static_cast<std::uint64_t>(grid_row(r)) << 32 | j) ^
                          splitmix64(std::bit_cast<std::uint64_t>(row[j])));
      }
    }
    err = rt.allreduce(t, err, op::max{});
    hsh = rt.allreduce(t, hsh, op::sum{});
    const double wall = rt.allreduce(t, t_wall, op::max{});
    const double cpu = rt.allreduce(t, t.is_leader() ? t_cpu : 0.0, op::sum{});
    const double moved_rows = rt.allreduce(t, moved, op::sum{});
    if (t.is_leader()) {
      max_error = err;
      hash = hsh;
      t_wall = wall;
      t_cpu = cpu;
      moved_points = moved_rows * static_cast<double>(n);
    }
  });

  res.streaming_stores = stream;
  res.stores_calibrated = calibrated;
  res.stores_reason = reason;
  res.sweeps = sweeps;
  res.seconds = t_wall;
  res.cpu_seconds = t_cpu;
  res.max_change = max_change;
  res.max_error = max_error;
  res.field_hash = hash;
  const double points = static_cast<double>(n) * static_cast<double>(n) * sweeps;
  res.flops = 4 * points;
  res.moved = points > 0 ? moved_points / points : 0.0;
  res.bytes = 16 * points;  // read one value, write one (neighbours come from cache)
  // Rounding: each sweep adds a few ulps of max |u| (<= 1.5) and Jacobi contracts old errors.
  const double rounding = 1e-12 * (1.0 + sweeps * 1e-3);
  if (p.tol > 0) {
    // The change of a sweep is the slowest mode's amplitude times (1 - lambda); what is left of
    // it is at most change * lambda / (1 - lambda) (plus the faster mode, smaller still).
    const double lam = eigenvalue(kModeA, h);
    res.allowed_error = 1.01 * max_change * lam / (1 - lam) + rounding;
    const bool converged = max_change <= p.tol;
    res.verified = converged && max_error <= res.allowed_error;
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "%s after %d sweeps (max change %.3e, tol %.3e); max |u - f| = %.3e %s %.3e",
                  converged ? "converged" : "did not converge", sweeps, max_change, p.tol,
                  max_error, max_error <= res.allowed_error ? "<=" : ">", res.allowed_error);
    res.verification = buf;
  } else {
    res.allowed_error = rounding;
    res.verified = max_error <= res.allowed_error;
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "max |u - closed form| after %d sweeps = %.3e %s %.3e (f = x^2 - y^2 plus "
                  "eigenmodes (1,1) and (3,2))",
                  sweeps, max_error, res.verified ? "<=" : ">", res.allowed_error);
    res.verification = buf;
  }
  return res;
}

}  // namespace compas::kernels::laplace

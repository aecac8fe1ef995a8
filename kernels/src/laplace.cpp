#include "compas/kernels/laplace.hpp"

#include <time.h>
#if defined(__x86_64__)
#include <immintrin.h>  // _mm_sfence after streaming stores
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
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "compas/base/hash.hpp"
#include "compas/kernels/test_hooks.hpp"
#include "compas/perf/region.hpp"
#include "compas/perf/timer.hpp"
#include "compas/port/dist_array.hpp"
#include "funneled.hpp"
#include "job_memory.hpp"
#include "laplace_rows.hpp"
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

void check(const Params& p, int processes, int processes_here) {
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
  if (p.stores == Stores::direct)
    throw std::invalid_argument(
        "laplace: stores 'direct' is not allowed: auto, cached or streaming (direct is the "
        "sort's)");
  if (p.check_every < 1)
    throw std::invalid_argument("laplace: --check-every " + std::to_string(p.check_every) +
                                " is not allowed: at least 1");
  // Two copies of a process's rows with a halo row each side, rows padded to whole lines.
  const double rows = static_cast<double>((p.n + processes - 1) / processes) + 2;
  kernels::detail::check_job_memory("laplace: --n " + std::to_string(p.n),
                                    2 * 8 * rows * (static_cast<double>(p.n) + 10), processes,
                                    processes_here, base::Mapping::shared);
}

namespace {

// One run(): the field's two copies, the store plan, the rows each thread sweeps, and a method per
// phase of a thread's work; run() makes one and runs thread_main on the team.
class Job {
 public:
  Job(Runtime& rt, const Params& p);
  void thread_main(threads::ThreadCtx& t);
  Result result() const;

 private:
  // The calibration's state on each thread (--stores auto): when sweeps began (leader), and the
  // last sweep that calibrates.
  struct Calibration {
    bool on = false;
    std::chrono::steady_clock::time_point w0;  // the timed sweeps' start
    std::array<double, kCalibrateSweeps + 2> started{};
    int last = kCalibrateSweeps;
  };
  struct alignas(64) Counter {
    std::atomic<std::size_t> next{0};
  };

  // Local row r of a copy (r = 0 is the halo above the first interior row) from its halo column.
  double* at(int copy, std::size_t local_row) {
    return field_[copy].row(static_cast<index>(row_lo_ + local_row));
  }
  // Global grid row of local row r (r = 0 is the halo above the first interior row).
  std::size_t grid_row(std::size_t r) const { return row_lo_ + r; }
  std::atomic<std::size_t>& counter(int sweep, int u) const {
    return counters_[static_cast<std::size_t>(sweep % 2 * nt_ + u)].next;
  }
  bool same_socket(int u, int v) const {
    return socket_of_.size() < static_cast<std::size_t>(nt_) ||
           socket_of_[static_cast<std::size_t>(u)] == socket_of_[static_cast<std::size_t>(v)];
  }
  void plan_stores();
  void make_groups();
  void first_touch(threads::ThreadCtx& t);
  calibration::Vote decide_early(threads::ThreadCtx& t, std::span<const double> took);
  void calibration_point(threads::ThreadCtx& t, int k, Calibration& cal);
  void sweep_rows(int src, int dst, std::size_t lo, std::size_t hi, bool streaming, double* change);
  void sweep(threads::ThreadCtx& t, int k, bool streaming, double* change,
             std::pair<std::size_t, std::size_t> own, double& moved);
  bool end_sweep(threads::ThreadCtx& t, int k, bool checking, double local_change, double& change);
  void verify(threads::ThreadCtx& t, std::pair<std::size_t, std::size_t> own, double moved);

  Runtime& rt_;
  const Params& p_;
  const std::size_t n_, width_;
  const double h_;
  const int me_, procs_;
  std::size_t row_lo_ = 0, rows_ = 0;
  // The two copies of the field (Jacobi reads one and writes the other): the grid's interior rows
  // and columns 1..n, rows over processes, one halo row above and below (the neighbour's edge row
  // or the boundary) and one halo column each side (the boundary). DistArray pads rows to whole
  // 64-byte lines with the interior starting on one, so streaming stores write whole lines (with
  // n a multiple of 8) and never share one with a halo column or another row (a line written
  // partly by streaming and partly by plain stores leaves a write-combining buffer half full):
  // streaming sweeps at n = 8192 ran 3% (one thread) and 7% (two) faster than on unpadded rows.
  // Not zeroed: first_touch writes every element of both copies from the thread that sweeps it.
  DistArray<double, 2> field_[2];
  std::size_t pitch_ = 0;
  RowFn row_cached_ = nullptr, row_stream_ = nullptr;
  bool calibrate_here_ = false, stream_ = false, calibrated_ = false;
  std::string reason_;
  // The rows each thread sweeps (Schedule): thread u owns the local rows block_range(rows, nt, u),
  // cut into groups of whole kRows blocks (the last one takes the rest). Its counter holds the
  // next group not yet taken. Two sets of counters, one per parity of the sweep: in sweep k each
  // owner resets its counter of the set sweep k + 1 uses, which nobody touches between the barrier
  // that ended sweep k - 1 and the one that ends sweep k; so a thread that starts a sweep late
  // finds its groups already being taken.
  const int nt_;
  const bool dynamic_;
  std::vector<std::vector<std::pair<std::size_t, std::size_t>>> groups_;
  std::unique_ptr<Counter[]> counters_;
  const std::vector<int>& socket_of_;
  // Results, written by the leader of each process.
  double t_wall_ = 0, t_cpu_ = 0, moved_points_ = 0, max_change_ = 0, max_error_ = 0;
  int sweeps_ = 0;
  std::uint64_t hash_ = 0;
};

DistArray<double, 2> field_copy(Runtime& rt, std::size_t n) {
  const Range inner{1, static_cast<index>(n) + 1};
  return DistArray<double, 2>(rt, Range2{inner, inner}, {.fill = comm::Fill::none});
}

Job::Job(Runtime& rt, const Params& p)
    : rt_(rt),
      p_(p),
      n_(p.n),
      width_(p.n + 2),
      h_(1.0 / static_cast<double>(p.n + 1)),
      me_(rt.process()),
      procs_(rt.processes()),
      field_{field_copy(rt, p.n), field_copy(rt, p.n)},
      nt_(rt.threads()),
      dynamic_(p.schedule == Schedule::dynamic && rt.threads() > 1),
      counters_(new Counter[2 * static_cast<std::size_t>(rt.threads())]),
      socket_of_(rt.team().placement().socket_of_thread) {
  const auto [lo, hi] = rt.process_block(static_cast<index>(n_));  // interior rows, 0-based
  row_lo_ = static_cast<std::size_t>(lo);
  rows_ = static_cast<std::size_t>(hi - lo);
  pitch_ = static_cast<std::size_t>(field_[0].pitch());
  plan_stores();
  make_groups();
}

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
void Job::plan_stores() {
  const std::uint64_t field_bytes =
      2 * static_cast<std::uint64_t>(field_[0].with_halos().rows.size()) * pitch_ * sizeof(double);
  std::uint64_t cache_total = 0;
  for (const auto& c : rt_.topology().caches())
    if (c.type != "instruction" && c.level >= 2)
      cache_total = std::max<std::uint64_t>(cache_total, c.size_bytes * std::max(c.count, 1));
  const std::uint64_t below_last_level =
      threads::nt_threshold(rt_.topology(), rt_.team().placement());
  row_cached_ = choose_row(false);
  row_stream_ = choose_row(true);
  const bool can_stream = row_stream_ != row_generic;
  const calibration::Asked asked = p_.stores == Stores::cached      ? calibration::Asked::cached
                                   : p_.stores == Stores::streaming ? calibration::Asked::streaming
                                                                    : calibration::Asked::automatic;
  const calibration::StoresPlan plan = calibration::plan_stores(
      asked, can_stream, p_.iters, field_bytes, below_last_level, cache_total);
  calibrate_here_ = plan.calibrate;
  stream_ = plan.stream;
  reason_ = plan.reason;
}

void Job::make_groups() {
  constexpr std::size_t kGroups = 16;
  groups_.resize(static_cast<std::size_t>(nt_));
  for (int u = 0; u < nt_; ++u) {
    const auto [a, b] = threads::block_range(rows_, nt_, u);
    const std::size_t blocks = (b - a) / kRows;
    const std::size_t count = dynamic_ ? std::clamp<std::size_t>(blocks, 1, kGroups) : 1;
    for (std::size_t g = 0; g < count; ++g) {
      const auto [g0, g1] =
          threads::block_range(blocks, static_cast<int>(count), static_cast<int>(g));
      groups_[static_cast<std::size_t>(u)].emplace_back(a + g0 * kRows,
                                                        g + 1 == count ? b : a + g1 * kRows);
    }
  }
}

// First touch by the thread that will sweep the rows; both copies get boundary and start.
void Job::first_touch(threads::ThreadCtx& t) {
  const auto [a, b] = threads::block_range(rows_ + 2, t.threads(), t.thread());
  for (std::size_t r = a; r < b; ++r) {
    const double y = static_cast<double>(grid_row(r)) * h_;
    for (int c = 0; c < 2; ++c) {
      double* row = at(c, r);
      for (std::size_t j = 0; j < width_; ++j) {
        const double x = static_cast<double>(j) * h_;
        const bool boundary =
            j == 0 || j == width_ - 1 || grid_row(r) == 0 || grid_row(r) == n_ + 1;
        row[j] = harmonic(x, y) +
                 (boundary ? 0.0 : kAmpA * mode(kModeA, x, y) + kAmpB * mode(kModeB, x, y));
      }
    }
  }
}

// The job's vote after the first two calibration blocks: the leader of each process votes from
// its sweeps, the other threads leave the lowest and highest votes as they are.
calibration::Vote Job::decide_early(threads::ThreadCtx& t, std::span<const double> took) {
  using calibration::Vote;
  struct Votes {
    int lowest, highest;
  };
  const Vote mine = t.is_leader() ? calibration::early_vote(took) : Vote::unclear;
  const Votes v = rt_.allreduce(
      t,
      t.is_leader() ? Votes{static_cast<int>(mine), static_cast<int>(mine)}
                    : Votes{static_cast<int>(Vote::streaming), static_cast<int>(Vote::cached)},
      [](Votes a, Votes b) {
        return Votes{std::min(a.lowest, b.lowest), std::max(a.highest, b.highest)};
      });
  return calibration::job_vote(static_cast<Vote>(v.lowest), static_cast<Vote>(v.highest));
}

// Before sweep k of the calibration: the leader notes when it began; after the first blocks of
// each kind the job may decide early, after the last one it decides on the summed differences.
void Job::calibration_point(threads::ThreadCtx& t, int k, Calibration& cal) {
  if (t.is_leader())
    cal.started[static_cast<std::size_t>(k)] =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - cal.w0).count();
  if (k != calibration::kEarlyLast + 1 && k != kCalibrateSweeps + 1) return;
  COMPAS_REGION(t, "synchronize");
  std::array<double, kCalibrateSweeps + 1> took{};
  for (int s = 1; s < k; ++s)
    took[static_cast<std::size_t>(s)] =
        cal.started[static_cast<std::size_t>(s + 1)] - cal.started[static_cast<std::size_t>(s)];
  if (k == calibration::kEarlyLast + 1) {
    // Stop here when every process saw a clear difference the same way.
    const calibration::Vote v = decide_early(t, took);
    if (v != calibration::Vote::unclear) {
      cal.last = calibration::kEarlyLast;
      if (t.is_leader()) {
        stream_ = v == calibration::Vote::streaming;
        reason_ = calibration::early_reason(v);
      }
    }
  } else {
    const double streaming_minus_cached = calibration::streaming_minus_cached(took);
    const double sum = rt_.allreduce(t, t.is_leader() ? streaming_minus_cached : 0.0, op::sum{});
    if (t.is_leader()) {
      stream_ = sum < 0;
      reason_ = calibration::timed_reason(sum);
    }
  }
  t.barrier();
}

// Local rows [lo, hi) (0-based interior rows; row r of the field is at r + 1) from copy src into
// copy dst.
void Job::sweep_rows(int src, int dst, std::size_t lo, std::size_t hi, bool streaming,
                     double* change) {
  const RowFn row = streaming ? row_stream_ : row_cached_;
  std::size_t r = 1 + lo;
#if defined(__x86_64__)
  // Blocks of kRows rows where the rows allow it (AVX2, aligned interiors), then one by one.
  if (row != row_generic && (reinterpret_cast<std::uintptr_t>(at(dst, 1) + 1) & 31) == 0)
    for (; r + kRows <= 1 + hi; r += kRows)
      rows_avx2(at(src, r - 1), at(dst, r), pitch_, n_, change, streaming);
#endif
  for (; r < 1 + hi; ++r) row(at(src, r - 1), at(src, r), at(src, r + 1), at(dst, r), n_, change);
}

// Sweep k's rows on this thread: its own block (fixed schedule), or its groups and then those
// of the threads on its socket not yet taken (dynamic).
void Job::sweep(threads::ThreadCtx& t, int k, bool streaming, double* change,
                std::pair<std::size_t, std::size_t> own, double& moved) {
  const int src = (k - 1) % 2, dst = k % 2;
  COMPAS_REGION(t, "compute");
  if (!dynamic_) {
    sweep_rows(src, dst, own.first, own.second, streaming, change);
  } else {
    const int me_t = t.thread();
    if (me_t == kernels::detail::hooks_of(p_.test).slow_thread) {
      const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(1);
      while (counter(k, me_t).load(std::memory_order_relaxed) <
                 groups_[static_cast<std::size_t>(me_t)].size() &&
             std::chrono::steady_clock::now() < until)
        std::this_thread::yield();
    }
    counter(k + 1, me_t).store(0, std::memory_order_relaxed);
    // My groups, then those of the threads on my socket (their first-touched pages).
    for (int i = 0; i < nt_; ++i) {
      const int u = (me_t + i) % nt_;
      if (!same_socket(u, me_t)) continue;
      const auto& mine = groups_[static_cast<std::size_t>(u)];
      auto& next = counter(k, u);
      for (std::size_t g; (g = next.fetch_add(1, std::memory_order_relaxed)) < mine.size();) {
        sweep_rows(src, dst, mine[g].first, mine[g].second, streaming, change);
        if (u != me_t) moved += static_cast<double>(mine[g].second - mine[g].first);
      }
    }
  }
#if defined(__x86_64__)
  if (streaming) _mm_sfence();  // streaming stores are visible before the barrier releases
#endif
}

// After sweep k: the team's barrier, the halos, and the convergence check when due. True when
// the field converged.
bool Job::end_sweep(threads::ThreadCtx& t, int k, bool checking, double local_change,
                    double& change) {
  {
    COMPAS_REGION(t, "synchronize");
    t.barrier();
  }
  if (t.is_leader() && procs_ > 1) {
    COMPAS_REGION(t, "communicate");
    // My first and last new rows into the neighbours' halos, theirs into mine; the barrier
    // above and the one (or the allreduce) below stand around it.
    field_[k % 2].exchange_halos(t, TeamSync::none);
  }
  if (checking) {
    COMPAS_REGION(t, "synchronize");
    change = rt_.allreduce(t, local_change, op::max{});
    if (p_.tol > 0 && change <= p_.tol) return true;
  } else if (procs_ > 1) {
    COMPAS_REGION(t, "synchronize");
    t.barrier();
  }
  return false;
}

void Job::thread_main(threads::ThreadCtx& t) {
  first_touch(t);
  const auto own = threads::block_range(rows_, t.threads(), t.thread());
  Calibration cal;
  // Every process calibrates, or none does (the calibration ends in a collective).
  cal.on = rt_.allreduce(t, calibrate_here_ ? 1 : 0, op::min{}) == 1;
  if (t.is_leader()) calibrated_ = cal.on;
  rt_.barrier(t);
  const auto w0 = std::chrono::steady_clock::now();
  cal.w0 = w0;
  const double c0 = t.is_leader() ? perf::process_cpu_seconds() : 0.0;
  int k = 0;
  double change = 0;
  double moved = 0;  // rows of other threads swept here, summed over sweeps
  for (k = 1; k <= p_.iters; ++k) {
    const bool checking = (p_.tol > 0 && k % p_.check_every == 0) || k == p_.iters;
    double local_change = 0;
    if (cal.on && k <= cal.last + 1) calibration_point(t, k, cal);
    const bool streaming =
        cal.on && k <= cal.last ? k >= calibration::kFirst && calibration::streams(k) : stream_;
    sweep(t, k, streaming, checking ? &local_change : nullptr, own, moved);
    if (end_sweep(t, k, checking, local_change, change)) break;
  }
  const int done = std::min(k, p_.iters);
  rt_.barrier(t);
  if (t.is_leader()) {
    t_wall_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
    t_cpu_ = perf::process_cpu_seconds() - c0;
    sweeps_ = done;
    max_change_ = change;
  }
  t.barrier();
  verify(t, own, moved);
}

// Verification and hash over the final copy, and the job's totals (on the leaders).
void Job::verify(threads::ThreadCtx& t, std::pair<std::size_t, std::size_t> own, double moved) {
  const int fin = sweeps_ % 2;
  if (kernels::detail::hooks_of(p_.test).inject_fault && me_ == 0 && t.is_leader())
    at(fin, 1)[1 + n_ / 2] += 1e-6;
  t.barrier();
  const double la = std::pow(eigenvalue(kModeA, h_), sweeps_);
  const double lb = std::pow(eigenvalue(kModeB, h_), sweeps_);
  double err = 0;
  std::uint64_t hsh = 0;
  for (std::size_t r = 1 + own.first; r < 1 + own.second; ++r) {
    const double y = static_cast<double>(grid_row(r)) * h_;
    const double* row = at(fin, r);
    for (std::size_t j = 1; j <= n_; ++j) {
      const double x = static_cast<double>(j) * h_;
      const double want = p_.tol > 0 ? harmonic(x, y)
                                     : harmonic(x, y) + kAmpA * la * mode(kModeA, x, y) +
                                           kAmpB * lb * mode(kModeB, x, y);
      err = std::max(err, std::fabs(row[j] - want));
      hsh += splitmix64((static_cast<std::uint64_t>(grid_row(r)) << 32 | j) ^
                        splitmix64(std::bit_cast<std::uint64_t>(row[j])));
    }
  }
  err = rt_.allreduce(t, err, op::max{});
  hsh = rt_.allreduce(t, hsh, op::sum{});
  const double wall = rt_.allreduce(t, t_wall_, op::max{});
  const double cpu = rt_.allreduce(t, t.is_leader() ? t_cpu_ : 0.0, op::sum{});
  const double moved_rows = rt_.allreduce(t, moved, op::sum{});
  if (t.is_leader()) {
    max_error_ = err;
    hash_ = hsh;
    t_wall_ = wall;
    t_cpu_ = cpu;
    moved_points_ = moved_rows * static_cast<double>(n_);
  }
}

Result Job::result() const {
  Result res;
  res.streaming_stores = stream_;
  res.stores_calibrated = calibrated_;
  res.stores_reason = reason_;
  res.sweeps = sweeps_;
  res.seconds = t_wall_;
  res.cpu_seconds = t_cpu_;
  res.max_change = max_change_;
  res.max_error = max_error_;
  res.field_hash = hash_;
  const double points = static_cast<double>(n_) * static_cast<double>(n_) * sweeps_;
  res.flops = 4 * points;
  res.moved = points > 0 ? moved_points_ / points : 0.0;
  res.bytes = 16 * points;  // read one value, write one (neighbours come from cache)
  // Rounding: each sweep adds a few ulps of max |u| (<= 1.5) and Jacobi contracts old errors.
  const double rounding = 1e-12 * (1.0 + sweeps_ * 1e-3);
  char buf[256];
  if (p_.tol > 0) {
    // The change of a sweep is the slowest mode's amplitude times (1 - lambda); what is left of
    // it is at most change * lambda / (1 - lambda) (plus the faster mode, smaller still).
    const double lam = eigenvalue(kModeA, h_);
    res.allowed_error = 1.01 * max_change_ * lam / (1 - lam) + rounding;
    const bool converged = max_change_ <= p_.tol;
    res.verified = converged && max_error_ <= res.allowed_error;
    std::snprintf(buf, sizeof buf,
                  "%s after %d sweeps (max change %.3e, tol %.3e); max |u - f| = %.3e %s %.3e",
                  converged ? "converged" : "did not converge", sweeps_, max_change_, p_.tol,
                  max_error_, max_error_ <= res.allowed_error ? "<=" : ">", res.allowed_error);
  } else {
    res.allowed_error = rounding;
    res.verified = max_error_ <= res.allowed_error;
    std::snprintf(buf, sizeof buf,
                  "max |u - closed form| after %d sweeps = %.3e %s %.3e (f = x^2 - y^2 plus "
                  "eigenmodes (1,1) and (3,2))",
                  sweeps_, max_error_, res.verified ? "<=" : ">", res.allowed_error);
  }
  res.verification = buf;
  return res;
}

}  // namespace

Result run(Runtime& rt, const Params& p) {
  check_funneled(rt, "kernels::laplace::run");
  check(p, rt.processes(), rt.processes_here());
  Job job(rt, p);
  rt.run([&](threads::ThreadCtx& t) { job.thread_main(t); });
  return job.result();
}

}  // namespace compas::kernels::laplace

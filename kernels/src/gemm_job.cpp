// GEMM on a job: SUMMA / 1-D ring over the processes, gemm::multiply inside (gemm_job.hpp).
#include "compas/kernels/gemm_job.hpp"

#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <stdexcept>
#include <utility>

#include "compas/base/hash.hpp"
#include "compas/comm/window.hpp"
#include "compas/perf/region.hpp"
#include "compas/perf/timer.hpp"
#include "funneled.hpp"
#include "job_memory.hpp"

namespace compas::kernels::gemm {

namespace {

constexpr std::size_t kMaxPanel = 512;  // widest k panel of the 2-D algorithm
constexpr std::uint64_t kSeedA = 0x243f6a8885a308d3ull, kSeedB = 0x13198a2e03707344ull,
                        kSeedX = 0xa4093822299f31d0ull;

// [-1, 1), exactly: 53 random bits scaled by 2^-52.
double hash_value(std::uint64_t seed, std::uint64_t row, std::uint64_t col) {
  const std::uint64_t h = base::splitmix64(base::splitmix64(seed ^ row) + col);
  return static_cast<double>(h >> 11) * 0x1p-52 - 1.0;
}

struct Range {
  std::size_t lo = 0, hi = 0;
  std::size_t size() const { return hi - lo; }
};

Range part(std::size_t n, int parts, int index) {
  const auto [lo, hi] = threads::block_range(n, parts, index);
  return {lo, hi};
}

enum Mat : int { kA = 0, kB = 1 };

// One k panel of a multiplication: columns [k0, k0 + w) of A, rows of B; A's owner is a process
// column, B's a process row.
struct Panel {
  std::size_t k0 = 0, w = 0;
  int a_col = 0, b_row = 0;
};

// Where a step's operand comes from: this process's own panel, or a slot of the panel window
// (filled by `from`; the arrival is the `arrival`-th into that slot, counted from 1).
struct Source {
  bool local = true;
  std::size_t offset = 0;  // elements into the local A panels / B block
  int slot = 0, from = -1;
  std::uint64_t arrival = 0;
};

// A put posted before a step's multiply: this process's panel (local, or the slot it holds) into
// slot `slot` of `to`, once `to` has released that slot `releases` times towards this process.
struct Send {
  Mat m = kA;
  int to = 0, slot = 0;
  bool from_slot = false;
  int src_slot = 0;
  std::size_t src_offset = 0, count = 0;  // elements
  std::uint64_t releases = 0;
};

// After a step's multiply (and its sends' completion): slot `slot` of matrix m is free for the
// next writer, `to`.
struct Release {
  Mat m = kA;
  int to = 0, slot = 0;
};

struct Step {
  std::size_t panel = 0;
  bool first = false;  // the first step of a multiplication (overwrite C)
  Source a, b;
  std::vector<Send> sends;        // posted before this step's multiply
  std::vector<Release> releases;  // after it
};

// Signals of the panel window: arrivals per (matrix, slot); releases per (matrix, slot, from).
std::size_t arrival_signal(Mat m, int slot) {
  return static_cast<std::size_t>(m * 2 + slot);
}
std::size_t release_signal(Mat m, int slot, int from, int p) {
  return 4 + static_cast<std::size_t>((m * 2 + slot) * p + from);
}

// The schedule of one multiplication, built identically on every process (each needs its peers'
// uses of their slots to know when it may write them and how many releases to wait for). The
// multiplications of a run are separated by a job barrier, by which every panel has arrived and
// every release has been seen, so multiplication i waits for i times a multiplication's counts
// plus those of the plan.
class Plan {
 public:
  Plan(std::size_t n, int nodes, const Runtime::Grid& grid)
      : p_(nodes), g_(grid), ring_(grid.rows == 1 && nodes > 1) {
    // I_r = L_r (C's and A's rows, B's rows) and J_c = K_c (C's and B's columns, A's columns).
    for (int r = 0; r < g_.rows; ++r) rows_.push_back(part(n, g_.rows, r));
    for (int c = 0; c < g_.cols; ++c) cols_.push_back(part(n, g_.cols, c));
    if (ring_) {
      for (int c = 0; c < g_.cols; ++c)
        panels_.push_back({cols_[at(c)].lo, cols_[at(c)].size(), c, 0});
    } else {
      // Cut k at both partitions' boundaries, then (with several processes, to start the
      // pipeline early) into pieces of at most kMaxPanel.
      std::vector<std::size_t> cuts = {0, n};
      for (const Range& r : rows_) cuts.push_back(r.lo);
      for (const Range& c : cols_) cuts.push_back(c.lo);
      std::sort(cuts.begin(), cuts.end());
      cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
      for (std::size_t i = 0; i + 1 < cuts.size(); ++i) {
        const std::size_t lo = cuts[i], len = cuts[i + 1] - lo;
        const std::size_t pieces = nodes > 1 ? (len + kMaxPanel - 1) / kMaxPanel : 1;
        for (std::size_t j = 0; j < pieces; ++j) {
          const auto [a, b] =
              threads::block_range(len, static_cast<int>(pieces), static_cast<int>(j));
          panels_.push_back({lo + a, b - a, owner(cols_, lo), owner(rows_, lo)});
        }
      }
    }
    // Each process column keeps its A panels one after the other, each |I_r| x w: offsets in
    // columns (times |I_r| for elements).
    a_cols_.assign(static_cast<std::size_t>(g_.cols) * panels_.size(), 0);
    for (int c = 0; c < g_.cols; ++c) {
      std::size_t off = 0;
      for (std::size_t s = 0; s < panels_.size(); ++s) {
        a_cols_[at(c) * panels_.size() + s] = off;
        if (panels_[s].a_col == c) off += panels_[s].w;
      }
      if (c == g_.col) a_width_ = off;
    }
    for (const Panel& pn : panels_) max_w_ = std::max(max_w_, pn.w);
    build();
  }

  bool ring() const { return ring_; }
  std::size_t steps_per_multiply() const { return panels_.size(); }
  const std::vector<Panel>& panels() const { return panels_; }
  const std::vector<Step>& steps() const { return steps_[at(me())]; }
  const std::vector<Send>& first_sends() const { return first_[at(me())]; }
  Range rows() const { return rows_[at(g_.row)]; }
  Range cols() const { return cols_[at(g_.col)]; }
  // Columns of A this process holds, and where panel s starts among them (elements / |I_r|).
  std::size_t a_width() const { return a_width_; }
  std::size_t a_column(std::size_t panel) const { return a_col_of(g_.col, panel); }
  // Elements of one slot of each matrix (the same on every process, so offsets agree).
  std::size_t a_slot() const { return max_size(rows_) * max_w_; }
  std::size_t b_slot() const { return ring_ ? 0 : max_w_ * max_size(cols_); }
  double bytes_sent_per_multiply() const {
    double b = 0;
    for (const Send& s : first_sends()) b += static_cast<double>(s.count * sizeof(double));
    for (const Step& st : steps())
      for (const Send& s : st.sends) b += static_cast<double>(s.count * sizeof(double));
    return b;
  }
  // Per multiplication: panels this process receives into a slot, and releases of a slot it
  // receives from `to` (both the signals' growth over one multiplication).
  std::uint64_t arrivals_per_multiply(Mat m, int slot) const {
    return uses_[at(me()) * 4 + at(m * 2 + slot)].size();
  }
  std::uint64_t releases_per_multiply(Mat m, int slot, int to) const {
    return released_[(at(me()) * at(p_) + at(to)) * 4 + at(m * 2 + slot)];
  }

 private:
  static std::size_t at(int i) { return static_cast<std::size_t>(i); }
  int me() const { return g_.row * g_.cols + g_.col; }
  int rank(int r, int c) const { return r * g_.cols + c; }
  std::size_t a_col_of(int c, std::size_t panel) const {
    return a_cols_[at(c) * panels_.size() + panel];
  }
  static int owner(const std::vector<Range>& parts, std::size_t k) {
    for (std::size_t i = 0; i < parts.size(); ++i)
      if (k >= parts[i].lo && k < parts[i].hi) return static_cast<int>(i);
    return static_cast<int>(parts.size()) - 1;
  }
  static std::size_t max_size(const std::vector<Range>& parts) {
    std::size_t m = 0;
    for (const Range& r : parts) m = std::max(m, r.size());
    return m;
  }

  // Panel multiplied by process column c at step s of a multiplication: panel s (2-D), the block
  // of process c - s (ring).
  std::size_t panel_at(int c, std::size_t s) const {
    if (!ring_) return s;
    const std::size_t np = panels_.size();
    return (at(c) + np - s % np) % np;
  }

  void build() {
    steps_.assign(at(p_), std::vector<Step>(panels_.size()));
    first_.assign(at(p_), {});
    uses_.assign(at(p_) * 4, {});
    released_.assign(at(p_) * at(p_) * 4, 0);
    for (std::size_t s = 0; s < panels_.size(); ++s) {
      for (int r = 0; r < g_.rows; ++r)
        for (int c = 0; c < g_.cols; ++c) {
          const int q = rank(r, c);
          Step& st = steps_[at(q)][s];
          st.panel = panel_at(c, s);
          st.first = s == 0;
          const Panel& pn = panels_[st.panel];
          const std::size_t mi = rows_[at(r)].size(), nj = cols_[at(c)].size();
          const bool has_c = mi > 0 && nj > 0;
          // A: from the process of this row that owns the panel (2-D), or from c - 1 (ring:
          // every process forwards, needed or not).
          int a_from = -1;
          if (ring_) {
            if (s > 0 && pn.w > 0) a_from = rank(r, (c + g_.cols - 1) % g_.cols);
          } else if (pn.a_col != c && has_c) {
            a_from = rank(r, pn.a_col);
          }
          if (a_from < 0)
            st.a.offset = a_col_of(c, st.panel) * mi;
          else
            receive(q, kA, s, a_from, mi * pn.w, st.a);
          // B: from the process of this column that owns the panel (2-D); the ring never moves B.
          if (!ring_ && pn.b_row != r && has_c)
            receive(q, kB, s, rank(pn.b_row, c), pn.w * nj, st.b);
          else if (ring_ || pn.b_row == r)
            st.b.offset = (pn.k0 - rows_[at(r)].lo) * nj;  // else no C here: B is not read
        }
    }
  }

  // Process q receives matrix m's operand of step s from `from` into slot s % 2: the
  // writer posts it at its step s - 1 (before the first step when s = 0), once q has released
  // the slot's previous use to it.
  void receive(int q, Mat m, std::size_t s, int from, std::size_t count, Source& src) {
    const int slot = static_cast<int>(s % 2);
    auto& uses = uses_[at(q) * 4 + at(m * 2 + slot)];
    src.local = false;
    src.slot = slot;
    src.from = from;
    src.arrival = uses.size() + 1;
    Send send;
    send.m = m;
    send.to = q;
    send.slot = slot;
    send.count = count;
    if (!uses.empty()) {
      steps_[at(q)][uses.back()].releases.push_back({m, from, slot});
      send.releases = ++released_[(at(from) * at(p_) + at(q)) * 4 + at(m * 2 + slot)];
    }
    uses.push_back(s);
    if (ring_) {
      // What the writer multiplies at s - 1 (its own block, or the slot it received it in).
      const Source& held = steps_[at(from)][s - 1].a;
      send.from_slot = !held.local;
      send.src_slot = held.slot;
      send.src_offset = held.offset;
    } else {
      const Panel& pn = panels_[steps_[at(q)][s].panel];
      const int fr = from / g_.cols, fc = from % g_.cols;
      send.src_offset = m == kA ? a_col_of(fc, steps_[at(q)][s].panel) * rows_[at(fr)].size()
                                : (pn.k0 - rows_[at(fr)].lo) * cols_[at(fc)].size();
    }
    if (s == 0)
      first_[at(from)].push_back(send);
    else
      steps_[at(from)][s - 1].sends.push_back(send);
  }

  int p_;
  Runtime::Grid g_;
  bool ring_;
  std::vector<Range> rows_, cols_;
  std::vector<Panel> panels_;
  std::vector<std::size_t> a_cols_;
  std::size_t a_width_ = 0, max_w_ = 0;
  std::vector<std::vector<Step>> steps_;
  std::vector<std::vector<Send>> first_;        // posted before the first step
  std::vector<std::vector<std::size_t>> uses_;  // (process, matrix, slot): steps
  std::vector<std::uint64_t> released_;         // (writer, receiver, matrix, slot)
};

}  // namespace

double a_value(std::uint64_t row, std::uint64_t col) {
  return hash_value(kSeedA, row, col);
}
double b_value(std::uint64_t row, std::uint64_t col) {
  return hash_value(kSeedB, row, col);
}

void check(const JobParams& p, int processes, int processes_here) {
  if (p.n < 1)
    throw std::invalid_argument("gemm: n = " + std::to_string(p.n) + ": must be at least 1");
  if (p.iters < 1)
    throw std::invalid_argument("gemm: iters = " + std::to_string(p.iters) +
                                ": must be at least 1");
  if (processes < 1) throw std::invalid_argument("gemm: no processes");
  // A, B and C's blocks of n^2 / P each, and with P > 1 the panels of A and B in flight.
  const double n2 = static_cast<double>(p.n) * static_cast<double>(p.n);
  kernels::detail::check_job_memory("gemm: --n " + std::to_string(p.n),
                                    8 * n2 * (processes == 1 ? 3 : 5) / processes, processes,
                                    processes_here, base::Mapping::private_memory);
}

namespace {

// One run of the job on this process: the schedule, the operands and the panel window, and what
// the multiplications measure. Thread 0 alone posts and waits on the window.
struct GemmJob {
  Runtime& rt;
  const JobParams& jp;
  const std::size_t n;
  const int P;
  const Runtime::Grid grid;
  const Plan plan;
  const Range I, J;
  const std::size_t mi, nj;
  const std::vector<Panel>& panels;
  // Local operands: A's panels of this process column (mi x w each, one after the other),
  // B[I_r, J_c] (B's rows are split like C's), C[I_r, J_c]. Never empty, so pointers are valid.
  std::vector<double> A, B, C;
  const std::size_t a_slot, b_slot;
  std::optional<comm::Window<double>> win;
  Workspace ws;
  JobResult jr;
  const std::vector<Step>& steps;
  const std::size_t per;
  std::vector<double> my_iter;
  double my_cpu = 0;
  // Thread 0 only.
  std::vector<comm::Request> pending;
  std::uint64_t iter = 0;  // multiplications done before this one

  GemmJob(Runtime& runtime, const JobParams& params);

  std::size_t slot_offset(Mat m, int slot) const {
    return m == kA ? static_cast<std::size_t>(slot) * a_slot
                   : 2 * a_slot + static_cast<std::size_t>(slot) * b_slot;
  }
  double* slot_ptr(Mat m, int slot) { return win->local().data() + slot_offset(m, slot); }
  void post(const std::vector<Send>& sends);

  void multiplications(threads::ThreadCtx& t);  // every thread: operands, timed iterations
  void fill_operands(threads::ThreadCtx& t);
  void multiply_once(threads::ThreadCtx& t, int it);
  void step(threads::ThreadCtx& t, const Step& st);
  void gather_times(threads::ThreadCtx& t);
  void timings();
  void fault() { C[0] += 1e-3 * (1.0 + std::fabs(C[0])); }  // a wrong element for the tests
  void verify();
  void freivalds(threads::ThreadCtx& t, const std::vector<double>& x, std::vector<double>& y,
                 std::vector<double>& d);
  // This process's block of C, for the tests.
  void keep_block() {
    jr.row0 = I.lo;
    jr.rows = mi;
    jr.col0 = J.lo;
    jr.cols = nj;
    jr.c.assign(C.begin(), C.begin() + static_cast<std::ptrdiff_t>(mi * nj));
  }
};

GemmJob::GemmJob(Runtime& runtime, const JobParams& params)
    : rt(runtime),
      jp(params),
      n(jp.n),
      P(rt.processes()),
      grid(rt.process_grid()),
      plan(n, P, grid),
      I(plan.rows()),
      J(plan.cols()),
      mi(I.size()),
      nj(J.size()),
      panels(plan.panels()),
      A(std::max<std::size_t>(mi * plan.a_width(), 1)),
      B(std::max<std::size_t>(mi * nj, 1)),
      C(std::max<std::size_t>(mi * nj, 1)),
      a_slot(plan.a_slot()),
      b_slot(plan.b_slot()),
      win(P > 1 ? std::optional<comm::Window<double>>(
                      std::in_place, rt.comm(), std::max<std::size_t>(2 * a_slot + 2 * b_slot, 1),
                      4 + 4 * static_cast<std::size_t>(P))
                : std::optional<comm::Window<double>>()),
      steps(plan.steps()),
      per(plan.steps_per_multiply()),
      my_iter(static_cast<std::size_t>(jp.iters), 0.0) {
  jr.n = n;
  jr.grid_rows = grid.rows;
  jr.grid_cols = grid.cols;
  jr.ring = plan.ring();
  jr.isa = to_string(ws.blocking().isa);
  jr.iters = jp.iters;
  jr.steps = static_cast<int>(plan.steps_per_multiply());
  jr.flops = 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
}

// Thread 0: each send once its receiver has released the slot, without waiting for the put.
void GemmJob::post(const std::vector<Send>& sends) {
  for (const Send& s : sends) {
    if (s.releases > 0)
      win->wait_until(release_signal(s.m, s.slot, s.to, P),
                      iter * plan.releases_per_multiply(s.m, s.slot, s.to) + s.releases, s.to);
    const double* src =
        s.from_slot ? slot_ptr(s.m, s.src_slot) : (s.m == kA ? A.data() : B.data()) + s.src_offset;
    pending.push_back(win->put_signal_nb(s.to, slot_offset(s.m, s.slot),
                                         std::span<const double>(src, s.count),
                                         arrival_signal(s.m, s.slot)));
  }
}

void GemmJob::multiplications(threads::ThreadCtx& t) {
  fill_operands(t);
  t.barrier();
  for (int it = 0; it < jp.iters; ++it) multiply_once(t, it);
  {
    COMPAS_REGION(t, "synchronize");
    rt.barrier(t);
  }
  gather_times(t);
}

// This process's A panels and B block, rows over the threads.
void GemmJob::fill_operands(threads::ThreadCtx& t) {
  const auto [lo, hi] = t.block(mi);
  for (std::size_t s = 0; s < panels.size(); ++s) {
    const Panel& pn = panels[s];
    if (pn.a_col != grid.col) continue;
    double* a = A.data() + plan.a_column(s) * mi;
    for (std::size_t i = lo; i < hi; ++i)
      for (std::size_t k = 0; k < pn.w; ++k) a[i * pn.w + k] = a_value(I.lo + i, pn.k0 + k);
  }
  for (std::size_t k = lo; k < hi; ++k)
    for (std::size_t j = 0; j < nj; ++j) B[k * nj + j] = b_value(I.lo + k, J.lo + j);
}

// One timed multiplication: from a job barrier, the first sends, then every step.
void GemmJob::multiply_once(threads::ThreadCtx& t, int it) {
  {
    COMPAS_REGION(t, "synchronize");
    rt.barrier(t);
  }
  const std::uint64_t t0 = perf::now_ns();
  const double c0 = t.is_leader() ? perf::process_cpu_seconds() : 0.0;
  if (t.is_leader()) iter = static_cast<std::uint64_t>(it);
  if (t.is_leader() && P > 1) {
    COMPAS_REGION(t, "communicate");
    post(plan.first_sends());
  }
  for (std::size_t i = 0; i < per; ++i) step(t, steps[i]);
  if (t.is_leader()) {
    my_iter[static_cast<std::size_t>(it)] = 1e-9 * static_cast<double>(perf::now_ns() - t0);
    my_cpu += perf::process_cpu_seconds() - c0;
  }
}

// One step: its panels waited for (and the next step's posted) by thread 0, the team's multiply,
// then the slots it read released.
void GemmJob::step(threads::ThreadCtx& t, const Step& st) {
  const Panel& pn = panels[st.panel];
  if (P > 1) {
    if (t.is_leader()) {
      COMPAS_REGION(t, "communicate");
      for (const auto& [m, src] : {std::pair{kA, &st.a}, std::pair{kB, &st.b}})
        if (!src->local)
          win->wait_until(arrival_signal(m, src->slot),
                          iter * plan.arrivals_per_multiply(m, src->slot) + src->arrival,
                          src->from);
      post(st.sends);  // the next step's panels travel while this one is multiplied
    }
    COMPAS_REGION(t, "communicate");  // the team waits for the panels with thread 0
    t.barrier();
  }
  const double* a = st.a.local ? A.data() + st.a.offset : slot_ptr(kA, st.a.slot);
  const double* b = st.b.local ? B.data() + st.b.offset : slot_ptr(kB, st.b.slot);
  {
    COMPAS_REGION(t, "compute");
    multiply(t, mi, nj, pn.w, a, std::max<std::size_t>(pn.w, 1), b, std::max<std::size_t>(nj, 1),
             C.data(), std::max<std::size_t>(nj, 1), !st.first, ws);
  }
  // multiply returned on every thread: the slots read are free once the puts from them
  // (ring) are complete.
  if (P > 1 && t.is_leader() && (!pending.empty() || !st.releases.empty())) {
    COMPAS_REGION(t, "communicate");
    for (auto& r : pending) r.wait();
    pending.clear();
    for (const Release& r : st.releases)
      win->signal_add(r.to, release_signal(r.m, r.slot, rt.process(), P));
  }
}

// The iterations' times (each as long as its slowest process took), CPU time and panel bytes.
void GemmJob::gather_times(threads::ThreadCtx& t) {
  if (t.is_leader()) {  // each multiplication as long as its slowest process took
    if (P > 1) rt.collectives().allreduce(std::span<double>(my_iter), comm::Op::max);
    jr.iter_seconds = my_iter;
  }
  const double cpu = rt.allreduce(t, t.is_leader() ? my_cpu : 0.0, op::sum{});
  const double bytes =
      rt.allreduce(t, t.is_leader() ? plan.bytes_sent_per_multiply() : 0.0, op::sum{});
  if (t.is_leader()) {
    jr.cpu_seconds = cpu;
    jr.panel_bytes = bytes;
  }
}

// The median and best iteration, and the rate.
void GemmJob::timings() {
  std::vector<double> sorted = jr.iter_seconds;
  std::sort(sorted.begin(), sorted.end());
  const std::size_t k = sorted.size();
  jr.seconds = k % 2 == 1 ? sorted[k / 2] : 0.5 * (sorted[k / 2 - 1] + sorted[k / 2]);
  jr.seconds_min = sorted.front();
  jr.gflops = jr.seconds > 0 ? jr.flops / jr.seconds / 1e9 : 0.0;
}

// Freivalds: d = C x - A (B x) and s = |A| (|B| |x|) + |C| |x|, every row on every process.
void GemmJob::verify() {
  std::vector<double> x(n), y(2 * n, 0.0), d(2 * n, 0.0);
  for (std::size_t j = 0; j < n; ++j) x[j] = 1.0 + 0.5 * hash_value(kSeedX, 0, j);
  rt.run([&](threads::ThreadCtx& t) { freivalds(t, x, y, d); });
  double error = 0;
  for (std::size_t i = 0; i < n && !std::isnan(error); ++i) {
    const double e = d[n + i] > 0 ? std::fabs(d[i]) / d[n + i]
                     : d[i] == 0  ? 0.0
                                  : std::numeric_limits<double>::infinity();
    error = std::isnan(e) ? e : std::max(error, e);
  }
  jr.error = error;
  jr.tolerance = (4.0 * static_cast<double>(n) + 2.0 * P + 8.0) * 0x1p-53;
  jr.verified = error <= jr.tolerance;
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "Freivalds: max_i |(C x - A (B x))_i| / (|A| |B| |x| + |C| |x|)_i = %.2e %s "
                "(4n + 2P + 8) u = %.2e (x_j in [0.5, 1.5) from a hash; u = 2^-53)",
                jr.error, jr.verified ? "<=" : "exceeds", jr.tolerance);
  jr.verification = buf;
}

// One thread's rows of y = (B x, |B| |x|), then of d = (C x - A y, |A| |y| + |C| |x|); each summed
// over the processes.
void GemmJob::freivalds(threads::ThreadCtx& t, const std::vector<double>& x, std::vector<double>& y,
                        std::vector<double>& d) {
  const auto [lo, hi] = t.block(mi);
  for (std::size_t k = lo; k < hi; ++k) {  // B x over this process's part of B
    double v = 0, va = 0;
    for (std::size_t j = 0; j < nj; ++j) {
      const double b = B[k * nj + j];
      v += b * x[J.lo + j];
      va += std::fabs(b) * x[J.lo + j];
    }
    y[I.lo + k] = v;
    y[n + I.lo + k] = va;
  }
  t.barrier();
  if (t.is_leader() && P > 1) rt.collectives().allreduce(std::span<double>(y), comm::Op::sum);
  t.barrier();
  for (std::size_t i = lo; i < hi; ++i) {
    double z = 0, za = 0;
    for (std::size_t s = 0; s < panels.size(); ++s) {
      const Panel& pn = panels[s];
      if (pn.a_col != grid.col) continue;
      const double* a = A.data() + plan.a_column(s) * mi + i * pn.w;
      for (std::size_t k = 0; k < pn.w; ++k) {
        z += a[k] * y[pn.k0 + k];
        za += std::fabs(a[k]) * y[n + pn.k0 + k];
      }
    }
    double cx = 0, ca = 0;
    for (std::size_t j = 0; j < nj; ++j) {
      const double c = C[i * nj + j];
      cx += c * x[J.lo + j];
      ca += std::fabs(c) * x[J.lo + j];
    }
    d[I.lo + i] = cx - z;
    d[n + I.lo + i] = za + ca;
  }
  t.barrier();
  if (t.is_leader() && P > 1) rt.collectives().allreduce(std::span<double>(d), comm::Op::sum);
}

}  // namespace

JobResult run(Runtime& rt, const JobParams& jp) {
  check_funneled(rt, "kernels::gemm::run");
  check(jp, rt.processes(), rt.processes_here());
  GemmJob job(rt, jp);
  rt.run([&](threads::ThreadCtx& t) { job.multiplications(t); });
  job.win.reset();
  job.timings();
  if (jp.test.inject_fault && rt.process() == 0 && job.mi * job.nj > 0) job.fault();
  job.verify();
  if (jp.keep_c) job.keep_block();
  return std::move(job.jr);
}

}  // namespace compas::kernels::gemm

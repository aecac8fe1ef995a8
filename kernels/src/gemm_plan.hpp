// The schedule of GEMM's multiplications over a job (gemm_job.cpp): who sends which panel of A
// and B to whom, into which slot of the panel window, and when each slot is free again.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "compas/runtime/runtime.hpp"
#include "compas/threads/team.hpp"

namespace compas::kernels::gemm {

inline constexpr std::size_t kMaxPanel = 512;  // widest k panel of the 2-D algorithm

struct Range {
  std::size_t lo = 0, hi = 0;
  std::size_t size() const { return hi - lo; }
};

inline Range part(std::size_t n, int parts, int index) {
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
inline std::size_t arrival_signal(Mat m, int slot) {
  return static_cast<std::size_t>(m * 2 + slot);
}
inline std::size_t release_signal(Mat m, int slot, int from, int p) {
  return 4 + static_cast<std::size_t>((m * 2 + slot) * p + from);
}

// The schedule of one multiplication, built identically on every process (each needs its peers'
// uses of their slots to know when it may write them and how many releases to wait for). The
// multiplications of a run are separated by a job barrier, by which every panel has arrived and
// every release has been seen, so multiplication i waits for i times a multiplication's counts
// plus those of the plan.
class Plan {
 public:
  Plan(std::size_t n, int nodes, const Runtime::Grid& grid);

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

  void build();

  // Process q receives matrix m's operand of step s from `from` into slot s % 2: the
  // writer posts it at its step s - 1 (before the first step when s = 0), once q has released
  // the slot's previous use to it.
  void receive(int q, Mat m, std::size_t s, int from, std::size_t count, Source& src);

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

}  // namespace compas::kernels::gemm

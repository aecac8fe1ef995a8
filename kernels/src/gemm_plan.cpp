// The schedule of GEMM's multiplications (gemm_plan.hpp).
#include "gemm_plan.hpp"

#include <algorithm>

namespace compas::kernels::gemm {

Plan::Plan(std::size_t n, int nodes, const Runtime::Grid& grid)
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

void Plan::build() {
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
void Plan::receive(int q, Mat m, std::size_t s, int from, std::size_t count, Source& src) {
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

}  // namespace compas::kernels::gemm

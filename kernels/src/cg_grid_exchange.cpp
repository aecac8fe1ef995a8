#include "cg_grid_exchange.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <stdexcept>

#include "compas/perf/region.hpp"

namespace compas::kernels::cg::detail {

namespace {

std::vector<std::pair<std::size_t, std::size_t>> blocks_of(std::int64_t na, int columns) {
  std::vector<std::pair<std::size_t, std::size_t>> blocks;
  for (int k = 0; k < columns; ++k) {
    const auto [lo, hi] = grid_block(na, columns, k);
    blocks.emplace_back(static_cast<std::size_t>(lo), static_cast<std::size_t>(hi));
  }
  return blocks;
}

std::size_t largest(const std::vector<std::pair<std::size_t, std::size_t>>& blocks) {
  std::size_t most = 0;
  for (const auto& [lo, hi] : blocks) most = std::max(most, hi - lo);
  return most;
}

}  // namespace

GridExchange::GridExchange(Runtime& rt, std::int64_t na, Grid g)
    : rt_(rt),
      c_(g.columns),
      levels_(std::countr_zero(static_cast<unsigned>(g.columns))),
      i_(rt.process() / g.columns),
      j_(rt.process() % g.columns),
      blocks_(blocks_of(na, g.columns)),
      max_block_(largest(blocks_)),
      win_(rt.comm(),
           2 * static_cast<std::size_t>(levels_) * (max_block_ + kMaxSums) + 2 * max_block_,
           4 * static_cast<std::size_t>(levels_) + 2) {
  if (g.rows != g.columns || g.rows * g.columns != rt.processes())
    throw std::invalid_argument("cg: a " + std::to_string(g.rows) + " x " +
                                std::to_string(g.columns) + " grid for " +
                                std::to_string(rt.processes()) + " processes");
  const auto [lo, hi] = blocks_[static_cast<std::size_t>(i_)];
  const std::size_t chunks = (hi - lo + kChunkRows - 1) / kChunkRows;
  for (int q = 0; q < c_; ++q) piece_chunk_.push_back(threads::block_range(chunks, c_, q).first);
  piece_chunk_.push_back(chunks);
}

GridExchange::Range GridExchange::piece_rows(int q0, int q1) const {
  const auto [lo, hi] = blocks_[static_cast<std::size_t>(i_)];
  const auto row = [&](int q) {
    return std::min(hi - lo, piece_chunk_[static_cast<std::size_t>(q)] * kChunkRows);
  };
  return {row(q0), row(q1)};
}

std::size_t GridExchange::reduce_at(std::size_t parity, int step) const {
  return (parity * static_cast<std::size_t>(levels_) + static_cast<std::size_t>(step)) * max_block_;
}
std::size_t GridExchange::gather_at(std::size_t parity) const {
  return 2 * static_cast<std::size_t>(levels_) * max_block_ + parity * max_block_;
}
std::size_t GridExchange::sums_at(std::size_t parity, int step) const {
  return 2 * static_cast<std::size_t>(levels_) * max_block_ + 2 * max_block_ +
         (parity * static_cast<std::size_t>(levels_) + static_cast<std::size_t>(step)) * kMaxSums;
}

void GridExchange::assemble_vector(threads::ThreadCtx& t, std::span<double>) {
  // The vectors of a process column are whole on each of its processes: only the threads meet.
  COMPAS_REGION(t, "synchronize");
  t.barrier();
}

void GridExchange::assemble_partials(threads::ThreadCtx& t, std::span<double>, std::size_t) {
  COMPAS_REGION(t, "synchronize");
  t.barrier();
}

void GridExchange::synchronize(threads::ThreadCtx& t) {
  COMPAS_REGION(t, "synchronize");
  rt_.barrier(t);
}

// Step s pairs column j with column j ^ 2^s of the same process row: the two hold the sums of
// sibling nodes of the panel tree for the pieces [q0, q1) both still hold; the lower column keeps
// the first half of them, the upper the second, and each adds the other's sums of what it keeps,
// the lower column's on the left. After the last step a process holds the complete sums of one
// piece of its product rows.
void GridExchange::reduce_product(threads::ThreadCtx& t, std::span<double> w,
                                  std::span<double> out) {
  const std::size_t parity = reduce_calls_ % 2;
  const std::uint64_t rounds = reduce_calls_ / 2 + 1;
  int q0 = 0, q1 = c_;
  for (int s = 0; s < levels_; ++s) {
    const int half = (q1 - q0) / 2;
    const bool left = ((j_ >> s) & 1) == 0;
    const Range keep = left ? piece_rows(q0, q0 + half) : piece_rows(q0 + half, q1);
    const Range give = left ? piece_rows(q0 + half, q1) : piece_rows(q0, q0 + half);
    {
      COMPAS_REGION(t, "synchronize");
      t.barrier();  // w is complete (the product, or the previous step)
    }
    if (t.is_leader()) {
      COMPAS_REGION(t, "communicate");
      if (s == 0) ++reduce_calls_;  // every thread has read it (the barrier above)
      const int partner = i_ * c_ + (j_ ^ (1 << s));
      win_.put_signal(partner, reduce_at(parity, s) + give.first,
                      std::span<const double>(w.data() + give.first, give.second - give.first),
                      parity * static_cast<std::size_t>(levels_) + static_cast<std::size_t>(s));
      bytes_ += static_cast<double>((give.second - give.first) * sizeof(double));
      win_.wait_until(parity * static_cast<std::size_t>(levels_) + static_cast<std::size_t>(s),
                      rounds, partner);
    }
    {
      COMPAS_REGION(t, "synchronize");
      t.barrier();
    }
    COMPAS_REGION(t, "communicate");
    const double* theirs = win_.local().data() + reduce_at(parity, s);
    const auto [a, b] = threads::block_range(keep.second - keep.first, t.threads(), t.thread());
    for (std::size_t r = keep.first + a; r < keep.first + b; ++r)
      w[r] = left ? w[r] + theirs[r] : theirs[r] + w[r];
    if (left)
      q1 = q0 + half;
    else
      q0 += half;
  }
  gather(t, w, out, piece_rows(q0, q1), parity, rounds);
}

// The transpose: the piece goes to every process of column i (whose vectors are block i's rows);
// this process gets the pieces of block j from the processes of row j.
void GridExchange::gather(threads::ThreadCtx& t, std::span<double> w, std::span<double> out,
                          Range piece, std::size_t parity, std::uint64_t rounds) {
  const int me = rt_.process();
  const std::size_t sig = 2 * static_cast<std::size_t>(levels_) + parity;
  const std::uint64_t expect = static_cast<std::uint64_t>(c_ - (i_ == j_ ? 1 : 0));
  {
    COMPAS_REGION(t, "synchronize");
    t.barrier();  // the piece is complete
  }
  if (t.is_leader()) {
    COMPAS_REGION(t, "communicate");
    const std::span<const double> mine(w.data() + piece.first, piece.second - piece.first);
    for (int d = 0; d < c_; ++d) {
      const int k = (i_ + d) % c_;  // start with the next row: not everyone at row 0 at once
      const int rank = k * c_ + i_;
      if (rank == me) continue;
      win_.put_signal(rank, gather_at(parity) + piece.first, mine, sig);
      bytes_ += static_cast<double>(mine.size_bytes());
    }
    win_.wait_until(sig, rounds * expect);
  }
  {
    COMPAS_REGION(t, "synchronize");
    t.barrier();
  }
  {
    COMPAS_REGION(t, "communicate");
    const double* buf = win_.local().data() + gather_at(parity);
    const auto [a, b] = threads::block_range(out.size(), t.threads(), t.thread());
    auto copy = [&](const double* from, std::size_t lo, std::size_t hi) {
      if (hi > lo) std::memcpy(out.data() + lo, from + lo, (hi - lo) * sizeof(double));
    };
    if (i_ == j_) {  // block i is block j: my own piece comes from w
      copy(buf, a, std::min(b, piece.first));
      copy(w.data(), std::max(a, piece.first), std::min(b, piece.second));
      copy(buf, std::max(a, piece.second), b);
    } else {
      copy(buf, a, b);
    }
  }
  COMPAS_REGION(t, "synchronize");
  t.barrier();
}

// Recursive doubling along the process row, combining the nodes of the panel tree in its order.
void GridExchange::combine_sums(threads::ThreadCtx& t, std::span<double> values) {
  if (values.size() > kMaxSums)
    throw std::logic_error("cg: more sums at once than the window holds");
  const std::size_t parity = sums_calls_ % 2;
  const std::uint64_t rounds = sums_calls_ / 2 + 1;
  {
    COMPAS_REGION(t, "synchronize");
    t.barrier();
  }
  if (t.is_leader()) {
    COMPAS_REGION(t, "communicate");
    ++sums_calls_;
    std::array<double, kMaxSums> v{};
    std::copy(values.begin(), values.end(), v.begin());
    for (int s = 0; s < levels_; ++s) {
      const std::array<double, kMaxSums> send = v;
      const int partner = i_ * c_ + (j_ ^ (1 << s));
      const std::size_t sig = 2 * static_cast<std::size_t>(levels_) + 2 +
                              parity * static_cast<std::size_t>(levels_) +
                              static_cast<std::size_t>(s);
      win_.put_signal(partner, sums_at(parity, s),
                      std::span<const double>(send.data(), values.size()), sig);
      bytes_ += static_cast<double>(values.size() * sizeof(double));
      win_.wait_until(sig, rounds, partner);
      const double* theirs = win_.local().data() + sums_at(parity, s);
      const bool left = ((j_ >> s) & 1) == 0;
      for (std::size_t m = 0; m < values.size(); ++m)
        v[m] = left ? v[m] + theirs[m] : theirs[m] + v[m];
    }
    result_[parity] = v;
  }
  {
    COMPAS_REGION(t, "synchronize");
    t.barrier();
  }
  std::copy_n(result_[parity].begin(), values.size(), values.begin());
}

}  // namespace compas::kernels::cg::detail

// NAS CG's decompositions: which grid a job of P processes uses, and each process's share of it.
#include <algorithm>
#include <bit>
#include <stdexcept>
#include <string>

#include "cg_tree.hpp"
#include "cg_internal.hpp"

namespace compas::kernels::cg {

namespace {

// C with C x C = P and C a power of two, or 0.
int square_side(int processes) {
  for (int c = 1; c <= processes / c; c *= 2)
    if (c * c == processes) return c;
  return 0;
}

// From this many processes on, the grid sends fewer bytes per process than the rows
// decomposition: at P = 4 both send about 3/4 na values per inner iteration, and the grid's
// extra steps cost latency.
constexpr int kGridFrom = 16;

}  // namespace

Grid choose_grid(const ClassParams& cp, int processes, Decomposition d,
                 std::optional<SumOrder> order) {
  if (processes < 1) throw std::invalid_argument("cg: " + std::to_string(processes) + " processes");
  const int side = square_side(processes);
  const std::int64_t np = panel_count(cp.na);
  const bool fits = side > 1 && side <= np;
  switch (d) {
    case Decomposition::rows:
      return {processes, 1};
    case Decomposition::grid:
      if (!fits)
        throw std::invalid_argument(
            "cg: a grid needs C x C processes with C a power of two from 2 to the class's " +
            std::to_string(np) + " column panel(s) (class " + std::string(1, cp.cls) + "), not " +
            std::to_string(processes) + " processes");
      return {side, side};
    case Decomposition::automatic:
      break;
  }
  if (fits && processes >= kGridFrom && order != SumOrder::running) return {side, side};
  return {processes, 1};
}

std::pair<std::int64_t, std::int64_t> grid_block(std::int64_t na, int columns, int k) {
  if (columns < 1 || !std::has_single_bit(static_cast<unsigned>(columns)))
    throw std::invalid_argument("cg: " + std::to_string(columns) +
                                " process columns (a power of two is needed)");
  const detail::PanelRange node =
      detail::tree_node(panel_count(na), std::countr_zero(static_cast<unsigned>(columns)), k);
  return {panel_columns(na, node.lo).first, panel_columns(na, node.hi).first};
}

Layout grid_layout(std::int64_t na, Grid g, int rank) {
  if (g.columns < 2 || g.rows != g.columns || rank < 0 || rank >= g.rows * g.columns)
    throw std::invalid_argument("cg: process " + std::to_string(rank) + " of a " +
                                std::to_string(g.rows) + " x " + std::to_string(g.columns) +
                                " grid");
  const int j = rank % g.columns;
  const detail::PanelRange node =
      detail::tree_node(panel_count(na), std::countr_zero(static_cast<unsigned>(g.columns)), j);
  const auto [lo, hi] = grid_block(na, g.columns, j);
  return {lo, hi, node.lo, node.hi, true, SumOrder::tree};
}

void keep_columns(Csr& a, std::int64_t lo, std::int64_t hi) {
  std::size_t to = 0;
  std::int64_t row_start = 0;
  for (std::int64_t i = 0; i < a.rows(); ++i) {
    const std::int64_t from = row_start, end = a.rowstr[static_cast<std::size_t>(i) + 1];
    row_start = end;
    for (std::int64_t k = from; k < end; ++k) {
      const std::int32_t c = a.colidx[static_cast<std::size_t>(k)];
      if (c < lo || c >= hi) continue;
      a.colidx[to] = c;
      a.values[to] = a.values[static_cast<std::size_t>(k)];
      ++to;
    }
    a.rowstr[static_cast<std::size_t>(i) + 1] = static_cast<std::int64_t>(to);
  }
  a.colidx.resize(to);
  a.values.resize(to);
  a.colidx.shrink_to_fit();
  a.values.shrink_to_fit();
}

}  // namespace compas::kernels::cg

// compas::Summa's checks and groups (summa.hpp): the same verdict on every process, then the
// grid's row and column groups.
#include "compas/port/summa.hpp"

#include <string>

#include "dist_agree.hpp"

namespace compas::detail {

namespace {

std::string grid_text(ProcessGrid g) {
  return std::to_string(g.rows) + " x " + std::to_string(g.cols);
}

// "a [0, 4) x [0, 6) on a 2 x 2 grid": the array's domain (matrix columns x rows), its grid.
std::string array_text(const char* name, const DistBase& x, Range2 d) {
  return std::string(name) + " " + range_text(d.rows) + " x " + range_text(d.cols) + " on a " +
         grid_text(x.process_grid()) + " grid";
}

std::string describe(const SummaArrays& x, index width, std::size_t elem_bytes) {
  return array_text("a", *x.a, x.da) + ", " + array_text("b", *x.b, x.db) + ", " +
         array_text("c", *x.c, x.dc) + ", panel width " + std::to_string(width) + ", " +
         std::to_string(elem_bytes) + "-byte elements";
}

bool same(Range x, Range y) {
  return x.lo == y.lo && x.hi == y.hi;
}
bool same(ProcessGrid x, ProcessGrid y) {
  return x.rows == y.rows && x.cols == y.cols;
}

// What is wrong with C += A B on these arrays ("" when nothing): alike on every process once
// they agree on the description.
std::string problem(const SummaArrays& x, index width) {
  if (width < 1) return "panel width " + std::to_string(width) + ": 1 or more is needed";
  if (x.c == x.a || x.c == x.b) return "c is also a or b: C += A B needs c to be its own array";
  if (!same(x.a->process_grid(), x.c->process_grid()) ||
      !same(x.b->process_grid(), x.c->process_grid()))
    return "the arrays are cut over different process grids: one grid is needed";
  if (!same(x.da.cols, x.dc.cols) || !same(x.db.rows, x.dc.rows) || !same(x.da.rows, x.db.cols))
    return "the shapes make no product: indexed (column, row), a must be K x M, b N x K and c "
           "N x M";
  return "";
}

}  // namespace

SummaGroups summa_groups(const SummaArrays& x, index width, std::size_t elem_bytes) {
  Runtime& rt = x.c->runtime();
  DistAccess::halo(*x.c).check_funneled("compas::Summa");
  const std::string mine = describe(x, width, elem_bytes);
  const Disagreement d = compare_across(rt, mine);
  if (d.rank != 0)
    throw CollectiveError("compas::Summa: the processes passed different arguments: rank 0 " +
                          d.first + "; rank " + std::to_string(d.rank) + " " + d.other +
                          " (every process makes the same Summa)");
  if (const std::string p = problem(x, width); !p.empty())
    throw CollectiveError("compas::Summa: " + mine + ": " + p);
  const ProcessGrid g = x.c->process_grid();
  return {grid_rows(rt, g), grid_cols(rt, g)};
}

}  // namespace compas::detail

// NAS CG's decompositions: the panel tree that fixes the order of every sum (its nodes, the
// product's streaming steps and the process columns' pairwise combination all add in the tree's
// order) and the running order of the rows layout, the panels (whole chunks, as even as chunks
// allow), the grids a job of P processes can use, and the blocks and columns each process of a grid
// keeps.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "../../kernels/src/cg_tree.hpp"
#include "cg_internal.hpp"

namespace cg = compas::kernels::cg;
namespace cd = compas::kernels::cg::detail;

namespace {

std::uint64_t bits(double v) {
  return std::bit_cast<std::uint64_t>(v);
}

// Values whose sum depends on the order of the additions: random signs, mantissas and exponents.
std::vector<double> scattered(std::size_t n, unsigned seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> mantissa(1.0, 2.0);
  std::uniform_int_distribution<int> exponent(-40, 40);
  std::vector<double> v(n);
  for (double& x : v) x = (gen() & 1 ? -1 : 1) * std::ldexp(mantissa(gen), exponent(gen));
  return v;
}

// What Panels::Sink does for one row: each leaf's value through its step (slot 0 is the row's
// output, the others the stack's levels).
double streamed(const std::vector<cd::LeafStep>& steps, const std::vector<double>& leaf) {
  std::vector<double> slot(cd::LeafStep::kMaxDepth + 1, std::nan(""));
  for (std::size_t k = 0; k < steps.size(); ++k) {
    double v = leaf[k];
    for (int d = 0; d < steps[k].pops; ++d)
      v = slot[steps[k].from[static_cast<std::size_t>(d)]] + v;
    slot[steps[k].store] = v;
  }
  return slot[0];
}

TEST(CgTree, TheNodesOfADepthPartitionThePanelsInOrderAndEvenly) {
  for (std::int64_t np = 1; np <= 40; ++np)
    for (int depth = 0; (std::int64_t{1} << depth) <= np; ++depth) {
      std::int64_t next = 0, least = np, most = 0;
      for (int k = 0; k < (1 << depth); ++k) {
        const cd::PanelRange r = cd::tree_node(np, depth, k);
        EXPECT_EQ(r.lo, next) << np << " panels, depth " << depth << ", node " << k;
        next = r.hi;
        least = std::min(least, r.size());
        most = std::max(most, r.size());
      }
      EXPECT_EQ(next, np);
      EXPECT_GE(least, 1);
      EXPECT_LE(most - least, 1) << np << " panels, depth " << depth;
    }
  EXPECT_THROW(cd::tree_node(3, 2, 0), std::invalid_argument);  // 4 nodes of 3 panels
  EXPECT_THROW(cd::tree_node(8, 1, 2), std::invalid_argument);
}

TEST(CgTree, TheProductsStreamingStepsAddInTheTreesOrder) {
  int differs_from_running_sum = 0;
  for (std::int64_t np = 1; np <= 40; ++np)
    for (int depth = 0; depth <= 3 && (std::int64_t{1} << depth) <= np; ++depth)
      for (int k = 0; k < (1 << depth); ++k) {
        const cd::PanelRange node = cd::tree_node(np, depth, k);
        const auto steps = cd::leaf_steps(node);
        ASSERT_EQ(steps.size(), static_cast<std::size_t>(node.size()));
        EXPECT_EQ(steps.back().store, 0);  // the last leaf finishes the subtree's value
        // The output holds the bottom of the stack: at most ceil(log2 n) - 1 levels beyond it,
        // and every slot a step names is among them.
        const int depth = cd::stack_depth(steps);
        const int levels = std::bit_width(static_cast<std::uint64_t>(node.size() - 1));
        EXPECT_LE(depth, std::max(0, levels - 1)) << np << " panels, node " << k;
        for (const cd::LeafStep& s : steps) {
          EXPECT_LE(s.store, depth);
          for (int d = 0; d < s.pops; ++d) EXPECT_LE(s.from[static_cast<std::size_t>(d)], depth);
          if (s.pops > 0) {  // in place: a node's value goes where its farthest sibling waited
            EXPECT_EQ(s.store, s.from[static_cast<std::size_t>(s.pops - 1)]);
          }
        }
        for (unsigned seed = 0; seed < 4; ++seed) {
          const auto v = scattered(steps.size(), seed * 97 + static_cast<unsigned>(np));
          const double tree = cd::tree_sum(node, v);
          EXPECT_EQ(bits(streamed(steps, v)), bits(tree)) << np << " panels, node " << k;
          double running = 0;
          for (double x : v) running += x;
          differs_from_running_sum += bits(running) != bits(tree);
        }
      }
  // 19 panels (class B): 10 | 9, 5 | 5 and 5 | 4, ...; the deepest waiting value is that of
  // panel 16 (right, right, right, then left: 19 -> 9 -> 4 -> 2 -> 1): 3 levels beyond the output.
  EXPECT_EQ(cd::stack_depth(cd::leaf_steps({0, 19})), 3);
  // The check has teeth: the tree's order is not the running sum's.
  EXPECT_GT(differs_from_running_sum, 100);
}

// The rows layout's other order: the running steps add the panels left to right, as
// running_sum does, with no stack level; they differ from the tree's beyond two panels.
TEST(CgTree, TheRunningStepsAddLeftToRightWithoutAStack) {
  int differs_from_tree = 0;
  for (std::int64_t np = 1; np <= 40; ++np) {
    const cd::PanelRange all{0, np};
    const auto steps = cd::running_steps(all);
    ASSERT_EQ(steps.size(), static_cast<std::size_t>(np));
    EXPECT_EQ(cd::stack_depth(steps), 0) << np << " panels";
    for (unsigned seed = 0; seed < 4; ++seed) {
      const auto v = scattered(steps.size(), seed * 31 + static_cast<unsigned>(np));
      double left_to_right = v[0];
      for (std::size_t k = 1; k < v.size(); ++k) left_to_right = left_to_right + v[k];
      EXPECT_EQ(bits(streamed(steps, v)), bits(left_to_right)) << np << " panels";
      EXPECT_EQ(bits(cd::running_sum(v)), bits(left_to_right)) << np << " panels";
      if (np <= 2) {  // one or two panels: the orders agree
        EXPECT_EQ(bits(cd::tree_sum(all, v)), bits(left_to_right)) << np << " panels";
      }
      differs_from_tree += bits(cd::tree_sum(all, v)) != bits(left_to_right);
    }
  }
  EXPECT_GT(differs_from_tree, 50);
  EXPECT_THROW(cd::running_steps({3, 3}), std::invalid_argument);
  EXPECT_THROW(cd::running_sum({}), std::invalid_argument);
}

// The grid's reductions: the C process columns' node values, combined with partner j ^ 2^s at
// step s (the lower column on the left), give the whole tree's sum on every column.
TEST(CgTree, ProcessColumnsCombinedPairwiseGiveTheWholeTreesSum) {
  for (std::int64_t np : {2, 3, 4, 5, 7, 8, 19, 37})
    for (int columns = 2; columns <= np && columns <= 16; columns *= 2) {
      const auto v = scattered(static_cast<std::size_t>(np), static_cast<unsigned>(np + columns));
      const double whole = cd::tree_sum({0, np}, v);
      const int levels = std::countr_zero(static_cast<unsigned>(columns));
      std::vector<double> node(static_cast<std::size_t>(columns));
      for (int j = 0; j < columns; ++j) {
        const cd::PanelRange r = cd::tree_node(np, levels, j);
        node[static_cast<std::size_t>(j)] = cd::tree_sum(
            r, std::span<const double>(v.data() + r.lo, static_cast<std::size_t>(r.size())));
      }
      for (int s = 0; s < levels; ++s) {
        std::vector<double> next(node.size());
        for (int j = 0; j < columns; ++j) {
          const double mine = node[static_cast<std::size_t>(j)];
          const double theirs = node[static_cast<std::size_t>(j ^ (1 << s))];
          next[static_cast<std::size_t>(j)] = ((j >> s) & 1) == 0 ? mine + theirs : theirs + mine;
        }
        node = next;
      }
      for (int j = 0; j < columns; ++j)
        EXPECT_EQ(bits(node[static_cast<std::size_t>(j)]), bits(whole))
            << np << " panels, " << columns << " columns, column " << j;
    }
}

TEST(CgPanels, PanelsAreWholeChunksAsEvenAsChunksAllow) {
  for (std::int64_t na : {10, 65, 1400, 4096, 4097, 7000, 14000, 75000, 150000}) {
    const std::int64_t np = cg::panel_count(na);
    std::int64_t next = 0, least = na, most = 0;
    for (std::int64_t j = 0; j < np; ++j) {
      const auto [lo, hi] = cg::panel_columns(na, j);
      EXPECT_EQ(lo, next) << "na " << na << ", panel " << j;
      EXPECT_EQ(lo % cg::kChunkRows, 0);
      EXPECT_TRUE(hi % cg::kChunkRows == 0 || hi == na);
      EXPECT_LE(hi - lo, cg::kPanelColumns);
      for (std::int64_t c : {lo, (lo + hi) / 2, hi - 1}) EXPECT_EQ(cg::panel_of(na, c), j) << c;
      next = hi;
      if (hi < na) {  // the last panel may end in a partial chunk
        least = std::min(least, hi - lo);
        most = std::max(most, hi - lo);
      }
    }
    EXPECT_EQ(next, na);
    if (np > 2) {
      EXPECT_LE(most - least, cg::kChunkRows) << "na " << na;
    }
    EXPECT_EQ(cg::panel_columns(na, np), (std::pair<std::int64_t, std::int64_t>{na, na}));
  }
  EXPECT_THROW(cg::panel_columns(1400, 2), std::invalid_argument);
}

TEST(CgGrid, AutomaticTakesSquareGridsFromSixteenProcessesAndRowsBelow) {
  const auto grid = [](char cls, int p, cg::Decomposition d = cg::Decomposition::automatic) {
    const cg::Grid g = cg::choose_grid(cg::params(cls), p, d);
    return std::to_string(g.rows) + "x" + std::to_string(g.columns);
  };
  EXPECT_EQ(grid('A', 1), "1x1");
  EXPECT_EQ(grid('A', 4), "4x1");
  EXPECT_EQ(grid('A', 8), "8x1");  // not C x C
  EXPECT_EQ(grid('A', 16), "4x4");
  EXPECT_EQ(grid('A', 64), "64x1");  // 8 columns, but class A has 4 panels
  EXPECT_EQ(grid('B', 64), "8x8");
  EXPECT_EQ(grid('S', 16), "16x1");  // one panel
  EXPECT_EQ(grid('W', 4, cg::Decomposition::grid), "2x2");
  EXPECT_EQ(grid('A', 16, cg::Decomposition::rows), "16x1");
  // The running sum order is the rows' only: asked for, automatic takes rows; the tree's order
  // leaves automatic's choice as it is.
  const auto with = [](int p, cg::SumOrder order) {
    return cg::choose_grid(cg::params('B'), p, cg::Decomposition::automatic, order).columns;
  };
  EXPECT_EQ(with(64, cg::SumOrder::running), 1);
  EXPECT_EQ(with(16, cg::SumOrder::running), 1);
  EXPECT_EQ(with(64, cg::SumOrder::tree), 8);
  EXPECT_EQ(
      cg::choose_grid(cg::params('B'), 16, cg::Decomposition::grid, cg::SumOrder::running).columns,
      4);  // an explicit grid stays: the job refuses the running order on it
  try {
    cg::choose_grid(cg::params('A'), 8, cg::Decomposition::grid);
    FAIL() << "a grid of 8 processes";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("not 8 processes"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("C x C"), std::string::npos) << e.what();
  }
  EXPECT_THROW(cg::choose_grid(cg::params('S'), 4, cg::Decomposition::grid), std::invalid_argument);
  EXPECT_THROW(cg::choose_grid(cg::params('S'), 0, cg::Decomposition::rows), std::invalid_argument);
}

TEST(CgGrid, BlocksTileTheRowsAndEachProcessHoldsItsColumnBlock) {
  for (char cls : {'W', 'A', 'B', 'C'}) {
    const std::int64_t na = cg::params(cls).na;
    for (int c = 2; c <= cg::panel_count(na) && c <= 8; c *= 2) {
      std::int64_t next = 0;
      for (int k = 0; k < c; ++k) {
        const auto [lo, hi] = cg::grid_block(na, c, k);
        EXPECT_EQ(lo, next) << cls << ", " << c << " columns, block " << k;
        EXPECT_EQ(lo % cg::kChunkRows, 0);
        EXPECT_GT(hi, lo);
        next = hi;
        // Blocks as even as panels allow.
        EXPECT_LE(hi - lo, na / c + cg::kPanelColumns) << cls << " block " << k;
      }
      EXPECT_EQ(next, na);
      for (int rank = 0; rank < c * c; ++rank) {
        const cg::Layout l = cg::grid_layout(na, {c, c}, rank);
        const auto [lo, hi] = cg::grid_block(na, c, rank % c);
        EXPECT_EQ(l.vector_lo, lo);
        EXPECT_EQ(l.vector_hi, hi);
        EXPECT_EQ(cg::panel_columns(na, l.panel_lo).first, lo);
        EXPECT_EQ(cg::panel_columns(na, l.panel_hi).first, hi);
        EXPECT_TRUE(l.reduces_product);
      }
    }
  }
  EXPECT_THROW(cg::grid_block(7000, 3, 0), std::invalid_argument);
  EXPECT_THROW(cg::grid_layout(7000, {2, 2}, 4), std::invalid_argument);
}

TEST(CgGrid, KeepColumnsKeepsExactlyTheEntriesInTheRangeRowByRow) {
  const cg::ClassParams cp = cg::params('S');
  const cg::Csr whole = cg::make_matrix(cp, 128, 320);
  cg::Csr part = whole;
  cg::keep_columns(part, 300, 900);
  ASSERT_EQ(part.rowstr.size(), whole.rowstr.size());
  for (std::int64_t i = 0; i < whole.rows(); ++i) {
    std::vector<std::pair<std::int32_t, double>> expect, got;
    for (auto k = whole.rowstr[static_cast<std::size_t>(i)];
         k < whole.rowstr[static_cast<std::size_t>(i) + 1]; ++k) {
      const auto c = whole.colidx[static_cast<std::size_t>(k)];
      if (c >= 300 && c < 900) expect.emplace_back(c, whole.values[static_cast<std::size_t>(k)]);
    }
    for (auto k = part.rowstr[static_cast<std::size_t>(i)];
         k < part.rowstr[static_cast<std::size_t>(i) + 1]; ++k)
      got.emplace_back(part.colidx[static_cast<std::size_t>(k)],
                       part.values[static_cast<std::size_t>(k)]);
    EXPECT_EQ(got, expect) << "row " << whole.row_lo + i;
  }
  EXPECT_LT(part.nnz(), whole.nnz());
  EXPECT_GT(part.nnz(), 0);
}

}  // namespace

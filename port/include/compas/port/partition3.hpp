// Partition3: how a 3-D DistArray (dist_array3.hpp) is cut over its process grid, one list of
// boundaries per dimension. The default is the block split; a program may give its own (an MPI
// code's own decomposition, a load balance) or derive one level of a multigrid hierarchy from
// another so that a coarse cell and the fine cells under it live on one process:
//
//   compas::Partition3 top = compas::block_partition({{0, 8}, {0, 8}, {0, 8}}, rt.processes())
//                                .refined(4);                       // 32^3, aligned with 8^3
//   compas::DistArray<double, 3> u(rt, top.domain(), {.partition = top});
//   compas::DistArray<double, 3> u2 = u.coarsened(2);               // 16^3, aligned with u
//
// splits[d] holds the g_d + 1 boundaries of dimension d's parts (d = 0 planes, 1 rows, 2
// columns), global indices rising strictly from the domain's first index to its end: part p of
// dimension d is [splits[d][p], splits[d][p + 1]), so every part holds at least one cell. The
// process at grid position (p0, p1, p2) holds parts p0, p1 and p2 of the three dimensions; its
// rank (a job rank, or a group rank for an array on a Group) is (p0 g1 + p1) g2 + p2.
//
// The block split of n cells [lo, lo + n) over g parts (what block_partition and the default
// DistArray<T, 3> give, the same as compas::split and Runtime::process_block): with q = n / g and
// e = n % g (integer division), part p begins at lo + p q + min(p, e) and holds q + 1 cells when
// p < e, else q: the first e parts are one longer. 10 cells over 4: 3, 3, 2, 2 (boundaries 0, 3,
// 6, 8, 10).
//
// Alignment (coarsened, refined; DistArray<T, 3>::coarsened): the coarse domain of a fine domain
// [lo, lo + n) by a factor f is [lo, lo + n / f), and coarse cell lo + c lies with the fine cells
// lo + f c .. lo + f c + f - 1: for f = 2 and 0-based domains coarse cell c with fine cells 2c and
// 2c + 1 (1-based, [1, n + 1): coarse c with fine 2c - 1 and 2c, NAS MG's numbering). A fine
// boundary b becomes the coarse boundary lo + (b - lo) / f, which needs b - lo to be a multiple of
// f (else a coarse cell would straddle two processes): coarsened() refuses it, naming the
// boundary. refined(f) is the inverse (every boundary lo + f (b - lo)) and always aligns, so a
// hierarchy is best built from its coarsest distributed level upwards.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "compas/runtime/range.hpp"

namespace compas {

struct Partition3 {
  std::array<std::vector<index>, 3> splits;  // per dimension its g_d + 1 boundaries; all empty:
                                             // none given (DistOptions3: the block split)

  bool empty() const { return splits[0].empty() && splits[1].empty() && splits[2].empty(); }
  // Parts per dimension (splits[d].size() - 1) and the domain the boundaries span; a dimension
  // without boundaries counts 0 parts and an empty range.
  std::array<int, 3> grid() const;
  Range3 domain() const;
  // The cells of the process at grid position `pos` (0 <= pos[d] < grid()[d]).
  Range3 part(const std::array<int, 3>& pos) const;
  // The partition of the coarse domain aligned with this one (above): std::invalid_argument
  // naming the factor, the dimension and the boundary that a factor below 1 or a boundary not on
  // a multiple of it from the domain's start makes impossible.
  Partition3 coarsened(index factor) const;
  // The partition of the fine domain this one is the coarsening of (std::invalid_argument for a
  // factor below 1, or a domain too large for an index).
  Partition3 refined(index factor) const;

  friend bool operator==(const Partition3&, const Partition3&) = default;
};

// The block split (above) of `domain` over `grid`'s sides; sides of 0 are chosen for `processes`
// processes as DistArray<T, 3> chooses them (DistOptions3::grid: the processes' prime factors,
// largest first, each to the free side with the fewest processes so far, the slowest dimension
// first on a tie). std::invalid_argument naming the values when the sides cannot multiply to
// `processes` or a dimension has fewer cells than parts.
Partition3 block_partition(Range3 domain, int processes, std::array<int, 3> grid = {0, 0, 0});

// "{0, 3, 6, 8} x {0, 8} x {0, 4, 8}": the boundaries as messages and descriptions name them.
std::string partition_text(const Partition3& p);

}  // namespace compas

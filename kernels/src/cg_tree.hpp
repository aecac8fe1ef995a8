// The order in which NAS CG's sums over column panels are added (cg.hpp: "Reproducibility").
//
// The panels [0, np) of a matrix form a binary tree: a node of two or more panels splits into
// its first ceil(n / 2) panels (left child) and the rest (right child); a node of one panel is a
// leaf. In the tree's order (SumOrder::tree) a row's product is the tree's sum of its panels'
// sums (left + right at every node), and so is a dot product's, whose panel sums are its chunks'
// partial sums added in chunk order. A process of a 2-D grid with C = 2^L process columns holds
// the columns of one node of depth L; combining the processes' node values pairwise (partners
// j ^ 2^s at step s, the lower column on the left) is the same tree, so a grid and rows in the
// tree's order add in the same order. The running order (rows only) is the left-deep tree.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

namespace compas::kernels::cg::detail {

struct PanelRange {
  std::int64_t lo = 0, hi = 0;
  std::int64_t size() const { return hi - lo; }
};

// Node `index` (0 = leftmost) of depth `depth` in the tree over panels [0, np). Needs
// np >= 2^depth (every node of that depth then has a panel at least).
PanelRange tree_node(std::int64_t np, int depth, int index);

// What the product does with a row's sum over one leaf panel of the subtree `root`, in the order
// the leaves are swept: v = sum; for each of `pops` slots (the nearest left sibling first):
// v = slot[from[k]] + v; then slot[store] = v. The slots are a stack of the left siblings'
// values still waiting for their right siblings, kept in place: slot 0 is the subtree's value
// (the product's output), a value waits in the slot just above those of the values that
// wait longer, and a node's value goes where its left-most waiting sibling was, so a leaf that
// adds one sibling reads and writes one array. Slot s >= 1 is stack level s - 1.
struct LeafStep {
  static constexpr int kMaxDepth = 8;
  std::uint8_t pops = 0;
  std::array<std::uint8_t, kMaxDepth> from{};
  std::uint8_t store = 0;
};
// One step per panel of `root`, in panel order; std::length_error beyond kMaxDepth levels.
std::vector<LeafStep> leaf_steps(PanelRange root);
// The steps of a sum left to right (the left-deep tree): the first panel's sum goes to slot 0,
// every later one is added to it. No stack levels.
std::vector<LeafStep> running_steps(PanelRange root);
// Stack levels the steps use: their highest slot (0 for one or two panels).
int stack_depth(const std::vector<LeafStep>& steps);

// The tree's sum of values[k], the value of panel root.lo + k, over the subtree `root`.
double tree_sum(PanelRange root, std::span<const double> values);
// values[0] + values[1] + ... left to right (std::invalid_argument for none).
double running_sum(std::span<const double> values);

}  // namespace compas::kernels::cg::detail

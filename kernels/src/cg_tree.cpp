#include "cg_tree.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace compas::kernels::cg::detail {

namespace {

std::int64_t split(PanelRange r) {
  return r.lo + (r.size() + 1) / 2;
}

// right[k]: the path to the leaf goes right below its ancestor of depth k.
void walk(PanelRange node, int depth, std::vector<bool>& right, std::vector<LeafStep>& out) {
  if (node.size() == 1) {
    // Values waiting: one per right turn of the path; the leaf adds those of its trailing right
    // turns (the nearest first) and leaves its node's value where the farthest of them was.
    const int waiting = static_cast<int>(std::count(right.begin(), right.end(), true));
    LeafStep s;
    for (auto k = right.rbegin(); k != right.rend() && *k; ++k) {
      s.from[s.pops] = static_cast<std::uint8_t>(waiting - 1 - s.pops);
      ++s.pops;
    }
    s.store = static_cast<std::uint8_t>(waiting - s.pops);
    out.push_back(s);
    return;
  }
  if (depth + 1 >= LeafStep::kMaxDepth)
    throw std::length_error("cg: a panel tree deeper than " + std::to_string(LeafStep::kMaxDepth) +
                            " levels");
  const std::int64_t mid = split(node);
  right.push_back(false);
  walk({node.lo, mid}, depth + 1, right, out);
  right.back() = true;
  walk({mid, node.hi}, depth + 1, right, out);
  right.pop_back();
}

double sum(PanelRange node, std::int64_t base, std::span<const double> values) {
  if (node.size() == 1) return values[static_cast<std::size_t>(node.lo - base)];
  const std::int64_t mid = split(node);
  return sum({node.lo, mid}, base, values) + sum({mid, node.hi}, base, values);
}

}  // namespace

PanelRange tree_node(std::int64_t np, int depth, int index) {
  if (depth < 0 || depth >= 31 || index < 0 || index >= (1 << depth) || np < (1LL << depth))
    throw std::invalid_argument("cg: node " + std::to_string(index) + " of depth " +
                                std::to_string(depth) + " in a tree of " + std::to_string(np) +
                                " panels");
  PanelRange r{0, np};
  for (int level = depth - 1; level >= 0; --level) {
    const std::int64_t mid = split(r);
    if ((index >> level) & 1)
      r.lo = mid;
    else
      r.hi = mid;
  }
  return r;
}

std::vector<LeafStep> leaf_steps(PanelRange root) {
  if (root.size() < 1) throw std::invalid_argument("cg: an empty panel range");
  std::vector<LeafStep> out;
  std::vector<bool> right;
  walk(root, 0, right, out);
  return out;
}

std::vector<LeafStep> running_steps(PanelRange root) {
  if (root.size() < 1) throw std::invalid_argument("cg: an empty panel range");
  std::vector<LeafStep> out(static_cast<std::size_t>(root.size()));
  for (std::size_t j = 1; j < out.size(); ++j) {
    out[j].pops = 1;  // from slot 0, back to slot 0
    out[j].from[0] = 0;
    out[j].store = 0;
  }
  return out;
}

int stack_depth(const std::vector<LeafStep>& steps) {
  int depth = 0;
  for (const LeafStep& s : steps) {
    depth = std::max(depth, static_cast<int>(s.store));
    for (int k = 0; k < s.pops; ++k)
      depth = std::max(depth, static_cast<int>(s.from[static_cast<std::size_t>(k)]));
  }
  return depth;
}

double tree_sum(PanelRange root, std::span<const double> values) {
  if (root.size() < 1 || values.size() != static_cast<std::size_t>(root.size()))
    throw std::invalid_argument("cg: tree_sum over " + std::to_string(values.size()) +
                                " values for " + std::to_string(root.size()) + " panels");
  return sum(root, root.lo, values);
}

double running_sum(std::span<const double> values) {
  if (values.empty()) throw std::invalid_argument("cg: running_sum over no values");
  double sum = values[0];
  for (std::size_t k = 1; k < values.size(); ++k) sum = sum + values[k];
  return sum;
}

}  // namespace compas::kernels::cg::detail

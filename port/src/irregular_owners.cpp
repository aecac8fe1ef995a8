#include "irregular_owners.hpp"

#include <algorithm>

namespace compas::detail {

namespace {

std::vector<index> distinct(std::vector<index> v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

std::size_t block_of(const std::vector<index>& los, index x) {
  return static_cast<std::size_t>(std::upper_bound(los.begin(), los.end(), x) - los.begin() - 1);
}

}  // namespace

Owners::Owners(const std::vector<Range2>& owned) {
  std::vector<index> rows, cols;
  for (const Range2& p : owned) {
    rows.push_back(p.rows.lo);
    cols.push_back(p.cols.lo);
  }
  row_lo_ = distinct(std::move(rows));
  col_lo_ = distinct(std::move(cols));
  rank_.assign(row_lo_.size() * col_lo_.size(), 0);
  for (std::size_t r = 0; r < owned.size(); ++r)
    rank_[block_of(row_lo_, owned[r].rows.lo) * col_lo_.size() +
          block_of(col_lo_, owned[r].cols.lo)] = r;
}

std::size_t Owners::of(index i, index j) const {
  return rank_[block_of(row_lo_, i) * col_lo_.size() + block_of(col_lo_, j)];
}

}  // namespace compas::detail

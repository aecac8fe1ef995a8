// Partition3 and block_partition (partition3.hpp): boundaries, their coarsening and refinement.
#include "compas/port/partition3.hpp"

#include <stdexcept>
#include <string>

#include "dist_grid3.hpp"

namespace compas {

namespace {

const char* const kDimName[3] = {"planes", "rows", "columns"};

std::string list_text(const std::vector<index>& v) {
  std::string t = "{";
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i) t += ", ";
    t += std::to_string(v[i]);
  }
  t += "}";
  return t;
}

void check_factor(const char* call, index factor) {
  if (factor < 1)
    throw std::invalid_argument(std::string("Partition3::") + call + "(" + std::to_string(factor) +
                                "): the factor is 1 or more");
}

}  // namespace

std::array<int, 3> Partition3::grid() const {
  std::array<int, 3> g{};
  for (int d = 0; d < 3; ++d) g[d] = splits[d].empty() ? 0 : static_cast<int>(splits[d].size() - 1);
  return g;
}

Range3 Partition3::domain() const {
  Range3 r;
  for (int d = 0; d < 3; ++d)
    if (!splits[d].empty()) r.dim(d) = {splits[d].front(), splits[d].back()};
  return r;
}

Range3 Partition3::part(const std::array<int, 3>& pos) const {
  Range3 r;
  for (int d = 0; d < 3; ++d) {
    const auto p = static_cast<std::size_t>(pos[d]);
    r.dim(d) = {splits[d].at(p), splits[d].at(p + 1)};
  }
  return r;
}

Partition3 Partition3::coarsened(index factor) const {
  check_factor("coarsened", factor);
  Partition3 c;
  for (int d = 0; d < 3; ++d) {
    if (splits[d].empty()) continue;
    const index lo = splits[d].front();
    for (std::size_t p = 0; p < splits[d].size(); ++p) {
      const index b = splits[d][p];
      if ((b - lo) % factor != 0)
        throw std::invalid_argument(
            "Partition3::coarsened(" + std::to_string(factor) + "): boundary " + std::to_string(p) +
            " of the " + kDimName[d] + " " + list_text(splits[d]) + " is " + std::to_string(b) +
            ", " + std::to_string(b - lo) + " cells from the first (" + std::to_string(lo) +
            "), not a multiple of " + std::to_string(factor) +
            ": a coarse cell lo + c lies with the fine cells lo + " + std::to_string(factor) +
            " c .. lo + " + std::to_string(factor) + " c + " + std::to_string(factor - 1) +
            ", on one process, so every boundary is a multiple of the factor from lo");
      c.splits[d].push_back(lo + (b - lo) / factor);
    }
  }
  return c;
}

Partition3 Partition3::refined(index factor) const {
  check_factor("refined", factor);
  Partition3 f;
  for (int d = 0; d < 3; ++d) {
    if (splits[d].empty()) continue;
    const index lo = splits[d].front();
    for (const index b : splits[d]) {
      index off = 0, at = 0;
      if (__builtin_mul_overflow(b - lo, factor, &off) || __builtin_add_overflow(lo, off, &at))
        throw std::invalid_argument("Partition3::refined(" + std::to_string(factor) + "): the " +
                                    kDimName[d] + " " + list_text(splits[d]) +
                                    " refined do not fit an index");
      f.splits[d].push_back(at);
    }
  }
  return f;
}

Partition3 block_partition(Range3 domain, int processes, std::array<int, 3> grid) {
  if (processes < 1)
    throw std::invalid_argument("block_partition: " + std::to_string(processes) +
                                " processes: 1 or more");
  const std::array<int, 3> g = detail::choose_grid3(processes, grid);
  Partition3 p;
  for (int d = 0; d < 3; ++d) {
    const Range r = domain.dim(d);
    if (r.size() < g[d])
      throw std::invalid_argument("block_partition: " + std::to_string(r.size()) + " " +
                                  kDimName[d] + " over " + std::to_string(g[d]) +
                                  " processes leave some process without any: at least one each");
    for (int q = 0; q < g[d]; ++q) p.splits[d].push_back(block_of(r, g[d], q).lo);
    p.splits[d].push_back(r.hi);
  }
  return p;
}

std::string partition_text(const Partition3& p) {
  return list_text(p.splits[0]) + " x " + list_text(p.splits[1]) + " x " + list_text(p.splits[2]);
}

}  // namespace compas

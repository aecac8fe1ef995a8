// partition_problem, smallest_part, largest_part (dist_partition3.hpp).
#include "dist_partition3.hpp"

#include <algorithm>

namespace compas::detail {

namespace {

const char* const kDimName[3] = {"planes", "rows", "columns"};

// What is wrong with dimension d's boundaries for the range r; "" when nothing is.
std::string dimension_problem(const Partition3& p, int d, const Range& r) {
  const std::vector<index>& b = p.splits[d];
  const std::string of = std::string(" of the ") + kDimName[d] + " ";
  if (b.size() < 2)
    return std::to_string(b.size()) + " boundaries" + of +
           "given: at least 2 (the first index and the end)";
  if (b.front() != r.lo)
    return "boundary 0" + of + "is " + std::to_string(b.front()) +
           ": the first boundary is the domain's first index, " + std::to_string(r.lo);
  if (b.back() != r.hi)
    return "boundary " + std::to_string(b.size() - 1) + of + "is " + std::to_string(b.back()) +
           ": the last boundary is the domain's end, " + std::to_string(r.hi);
  for (std::size_t q = 1; q < b.size(); ++q)
    if (b[q] <= b[q - 1])
      return "boundary " + std::to_string(q) + of + "is " + std::to_string(b[q]) +
             ", not above boundary " + std::to_string(q - 1) + " (" + std::to_string(b[q - 1]) +
             "): boundaries rise, every part holds at least one cell";
  return "";
}

}  // namespace

std::string partition_problem(const Partition3& p, const Range3& domain, int processes,
                              const std::array<int, 3>& asked) {
  for (int d = 0; d < 3; ++d)
    if (std::string problem = dimension_problem(p, d, domain.dim(d)); !problem.empty())
      return "partition " + partition_text(p) + ": " + problem;
  const std::array<int, 3> g = p.grid();
  for (int d = 0; d < 3; ++d)
    if (asked[d] != 0 && asked[d] != g[d])
      return "partition " + partition_text(p) + " cuts the " + kDimName[d] + " in " +
             std::to_string(g[d]) + " parts, the grid asks " + std::to_string(asked[d]) +
             ": a side of DistOptions3::grid is 0 or the partition's";
  const long parts = static_cast<long>(g[0]) * g[1] * g[2];
  if (parts != processes)
    return "partition " + partition_text(p) + " makes " + std::to_string(g[0]) + " x " +
           std::to_string(g[1]) + " x " + std::to_string(g[2]) + " = " + std::to_string(parts) +
           " parts for " + std::to_string(processes) + " processes: one part per process";
  return "";
}

index smallest_part(const Partition3& p, int d) {
  const std::vector<index>& b = p.splits[d];
  index m = b.back() - b.front();
  for (std::size_t q = 1; q < b.size(); ++q) m = std::min(m, b[q] - b[q - 1]);
  return m;
}

index largest_part(const Partition3& p, int d) {
  const std::vector<index>& b = p.splits[d];
  index m = 0;
  for (std::size_t q = 1; q < b.size(); ++q) m = std::max(m, b[q] - b[q - 1]);
  return m;
}

}  // namespace compas::detail

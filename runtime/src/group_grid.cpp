// compas::grid_rows and grid_cols (group.hpp): a row or a column of a row-major process grid.
#include <string>
#include <vector>

#include "compas/runtime/collectives.hpp"
#include "compas/runtime/group.hpp"
#include "group_impl.hpp"

namespace compas {

namespace {

// `asked` with its sides of 0 chosen as DistOptions::grid's are; CollectiveError (the same on
// every process) when they cannot make P.
ProcessGrid sides_of(const Runtime& rt, ProcessGrid asked, const char* call) {
  const int p = rt.processes();
  if (asked.rows == 0 && asked.cols == 0) {
    const Runtime::Grid g = rt.process_grid();
    return {g.rows, g.cols};
  }
  const std::string what = std::string(call) + ": process grid " + std::to_string(asked.rows) +
                           " x " + std::to_string(asked.cols) + " for " + std::to_string(p) +
                           " processes";
  if (asked.rows < 0 || asked.cols < 0)
    throw CollectiveError(what + ": sides are 0 (compas chooses) or more");
  ProcessGrid g = asked;
  if (g.rows == 0) g.rows = p % g.cols == 0 ? p / g.cols : 0;
  if (g.cols == 0) g.cols = p % g.rows == 0 ? p / g.rows : 0;
  if (g.rows == 0 || g.cols == 0 || static_cast<long>(g.rows) * g.cols != p)
    throw CollectiveError(what + ": the sides must multiply to the " + std::to_string(p) +
                          " processes");
  return g;
}

// This process's row (`row`) or column of the grid.
Group line_of(Runtime& rt, ProcessGrid grid, bool row, const char* call) {
  rt.check_funneled(call, detail::kFunneled);
  const ProcessGrid g = sides_of(rt, grid, call);
  const int r = rt.process() / g.cols, c = rt.process() % g.cols;
  std::vector<int> members;
  for (int k = 0; k < (row ? g.cols : g.rows); ++k)
    members.push_back(row ? r * g.cols + k : k * g.cols + c);
  return detail::make_group(rt, std::move(members), call);
}

}  // namespace

Group grid_rows(Processes ps, ProcessGrid grid) {
  detail::require_whole_job(ps, "compas::grid_rows", detail::kJobWideGroup);
  return line_of(ps.runtime(), grid, true, "compas::grid_rows");
}

Group grid_cols(Processes ps, ProcessGrid grid) {
  detail::require_whole_job(ps, "compas::grid_cols", detail::kJobWideGroup);
  return line_of(ps.runtime(), grid, false, "compas::grid_cols");
}

}  // namespace compas

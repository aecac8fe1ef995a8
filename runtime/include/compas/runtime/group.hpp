// Process groups: subsets of the job's processes that run the collectives of collectives.hpp among
// themselves, what a port makes of MPI_Comm_split and MPI_Cart_sub (SUMMA's broadcasts along the
// rows and columns of a process grid).
//
//   #include "compas/runtime/group.hpp"
//   compas::Group half = compas::split(rt, rt.process() % 2, rt.process());  // MPI_Comm_split
//   compas::Group row = compas::grid_rows(rt, {2, 2});  // this process's row of a 2 x 2 grid
//   compas::broadcast(row, std::span<double>(panel), 0);  // from group rank 0 of the row
//   double s = compas::allreduce(row, x, compas::op::sum{});
//
// A Group numbers its members 0..processes()-1 (group ranks); every collective of collectives.hpp
// takes a Group where it takes the Runtime, with roots and counts in group ranks and the same
// checks (a CollectiveError names group ranks and their job ranks). Groups of one process are
// allowed; a process in no group (split with a colour < 0) gets an empty Group: processes() 0,
// process() -1, and its collectives throw std::logic_error (MPI_COMM_NULL's part).
//
// Making and destroying a Group is collective over the whole job (each process makes its own
// group's scratch window, which is a job-wide allocation): every process makes the same calls in
// the same order, funneled (the thread that made the Runtime, outside run(); std::logic_error
// otherwise, before anything collective). Groups may then be used in any order and at any time:
// different groups run different collectives at once, and one process may alternate between its
// row and its column group.
#pragma once

#include <memory>
#include <span>
#include <type_traits>
#include <vector>

#include "compas/runtime/collectives.hpp"
#include "compas/runtime/runtime.hpp"

namespace compas {

namespace detail {
struct GroupInternals;  // runtime/src/group_impl.hpp: how the runtime's sources make a Group
}  // namespace detail

// A process grid (a 2-D array over Decomposition::grid, grid_rows/grid_cols): `rows` x `cols`
// processes, row-major by rank. 0 lets compas choose that side: {0, 0} is Runtime::process_grid()
// (near-square, rows <= cols: with P = 2 the columns are cut); {P, 0} or {P, 1} cuts the rows only
// (halos are whole contiguous rows), {1, P} the columns only. Sides that do not multiply to P are
// refused.
struct ProcessGrid {
  int rows = 0, cols = 0;
};

// The colour of a process in no group (any colour < 0 means the same).
inline constexpr int undefined = -1;

class Group {
 public:
  ~Group();  // collective, as making it
  Group(Group&&) noexcept;
  Group& operator=(Group&&) noexcept;  // collective: destroys the group it held

  int process() const;    // this process's group rank; -1 when in no group
  int processes() const;  // its members; 0 when in no group
  bool empty() const { return processes() == 0; }
  // The job rank of member i (std::out_of_range outside 0..processes()-1).
  int job_rank(int i) const;
  const std::vector<int>& members() const;  // job ranks in group order
  Runtime& runtime() const;
  comm::ProcessCollectives& collectives();  // its process collectives (std::logic_error if empty)

  // Deprecated (one release): process() and processes(), the words of Runtime and ThreadCtx.
  [[deprecated("use process()")]] int rank() const { return process(); }
  [[deprecated("use processes()")]] int size() const { return processes(); }
  // Deprecated (one release): the collectives are free functions over Processes, a Group
  // included (collectives.hpp): compas::barrier(g), compas::allreduce(g, value, op).
  [[deprecated("use compas::barrier(group) (collectives.hpp)")]] void barrier() {
    compas::barrier(*this);
  }
  template <class T, class Op>
  [[deprecated("use compas::allreduce(group, value, op) (collectives.hpp)")]] T allreduce(
      const T& value, Op op) {
    return compas::allreduce(*this, value, op);
  }
  template <class T, class Op>
  [[deprecated("use compas::allreduce(group, in, out, op) (collectives.hpp)")]] void allreduce(
      std::span<const std::type_identity_t<T>> in, std::span<T> out, Op op) {
    compas::allreduce<T>(*this, in, out, op);
  }

 private:
  friend struct detail::GroupInternals;
  struct Impl;  // runtime/src/group_impl.hpp
  explicit Group(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Making a Group takes Processes, the form of every call over processes, but only the whole job
// (the Runtime) is accepted: each group's scratch window is a job-wide allocation, so every
// process of the job takes part in making any group. On a Group, split, group_of, grid_rows and
// grid_cols throw std::logic_error naming the group and why, before anything collective (a
// subgroup is made from the Runtime with the members' job ranks: group_of(rt, ...), or split(rt,
// ...) with a colour per subgroup).

// MPI_Comm_split: the processes passing one colour form a group, ordered by key, then by job rank.
// A colour < 0 (compas::undefined) puts this process in no group (an empty Group). Collective
// over the job: one allgather of two ints per process, then the group's making.
Group split(Processes ps, int colour, int key = 0);

// The group whose members are `members` (job ranks, in group order, this process among them); an
// empty list: in no group. Every process passes its own group's list, and members of one group
// pass the same: otherwise every process throws the same CollectiveError naming two processes
// and their lists. Collective.
Group group_of(Processes ps, std::vector<int> members);

// This process's row (columns 0..cols-1 of its row, in order) or column (rows 0..rows-1) of the
// process grid `grid`, row-major by job rank. Sides of 0 are chosen as DistOptions::grid's are
// ({0, 0}: Runtime::process_grid()), so a DistArray on Decomposition::grid with the same grid
// and these groups agree on who is where. Sides that do not multiply to P throw CollectiveError
// naming them. Collective.
Group grid_rows(Processes ps, ProcessGrid grid = {});
Group grid_cols(Processes ps, ProcessGrid grid = {});

}  // namespace compas

// compas::Partition: how a 1-D global index range is cut into P contiguous parts, part r held by
// process r (rank order). What a DistArray<T, 1>, a GhostPlan and a GhostedVector are made on.
//
//   auto d = compas::Partition::block(rt, {0, n});         // the default split (below)
//   auto d = compas::Partition::from_local(rt, n_local);   // each process says how many it holds
//   auto d = compas::Partition::from_splits(rt, starts);   // the P + 1 split points themselves
//   compas::DistArray<double> u(rt, d);                    // owned ranges as d says
//
// The block split (Partition::block, and every DistArray made from a Range): n = hi - lo indices
// over P processes, base = n / P, extra = n % P; process r holds base + 1 indices when r < extra,
// else base, starting at lo + r * base + min(r, extra) (compas::split). Process 0 gets the first
// indices, the first n % P processes one more each.
//
// from_local(rt, n_local[, domain]) (PETSc's VecCreateMPI with its local n): collective, one
// allgather of a word per process; process r's part starts at lo plus the counts of processes
// 0..r-1. from_splits(rt, starts): P + 1 split points, lo = starts[0] < starts[1] < ... <
// starts[P] = hi, part r = [starts[r], starts[r + 1]); collective, every process must pass the
// same list: one allreduce of a 64-bit hash of it (O(log P)), the lists themselves only when the
// hashes differ (to name the first process whose list is not process 0's). Every part holds at
// least one index: a count of 0 (or less), points out of order, a list of another length, counts
// that do not add up to the given domain's size, or lists that differ between processes throw the
// same std::invalid_argument on every process, naming the process and the value and what is
// allowed.
//
// Owner lookup: owner(i) is O(1) for the block split (part_holding), O(log P) otherwise (a
// binary search of the split points); no communication. A Partition is a small handle (its split
// points shared, never copied): copy it freely. Two partitions are equal when their split points
// are.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "compas/runtime/range.hpp"
#include "compas/runtime/runtime.hpp"

namespace compas {

class Partition {
 public:
  // The block split of `domain` over rt's processes (above). No communication. Parts may be
  // empty when domain has fewer indices than there are processes; a DistArray refuses them.
  static Partition block(Runtime& rt, Range domain);
  // Collective: this process holds n_local indices, after those of the lower ranks, from lo.
  static Partition from_local(Runtime& rt, index n_local, index lo = 0);
  // Collective: as above, and the counts must add up to domain's size (from domain.lo).
  static Partition from_local(Runtime& rt, index n_local, Range domain);
  // Collective: P + 1 split points, the same on every process.
  static Partition from_splits(Runtime& rt, std::span<const index> starts);

  Range domain() const { return {s_->front(), s_->back()}; }
  index size() const { return domain().size(); }
  int parts() const { return static_cast<int>(s_->size()) - 1; }
  Range part(int r) const {
    return {(*s_)[static_cast<std::size_t>(r)], (*s_)[static_cast<std::size_t>(r) + 1]};
  }
  Range owned() const { return part(me_); }  // this process's part
  int process() const { return me_; }
  // The process whose part holds global index i (inside domain()).
  int owner(index i) const;
  bool is_block() const { return block_; }
  // The P + 1 split points: part r is [starts()[r], starts()[r + 1]).
  std::span<const index> starts() const { return *s_; }
  Runtime& runtime() const { return *rt_; }
  // The largest part's size (windows are sized by it).
  index largest() const;
  // A 64-bit digest of the split points (the same on every process for the same partition).
  std::uint64_t digest() const;
  friend bool operator==(const Partition& a, const Partition& b) {
    return a.s_ == b.s_ || *a.s_ == *b.s_;
  }

 private:
  Partition(Runtime& rt, std::vector<index> starts, bool block);
  Runtime* rt_;
  std::shared_ptr<const std::vector<index>> s_;
  int me_ = 0;
  bool block_ = false;
};

}  // namespace compas

// ProcessCollectives::reduce across real processes: every rank of a compas-run job (P = 1..4, and
// over UCX instead of direct load/store, and over tcp) runs this. Every rank computes every
// other's contribution from a formula, so the root's result is checked against a serial
// reference computed locally, and the other ranks' out is checked untouched.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "collectives_job.hpp"
#include "compas/comm/comm.hpp"

namespace {

using namespace collectives_job;

// Every rank's contribution reduced into `out` of `root`; the others' `out` untouched. In place
// (out == in) when `in_place`.
template <class T>
void check_reduce(ProcessCollectives& nc, Op op, std::size_t n, int root, bool in_place) {
  std::vector<T> in(n), out(n, T{5});
  for (std::size_t i = 0; i < n; ++i) in[i] = contribution<T>(op, rank(), i, root);
  const std::vector<T> mine = in;
  std::span<T> dst = in_place ? std::span<T>(in) : std::span<T>(out);
  nc.reduce(std::span<const T>(in), dst, op, root);
  const std::vector<T> want =
      rank() == root ? reference<T>(op, n, root) : (in_place ? mine : std::vector<T>(n, T{5}));
  const std::vector<T>& got = in_place ? in : out;
  for (std::size_t i = 0; i < n; ++i)
    ASSERT_EQ(got[i], want[i]) << "element " << i << " of " << n << ", op " << to_string(op)
                               << ", root " << root << (in_place ? ", in place" : "");
}

TEST(Reduce, EveryOpEverySizeEveryRoot) {
  for (int root = 0; root < nranks(); ++root)
    for (Op op : {Op::sum, Op::min, Op::max, Op::prod})
      for (std::size_t n : kSizes) {
        check_reduce<double>(coll(), op, n, root, false);
        check_reduce<std::int32_t>(coll(), op, n, root, root % 2 == 0);
      }
}

TEST(Reduce, EveryElementTypeInPlace) {
  const int root = nranks() - 1;
  for (std::size_t n : {3ul, 20000ul}) {
    check_reduce<std::int64_t>(coll(), Op::sum, n, root, true);
    check_reduce<std::uint32_t>(coll(), Op::prod, n, root, true);
    check_reduce<std::uint64_t>(coll(), Op::max, n, root, false);
    check_reduce<float>(coll(), Op::min, n, root, false);
  }
}

// Tiny slots: every message many chunks, interior ranks of the tree forwarding chunk by chunk.
TEST(Reduce, TinySlotsManyChunks) {
  CollectivesOptions o;
  o.slot_bytes = 128;
  ProcessCollectives nc(comm(), o);
  for (int root = 0; root < nranks(); ++root)
    for (std::size_t n : {0ul, 9ul, 3001ul}) check_reduce<double>(nc, Op::sum, n, root, false);
  check_allreduce<std::int32_t>(nc, Op::sum, 5, 9);  // still in step
}

TEST(Reduce, BadRootOperatorAndSizeAreInvalidArguments) {
  std::vector<double> d(4), out(4);
  EXPECT_THROW(coll().reduce(std::span<const double>(d), std::span<double>(out), Op::sum, nranks()),
               std::invalid_argument);
  EXPECT_THROW(coll().reduce(std::span<const double>(d), std::span<double>(out), Op::sum, -1),
               std::invalid_argument);
  EXPECT_THROW(
      coll().reduce(std::span<const double>(d), std::span<double>(out), static_cast<Op>(7), 0),
      std::invalid_argument);
  try {
    coll().reduce(std::span<const double>(d), std::span<double>(out), Op::sum, nranks());
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), "reduce: root " + std::to_string(nranks()) +
                                         " is outside the group: ranks are 0.." +
                                         std::to_string(nranks() - 1));
  }
  if (nranks() == 1) {  // a root's own out of the wrong size is checked where it is passed
    std::vector<double> small(3);
    EXPECT_THROW(coll().reduce(std::span<const double>(d), std::span<double>(small), Op::sum, 0),
                 std::invalid_argument);
  }
  check_allreduce<std::int32_t>(coll(), Op::sum, 5, 9);  // nothing moved: still in step
}

}  // namespace

int main(int argc, char** argv) {
  return collectives_job::run(argc, argv, "test_collectives_reduce");
}

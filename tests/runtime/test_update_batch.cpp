// compas::UpdateBatch (update_batch.hpp): every rank of a compas-run job (P = 1..3, T = 1..2)
// runs this. Each rank's updates come from a seed of its rank, so every rank can rebuild every
// other's and apply them serially; the table after flush() must equal that reference. Bad input:
// an index outside the table (named with the range), an operator a type does not allow, and
// flushes that do not match across ranks (one rank making another collective, different element
// types, operators or tables): the same CollectiveError on every rank, naming both.
#include <gtest/gtest.h>
#include <omp.h>

#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "../common/job_main.hpp"
#include "compas/compas.hpp"

namespace {

using compas::index;
using compas::comm::AtomicOp;

compas::Runtime& rt() {
  return *g_rt;
}
int me() {
  return rt().process();
}
int P() {
  return rt().processes();
}

constexpr index kN = 37;  // uneven over 2 and 3 processes

struct Update {
  index at;
  std::uint64_t value;
};
// Rank r's updates of round `round`: none on rank 1 in round 0, duplicates and every owner
// otherwise.
std::vector<Update> updates_of(int rank, int round, index n = kN) {
  if (rank == 1 && round == 0) return {};
  std::mt19937_64 gen(99 + 17 * static_cast<std::uint64_t>(rank) +
                      static_cast<std::uint64_t>(round));
  std::uniform_int_distribution<index> pick(0, n - 1);
  std::vector<Update> u(static_cast<std::size_t>(40 + 11 * rank));
  for (auto& x : u) x = {pick(gen), gen() % 1000};
  u.push_back(u.front());  // a duplicate for sure
  return u;
}
std::uint64_t initial(index i) {
  return static_cast<std::uint64_t>(5 * i + 1);
}

template <class T>
void fill(compas::DistArray<T>& u) {
  for (index i = u.lo(); i < u.hi(); ++i) u[i] = static_cast<T>(initial(i));
}
// The table after every rank's updates of rounds 0..rounds-1, applied serially.
template <class T>
std::vector<T> reference(int rounds, AtomicOp op, index n = kN) {
  std::vector<T> t(static_cast<std::size_t>(n));
  for (index i = 0; i < n; ++i) t[static_cast<std::size_t>(i)] = static_cast<T>(initial(i));
  for (int round = 0; round < rounds; ++round)
    for (int r = 0; r < P(); ++r)
      for (const Update& u : updates_of(r, round, n)) {
        T& x = t[static_cast<std::size_t>(u.at)];
        const auto v = static_cast<T>(u.value);
        if (op == AtomicOp::add) x = static_cast<T>(x + v);
        if constexpr (std::is_integral_v<T>) {
          if (op == AtomicOp::bit_xor) x ^= v;
          if (op == AtomicOp::bit_or) x |= v;
          if (op == AtomicOp::bit_and) x &= v;
        }
      }
  return t;
}
template <class T>
void expect_table(const compas::DistArray<T>& u, const std::vector<T>& want) {
  for (index i = u.lo(); i < u.hi(); ++i)
    EXPECT_EQ(u[i], want[static_cast<std::size_t>(i)]) << "index " << i;
}

template <class F>
std::string error_of(F&& call) {
  try {
    call();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

// What pending() says after `added` updates: all of them wait for the flush, except in a job of
// one process, which applies each at add().
std::size_t held(std::size_t added) {
  return rt().processes() == 1 ? 0 : added;
}

template <class T>
void check_op(AtomicOp op) {
  SCOPED_TRACE(testing::Message() << typeid(T).name() << ", op " << static_cast<int>(op));
  compas::DistArray<T> u(rt(), kN);
  fill(u);
  compas::UpdateBatch<T> batch(u, op);
  for (int round = 0; round < 2; ++round) {
    for (const Update& x : updates_of(me(), round)) batch.add(x.at, static_cast<T>(x.value));
    EXPECT_EQ(batch.pending(), held(updates_of(me(), round).size()));
    batch.flush();
    EXPECT_EQ(batch.pending(), 0u);
    expect_table(u, reference<T>(round + 1, op));
  }
}

TEST(UpdateBatch, XorAndAddEqualTheSerialReference) {
  check_op<std::uint64_t>(AtomicOp::bit_xor);
  check_op<std::uint64_t>(AtomicOp::add);
  check_op<std::int32_t>(AtomicOp::bit_xor);
  check_op<std::int32_t>(AtomicOp::bit_or);
  check_op<std::uint32_t>(AtomicOp::bit_and);
  check_op<double>(AtomicOp::add);
}

TEST(UpdateBatch, AnEmptyFlushOnEveryRankChangesNothing) {
  compas::DistArray<std::uint64_t> u(rt(), kN);
  fill(u);
  compas::UpdateBatch<std::uint64_t> batch(u);
  batch.flush();
  expect_table(u, reference<std::uint64_t>(0, AtomicOp::bit_xor));
}

TEST(UpdateBatch, ADomainNotFromZeroAndALargerTable) {
  // [10, 10 + 4096): blocks of a power of two on 1 and 2 processes, uneven on 3.
  const index n = 4096;
  compas::DistArray<std::uint64_t> u(rt(), compas::Range{10, 10 + n});
  for (index i = u.lo(); i < u.hi(); ++i) u[i] = initial(i - 10);
  compas::UpdateBatch<std::uint64_t> batch(u);
  for (const Update& x : updates_of(me(), 0, n)) batch.add(x.at + 10, x.value);
  batch.flush();
  const auto want = reference<std::uint64_t>(1, AtomicOp::bit_xor, n);
  for (index i = u.lo(); i < u.hi(); ++i)
    EXPECT_EQ(u[i], want[static_cast<std::size_t>(i - 10)]) << "index " << i;
}

TEST(UpdateBatch, TheThreadsOfATeamAddAtOnce) {
  compas::DistArray<std::uint64_t> u(rt(), kN);
  fill(u);
  compas::UpdateBatch<std::uint64_t> batch(u, AtomicOp::add);
  const auto mine = updates_of(me(), 0);
#pragma omp parallel for
  for (std::size_t k = 0; k < mine.size(); ++k) batch.add(mine[k].at, mine[k].value);
  EXPECT_EQ(batch.pending(), held(mine.size()));
  batch.flush();
  expect_table(u, reference<std::uint64_t>(1, AtomicOp::add));
}

// Every thread of the team adds through its own handle (batch.adder()), made inside the parallel
// region, with each operator the handles apply themselves (atomically in a job of one process).
template <class T>
void check_adders(AtomicOp op) {
  SCOPED_TRACE(testing::Message() << typeid(T).name() << ", op " << static_cast<int>(op));
  compas::DistArray<T> u(rt(), kN);
  fill(u);
  compas::UpdateBatch<T> batch(u, op);
  for (int round = 0; round < 2; ++round) {
    const auto mine = updates_of(me(), round);
#pragma omp parallel
    {
      const auto add = batch.adder();
#pragma omp for
      for (std::size_t k = 0; k < mine.size(); ++k) add(mine[k].at, static_cast<T>(mine[k].value));
    }
    EXPECT_EQ(batch.pending(), held(mine.size()));
    batch.flush();
    expect_table(u, reference<T>(round + 1, op));
  }
}

TEST(UpdateBatch, EveryThreadsHandleAddsAsAddDoes) {
  check_adders<std::uint64_t>(AtomicOp::bit_xor);
  check_adders<std::uint64_t>(AtomicOp::add);
  check_adders<std::int32_t>(AtomicOp::bit_or);
  check_adders<std::uint32_t>(AtomicOp::bit_and);
  check_adders<double>(AtomicOp::add);
}

TEST(UpdateBatchBadInput, AHandleNamesAnIndexOutsideTheTableAsAddDoes) {
  compas::DistArray<std::uint64_t> u(rt(), kN);
  compas::UpdateBatch<std::uint64_t> batch(u);
  const auto add = batch.adder();
  EXPECT_EQ(error_of([&] { add(kN, 1); }),
            "UpdateBatch::add: index 37 is outside the array's domain [0, 37)");
  EXPECT_EQ(batch.pending(), 0u);
  batch.flush();  // still usable
}

TEST(UpdateBatchBadInput, AnIndexOutsideTheTableIsNamedWithTheRange) {
  compas::DistArray<std::uint64_t> u(rt(), kN);
  compas::UpdateBatch<std::uint64_t> batch(u);
  EXPECT_THROW(batch.add(kN, 1), std::out_of_range);
  const std::string err = error_of([&] { batch.add(-1, 1); });
  EXPECT_EQ(err, "UpdateBatch::add: index -1 is outside the array's domain [0, 37)");
  EXPECT_EQ(batch.pending(), 0u);
  batch.flush();  // still usable
}

TEST(UpdateBatchBadInput, BitOperatorsOnAFloatingPointTypeAreRefused) {
  compas::DistArray<double> u(rt(), kN);
  const std::string err = error_of([&] { compas::UpdateBatch<double> b(u, AtomicOp::bit_xor); });
  EXPECT_EQ(err,
            "compas::UpdateBatch: operator bit_xor on elements of type double: only add is "
            "allowed on a floating-point type");
}

TEST(UpdateBatchBadInput, AFlushOnSomeRanksOnlyIsNamedEverywhere) {
  if (P() < 2) GTEST_SKIP() << "needs two processes";
  compas::DistArray<std::uint64_t> u(rt(), kN);
  compas::UpdateBatch<std::uint64_t> batch(u);
  const std::string err = error_of([&] {
    if (me() == 1)
      (void)compas::allgather(rt(), 1);
    else
      batch.flush();
  });
  EXPECT_EQ(err,
            "compas::UpdateBatch::flush: process 0 calls UpdateBatch::flush, process 1 calls "
            "allgather: every process makes the same calls in the same order");
  batch.flush();  // every rank again: works
}

TEST(UpdateBatchBadInput, DifferentElementTypesAreNamedEverywhere) {
  if (P() < 2) GTEST_SKIP() << "needs two processes";
  const int odd = P() - 1;
  compas::DistArray<std::int64_t> a(rt(), kN);
  compas::DistArray<double> b(rt(), kN);
  compas::DistArray<std::int32_t> c(rt(), kN);
  compas::UpdateBatch<std::int64_t> ints(a, AtomicOp::add);
  compas::UpdateBatch<double> doubles(b, AtomicOp::add);
  compas::UpdateBatch<std::int32_t> narrow(c, AtomicOp::add);
  // The same size, another type.
  std::string err = error_of([&] { me() == odd ? doubles.flush() : ints.flush(); });
  EXPECT_EQ(err.rfind("compas::UpdateBatch::flush: process 0 and process " + std::to_string(odd) +
                          " flush batches of different element types",
                      0),
            0u)
      << err;
  // Another size.
  err = error_of([&] { me() == odd ? narrow.flush() : ints.flush(); });
  EXPECT_EQ(err, "compas::UpdateBatch::flush: process 0 passes elements of 8 bytes, process " +
                     std::to_string(odd) + " of 4 bytes");
}

TEST(UpdateBatchBadInput, DifferentOperatorsAndTablesAreNamedEverywhere) {
  if (P() < 2) GTEST_SKIP() << "needs two processes";
  const int odd = P() - 1;
  compas::DistArray<std::uint64_t> u(rt(), kN), w(rt(), 2 * kN);
  compas::UpdateBatch<std::uint64_t> x(u, AtomicOp::bit_xor), s(u, AtomicOp::add), big(w);
  std::string err = error_of([&] { me() == odd ? s.flush() : x.flush(); });
  EXPECT_EQ(err, "compas::UpdateBatch::flush: process 0 applies bit_xor, process " +
                     std::to_string(odd) + " add: every process's batch has the same operator");
  err = error_of([&] { me() == odd ? big.flush() : x.flush(); });
  EXPECT_EQ(err, "compas::UpdateBatch::flush: process 0 passes 37 elements, process " +
                     std::to_string(odd) + " passes 74: every process passes the same length");
}

}  // namespace

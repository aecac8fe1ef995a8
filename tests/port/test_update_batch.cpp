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
#include <regex>
#include <stdexcept>
#include <string>
#include <vector>

#include "../common/job_main.hpp"
#include "alike_errors.hpp"
#include "compas/compas.hpp"

namespace {

using compas::index;
using compas::comm::AtomicOp;

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

// What pending() says after `added` updates (fewer than a bucket holds per owner): all of them
// wait for the flush, except in a job of one process whose batch was made for one thread, which
// applies each at add().
std::size_t held(std::size_t added) {
  return rt().processes() == 1 && omp_get_max_threads() == 1 ? 0 : added;
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
  EXPECT_EQ(err, "compas::UpdateBatch::flush: process 0 calls UpdateBatch::flush on UpdateBatch #" +
                     std::to_string(batch.number()) +
                     ", process 1 calls allgather: every process makes the same calls in the same "
                     "order");
  alike::expect_everywhere(err);
  batch.flush();  // every rank again: works
}

// Making a batch is collective: batches made on different tables (of other element types, or
// sizes), or with different operators, are refused at construction, the same error everywhere
// naming both; the next batch made alike works.
TEST(UpdateBatchBadInput, BatchesMadeDifferentlyAreNamedEverywhere) {
  if (P() < 2) GTEST_SKIP() << "needs two processes";
  const int odd = P() - 1;
  compas::DistArray<std::int64_t> a(rt(), kN);
  compas::DistArray<double> b(rt(), kN);
  compas::DistArray<std::int32_t> c(rt(), 2 * kN);
  const auto on = [&](const auto& table) {
    return " on DistArray #" + std::to_string(table.number());
  };
  const std::string tables =
      " (numbered in the order the processes made them): every process makes the same calls on "
      "the same objects in the same order";
  std::string err = error_of([&] {
    if (me() == odd) return (void)compas::UpdateBatch<double>(b, AtomicOp::add);
    compas::UpdateBatch<std::int64_t> x(a, AtomicOp::add);
  });
  EXPECT_EQ(err, "compas::UpdateBatch::UpdateBatch: process 0 calls UpdateBatch::UpdateBatch" +
                     on(a) + ", process " + std::to_string(odd) +
                     " calls UpdateBatch::UpdateBatch" + on(b) + tables);
  alike::expect_everywhere(err);
  err = error_of([&] {
    if (me() == odd) return (void)compas::UpdateBatch<std::int32_t>(c, AtomicOp::add);
    compas::UpdateBatch<std::int64_t> x(a, AtomicOp::add);
  });
  EXPECT_EQ(err, "compas::UpdateBatch::UpdateBatch: process 0 calls UpdateBatch::UpdateBatch" +
                     on(a) + ", process " + std::to_string(odd) +
                     " calls UpdateBatch::UpdateBatch" + on(c) + tables);
  err = error_of([&] {
    compas::UpdateBatch<std::int64_t> x(a, me() == odd ? AtomicOp::add : AtomicOp::bit_xor);
  });
  EXPECT_EQ(err, "compas::UpdateBatch::UpdateBatch: process 0 applies bit_xor, process " +
                     std::to_string(odd) + " add: every process's batch has the same operator");
  alike::expect_everywhere(err);
  compas::UpdateBatch<std::int64_t> ok(a, AtomicOp::add);
  ok.add(0, 1);
  ok.flush();
  if (a.owned().contains(0)) {
    EXPECT_EQ(a[0], P());
  }
}

// Two batches of one shape (element type, operator, table size) flushed in a different order on
// one process: the first flush is refused on every process with the same error, naming both
// batches, and moves nothing; flushed in the same order after, each table gets its own updates
// (the crossed flush used to return normally and give each table the other's updates).
TEST(UpdateBatchBadInput, BatchesFlushedInADifferentOrderAreNamedEverywhere) {
  if (P() < 2) GTEST_SKIP() << "needs two processes";
  const int odd = P() - 1;
  compas::DistArray<std::int64_t> a(rt(), kN), b(rt(), kN);
  compas::UpdateBatch<std::int64_t> to_a(a, AtomicOp::add), to_b(b, AtomicOp::add);
  for (index i = 0; i < kN; ++i) {
    to_a.add(i, 1);
    to_b.add(i, 100);
  }
  const std::string err = alike::error_of([&] { me() == odd ? to_b.flush() : to_a.flush(); });
  std::smatch m;
  ASSERT_TRUE(std::regex_match(
      err, m,
      std::regex("compas::UpdateBatch::flush: process 0 calls UpdateBatch::flush on UpdateBatch "
                 "#([0-9]+), process " +
                 std::to_string(odd) +
                 " calls UpdateBatch::flush on UpdateBatch #([0-9]+) \\(numbered in the order "
                 "the processes made them\\): every process makes the same calls on the same "
                 "objects in the same order")))
      << err;
  EXPECT_EQ(std::stoul(m[2]), std::stoul(m[1]) + 1) << err;  // made one after the other
  alike::expect_everywhere(err);
  to_a.flush();
  to_b.flush();
  for (index i = a.lo(); i < a.hi(); ++i) {
    EXPECT_EQ(a[i], P()) << "index " << i;
    EXPECT_EQ(b[i], 100 * P()) << "index " << i;
  }
}

}  // namespace

// The process-level collectives of collectives.hpp (compas::broadcast, allgather, allgatherv,
// alltoall, alltoallv, gather, reduce, barrier): every rank of a compas-run job runs this with
// test_runtime (P = 1..5). Every value received is checked against what its sender contributed
// (rank-dependent values, lengths that differ by rank, 0 included, roots other than 0), and bad
// input on one rank only ends the call with the same CollectiveError on every rank, naming both.
#include <gtest/gtest.h>

#include <array>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "../common/job_main.hpp"
#include "compas/compas.hpp"

namespace {

std::size_t Pz() {
  return static_cast<std::size_t>(P());
}

// What rank `from` sends to rank `to` as its i-th element.
std::int64_t code(int from, int to, std::size_t i) {
  return 1000000 * from + 1000 * to + static_cast<std::int64_t>(i) + 7;
}
// A rank's own length in the variable-length calls: 0 on ranks 0, 3, ...
std::size_t length_of(int rank) {
  return static_cast<std::size_t>(rank % 3) * 2;
}
std::vector<std::int64_t> mine_of(int rank) {
  std::vector<std::int64_t> v(length_of(rank));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = code(rank, -1, i);
  return v;
}

// The message of the CollectiveError `call` throws, "" when it returns.
template <class F>
std::string error_of(F&& call) {
  try {
    call();
  } catch (const compas::CollectiveError& e) {
    return e.what();
  }
  return "";
}

// The calls still work after an error (the exchange before the data completed everywhere).
void still_works() {
  const auto all = compas::allgather(rt(), me() * 3);
  for (int r = 0; r < P(); ++r) EXPECT_EQ(all[static_cast<std::size_t>(r)], r * 3);
}

TEST(Collectives, BroadcastFromEveryRoot) {
  for (int root = 0; root < P(); ++root) {
    const double got = compas::broadcast(rt(), 1.5 * me() + 0.25, root);
    EXPECT_EQ(got, 1.5 * root + 0.25) << "root " << root;
    std::vector<std::int64_t> data(5);
    for (std::size_t i = 0; i < data.size(); ++i) data[i] = code(me(), root, i);
    compas::broadcast(rt(), std::span<std::int64_t>(data), root);
    for (std::size_t i = 0; i < data.size(); ++i) EXPECT_EQ(data[i], code(root, root, i));
  }
}

TEST(Collectives, AllgatherOfValuesAndOfEqualSpans) {
  const auto values = compas::allgather(rt(), code(me(), -1, 0));
  ASSERT_EQ(values.size(), Pz());
  for (int r = 0; r < P(); ++r) EXPECT_EQ(values[static_cast<std::size_t>(r)], code(r, -1, 0));
  const std::vector<std::int64_t> mine = {code(me(), 0, 0), code(me(), 0, 1), code(me(), 0, 2)};
  std::vector<std::int64_t> all(3 * Pz());
  compas::allgather(rt(), std::span<const std::int64_t>(mine), std::span<std::int64_t>(all));
  for (int r = 0; r < P(); ++r)
    for (std::size_t i = 0; i < 3; ++i)
      EXPECT_EQ(all[static_cast<std::size_t>(r) * 3 + i], code(r, 0, i));
}

// Rank r has 3 r + 1 items (rank 2: none): its first number is the sum over the ranks before it.
TEST(Collectives, NumberingGivesEachProcessItsFirstNumberAndTheTotal) {
  const auto count = [](int r) { return r == 2 ? 0L : 3L * r + 1; };
  long before = 0, total = 0;
  for (int r = 0; r < P(); ++r) (r < me() ? before : total) += count(r);
  total += before;
  EXPECT_EQ(compas::numbering(rt(), count(me())), std::make_pair(before, total));
}

// op::sum adds arrays element by element: two sums in one reduction.
TEST(Collectives, SumOfArraysIsElementByElement) {
  const std::array<long, 2> got = rt().allreduce(std::array<long, 2>{1, me()}, compas::op::sum{});
  EXPECT_EQ(got, (std::array<long, 2>{P(), P() * (P() - 1) / 2}));
}

TEST(Collectives, AllgathervOfLengthsThatDifferByRank) {
  const auto mine = mine_of(me());
  const auto got = compas::allgatherv(rt(), std::span<const std::int64_t>(mine));
  ASSERT_EQ(got.counts.size(), Pz());
  std::size_t at = 0;
  for (int r = 0; r < P(); ++r) {
    const auto ru = static_cast<std::size_t>(r);
    EXPECT_EQ(got.counts[ru], length_of(r));
    EXPECT_EQ(got.offsets[ru], at);
    for (std::size_t i = 0; i < length_of(r); ++i) EXPECT_EQ(got.data[at + i], code(r, -1, i));
    at += length_of(r);
  }
  EXPECT_EQ(got.data.size(), at);
}

TEST(Collectives, AlltoallOfEqualBlocks) {
  const std::size_t b = 2;
  std::vector<std::int64_t> send(b * Pz()), recv(b * Pz(), -1);
  for (int to = 0; to < P(); ++to)
    for (std::size_t i = 0; i < b; ++i)
      send[static_cast<std::size_t>(to) * b + i] = code(me(), to, i);
  compas::alltoall(rt(), std::span<const std::int64_t>(send), std::span<std::int64_t>(recv));
  for (int from = 0; from < P(); ++from)
    for (std::size_t i = 0; i < b; ++i)
      EXPECT_EQ(recv[static_cast<std::size_t>(from) * b + i], code(from, me(), i));
}

TEST(Collectives, AlltoallvExchangesTheCounts) {
  auto count = [](int from, int to) { return static_cast<std::size_t>((from + 2 * to) % 3); };
  std::vector<std::size_t> send_counts;
  std::vector<std::int64_t> send;
  for (int to = 0; to < P(); ++to) {
    send_counts.push_back(count(me(), to));
    for (std::size_t i = 0; i < count(me(), to); ++i) send.push_back(code(me(), to, i));
  }
  const auto got = compas::alltoallv(rt(), std::span<const std::int64_t>(send), send_counts);
  ASSERT_EQ(got.counts.size(), Pz());
  std::size_t at = 0;
  for (int from = 0; from < P(); ++from) {
    const auto fu = static_cast<std::size_t>(from);
    EXPECT_EQ(got.counts[fu], count(from, me()));
    EXPECT_EQ(got.offsets[fu], at);
    for (std::size_t i = 0; i < count(from, me()); ++i)
      EXPECT_EQ(got.data[at + i], code(from, me(), i));
    at += count(from, me());
  }
  EXPECT_EQ(got.data.size(), at);
}

TEST(Collectives, GatherToTheLastRankAndToTheMiddle) {
  const int last = P() - 1;
  const auto values = compas::gather(rt(), code(me(), last, 0), last);
  if (me() == last) {
    ASSERT_EQ(values.size(), Pz());
    for (int r = 0; r < P(); ++r) EXPECT_EQ(values[static_cast<std::size_t>(r)], code(r, last, 0));
  } else {
    EXPECT_TRUE(values.empty());
  }
  const int root = P() / 2;
  const auto mine = mine_of(me());
  const auto got = compas::gather(rt(), std::span<const std::int64_t>(mine), root);
  ASSERT_EQ(got.counts.size(), Pz());
  std::size_t at = 0;
  for (int r = 0; r < P(); ++r) {
    EXPECT_EQ(got.counts[static_cast<std::size_t>(r)], length_of(r));
    EXPECT_EQ(got.offsets[static_cast<std::size_t>(r)], at);
    for (std::size_t i = 0; me() == root && i < length_of(r); ++i)
      EXPECT_EQ(got.data[at + i], code(r, -1, i));
    at += length_of(r);
  }
  EXPECT_EQ(got.data.size(), me() == root ? at : 0u);
}

TEST(Collectives, ReduceToARootOtherThanZero) {
  const int root = P() - 1;
  const std::int64_t sum = compas::reduce(rt(), code(me(), 0, 0), compas::op::sum{}, root);
  std::int64_t want = 0;
  for (int r = 0; r < P(); ++r) want += code(r, 0, 0);
  EXPECT_EQ(sum, me() == root ? want : code(me(), 0, 0));
  const double max = compas::reduce(rt(), 0.5 * me(), compas::comm::Op::max, root);
  EXPECT_EQ(max, me() == root ? 0.5 * (P() - 1) : 0.5 * me());
  // Element by element, with an associative operator that is not commutative (composing
  // x -> m x + c, earlier rank first): the rank order shows.
  struct Affine {
    std::int64_t m, c;
    bool operator==(const Affine&) const = default;
  };
  auto then = [](Affine f, Affine g) { return Affine{g.m * f.m, g.m * f.c + g.c}; };
  const std::vector<Affine> in = {{me() + 2, me() + 1}, {2, me()}};
  std::vector<Affine> out = {{-1, -1}, {-1, -1}};
  compas::reduce(rt(), std::span<const Affine>(in), std::span<Affine>(out), then, root);
  std::vector<Affine> folded = {{2, 1}, {2, 0}};
  for (int r = 1; r < P(); ++r) {
    folded[0] = then(folded[0], Affine{r + 2, r + 1});
    folded[1] = then(folded[1], Affine{2, r});
  }
  EXPECT_TRUE(out == (me() == root ? folded : std::vector<Affine>({{-1, -1}, {-1, -1}})));
}

TEST(Collectives, BarrierAfterWhichEveryRankHasArrived) {
  // Every rank counts the barriers it entered; after each, every rank has entered as many.
  for (int k = 1; k <= 3; ++k) {
    compas::barrier(rt());
    const auto counts = compas::allgather(rt(), k);
    for (int c : counts) EXPECT_EQ(c, k);
  }
}

// MPI_Exscan over the job: an operator that is associative and not commutative (appending
// decimal digits) shows the rank order; rank 0 gets the identity, which is never combined.
struct Appended {
  std::int64_t v, scale;
};
Appended append(const Appended& a, const Appended& b) {
  return {a.v * b.scale + b.v, a.scale * b.scale};
}

TEST(Collectives, ExclusiveScanCombinesTheRanksBeforeInOrder) {
  std::int64_t want = 0;
  for (int r = 0; r < me(); ++r) want = want * 10 + (r + 1);
  const Appended got =
      compas::exclusive_scan(rt(), Appended{me() + 1, 10}, Appended{-7, 1}, append);
  EXPECT_EQ(got.v, me() == 0 ? -7 : want);  // -7 is no identity: it must not be combined
  // Element by element, into another span and in place.
  std::vector<std::int64_t> in = {me() + 1, 100 * (me() + 1), 3}, out(3, -1);
  compas::exclusive_scan<std::int64_t>(rt(), in, out, 0, compas::op::sum{});
  const std::int64_t before = std::int64_t{me()} * (me() + 1) / 2;
  EXPECT_EQ(out, (std::vector<std::int64_t>{before, 100 * before, 3 * me()}));
  compas::exclusive_scan<std::int64_t>(rt(), in, in, 0, compas::op::sum{});
  EXPECT_EQ(in, out);
}

TEST(CollectivesBadInput, ExclusiveScanOfAnotherOperatorOnOneRankIsNamedEverywhere) {
  if (P() < 2) GTEST_SKIP() << "needs two processes";
  std::vector<int> in(2, 1), out(2, -5);
  const std::string err = error_of([&] {
    if (me() == 1)
      compas::exclusive_scan<int>(rt(), in, out, 0, compas::op::max{});
    else
      compas::exclusive_scan<int>(rt(), in, out, 0, compas::op::sum{});
  });
  EXPECT_NE(err.find("compas::exscan"), std::string::npos) << err;
  EXPECT_NE(err.find("the operator"), std::string::npos) << err;
  EXPECT_EQ(out, (std::vector<int>{-5, -5}));  // nothing written
  still_works();
}

TEST(CollectivesBadInput, LengthDifferingOnOneRankIsNamedWithRankZeroEverywhere) {
  if (P() < 2) GTEST_SKIP() << "needs two processes";
  const int odd = P() - 1;
  std::vector<int> data(me() == odd ? 5 : 4, 1);
  const std::string err = error_of([&] { compas::broadcast(rt(), std::span<int>(data), 0); });
  EXPECT_EQ(err, "compas::broadcast: process 0 passes 4 elements, process " + std::to_string(odd) +
                     " passes 5: every process passes the same length");
  still_works();
}

TEST(CollectivesBadInput, RootOutsideTheJobOnOneRankIsNamedEverywhere) {
  const int odd = P() - 1;
  const std::string err = error_of([&] { compas::gather(rt(), me(), me() == odd ? P() : 0); });
  std::string want = "compas::gather: root " + std::to_string(P()) + " on process " +
                     std::to_string(odd) + " is outside the job: processes are 0.." +
                     std::to_string(P() - 1);
  if (P() > 1) want += " (process 0 passes root 0)";
  EXPECT_EQ(err, want);
  still_works();
}

TEST(CollectivesBadInput, RootsThatDifferAreNamedEverywhere) {
  if (P() < 2) GTEST_SKIP() << "needs two processes";
  const std::string err =
      error_of([&] { compas::reduce(rt(), 1, compas::op::sum{}, me() == 1 ? 1 : 0); });
  EXPECT_EQ(err,
            "compas::reduce: process 0 passes root 0, process 1 root 1: every process passes "
            "the same root");
  still_works();
}

TEST(CollectivesBadInput, ARecvSpanOfTheWrongSizeOnOneRankIsNamedEverywhere) {
  const int odd = P() - 1;
  std::vector<int> send(2 * Pz(), 0), recv(2 * Pz() + (me() == odd ? 1 : 0));
  const std::string err =
      error_of([&] { compas::alltoall(rt(), std::span<const int>(send), std::span<int>(recv)); });
  EXPECT_EQ(err, "compas::alltoall: process " + std::to_string(odd) + ": recv holds " +
                     std::to_string(2 * P() + 1) + " elements, " + std::to_string(2 * P()) +
                     " are needed");
  still_works();
}

TEST(CollectivesBadInput, DifferentCallsAreNamedEverywhere) {
  if (P() < 2) GTEST_SKIP() << "needs two processes";
  const std::string err = error_of([&] {
    if (me() == 1)
      (void)compas::allgather(rt(), 1);
    else
      compas::broadcast(rt(), 1, 0);
  });
  EXPECT_EQ(err,
            "compas::broadcast: process 0 calls broadcast, process 1 calls allgather: every "
            "process makes the same calls in the same order");
  still_works();
}

TEST(CollectivesBadInput, AlltoallvCountsThatDoNotFit) {
  std::vector<std::size_t> counts(Pz(), 1);
  std::vector<int> send(me() == 0 ? Pz() - 1 : Pz(), 0);
  const std::string err =
      error_of([&] { compas::alltoallv(rt(), std::span<const int>(send), counts); });
  EXPECT_EQ(err, "compas::alltoallv: process 0: send_counts add up to " + std::to_string(P()) +
                     " elements, send holds " + std::to_string(P() - 1));
  still_works();
}

}  // namespace

// The spellings replaced by the free functions still work for one release, as the new ones do.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
TEST(Collectives, DeprecatedSpellingsForwardToTheFreeFunctions) {
  EXPECT_GT(rt().barrier(), 0.0);
  EXPECT_EQ(rt().exclusive_scan(static_cast<long>(me() + 1), compas::op::sum{}, 0L),
            compas::exclusive_scan(rt(), static_cast<long>(me() + 1), 0L, compas::op::sum{}));
  std::vector<long> in = {me() + 1L, 2L}, out(2), want(2);
  rt().allreduce(std::span<long>(in), std::span<long>(out), compas::op::sum{});
  compas::allreduce<long>(rt(), in, want, compas::op::sum{});
  EXPECT_EQ(out, want);
  std::vector<long> scans(static_cast<std::size_t>(rt().threads())), news(scans.size());
  rt().run([&](compas::ThreadCtx& t) {
    const auto i = static_cast<std::size_t>(t.thread());
    scans[i] = rt().exclusive_scan(t, static_cast<long>(t.global_id()), compas::op::sum{}, 0L);
    news[i] = rt().exclusive_scan(t, static_cast<long>(t.global_id()), 0L, compas::op::sum{});
  });
  EXPECT_EQ(scans, news);
}

// Names that had two meanings, and scans that took the operator first, keep their old spelling
// one release: each gives what the new one gives.
TEST(Collectives, DeprecatedNamesForwardToTheNewOnes) {
  const compas::Range r{3, 3 + 7 * P() + 2};
  for (int q = 0; q < P(); ++q) EXPECT_EQ(compas::split(r, P(), q), compas::block_of(r, P(), q));
  const auto square = [](compas::index i) { return i * i; };
  EXPECT_EQ(rt().reduce(rt().part(r), compas::index{0}, compas::op::sum{}, square),
            rt().transform_reduce(rt().part(r), compas::index{0}, compas::op::sum{}, square));
  if (P() > 1) {
    EXPECT_EQ(rt().collectives().exclusive_scan(me() + 1L, compas::op::sum{}, 5L),
              rt().collectives().exclusive_scan(me() + 1L, 5L, compas::op::sum{}));
  }
  const auto n = static_cast<std::size_t>(rt().threads());
  std::vector<long> reduced(n), reduced_new(n), scans(n), news(n), spans(n), spans_new(n);
  rt().run([&](compas::ThreadCtx& t) {
    const auto i = static_cast<std::size_t>(t.thread());
    reduced[i] = rt().reduce(t, rt().part(r), 1L, compas::op::prod{},
                             [](compas::index j) { return j % 3 + 1; });
    reduced_new[i] = rt().transform_reduce(t, rt().part(r), 1L, compas::op::prod{},
                                           [](compas::index j) { return j % 3 + 1; });
    scans[i] = t.exclusive_scan(t.thread() + 2L, compas::op::prod{}, 3L);
    news[i] = t.exclusive_scan(t.thread() + 2L, 3L, compas::op::prod{});
    std::array<long, 1> a{t.thread() + 2L}, b{t.thread() + 2L};
    t.exclusive_scan(std::span<long>(a), compas::op::sum{}, 4L);
    t.exclusive_scan(std::span<long>(b), 4L, compas::op::sum{});
    spans[i] = a[0];
    spans_new[i] = b[0];
  });
  EXPECT_EQ(reduced, reduced_new);
  EXPECT_EQ(scans, news);
  EXPECT_EQ(spans, spans_new);
  EXPECT_EQ(
      scans.back(), n == 1 ? 3L : 3L * [&] {
        long f = 1;
        for (std::size_t k = 0; k + 1 < n; ++k) f *= static_cast<long>(k) + 2;
        return f;
      }());
}
// rank() / size() of a Group and of Processes, tid() / nthreads() of a ThreadCtx: the old words
// of process() / processes() and thread() / threads(), for one release.
TEST(Collectives, DeprecatedRankWordsForwardToTheNewOnes) {
  compas::Group g = compas::split(rt(), me() % 2, -me());
  EXPECT_EQ(g.rank(), g.process());
  EXPECT_EQ(g.size(), g.processes());
  EXPECT_EQ(g.processes(), (P() - me() % 2 + 1) / 2);
  const compas::Processes job(rt()), group(g);
  EXPECT_EQ(job.rank(), me());
  EXPECT_EQ(job.size(), P());
  EXPECT_EQ(group.rank(), g.process());
  EXPECT_EQ(group.size(), g.processes());
  std::vector<int> tids(static_cast<std::size_t>(rt().threads()), -1), counts(tids.size(), -1);
  rt().run([&](compas::ThreadCtx& t) {
    EXPECT_EQ(t.tid(), t.thread());
    tids[static_cast<std::size_t>(t.thread())] = t.tid();
    counts[static_cast<std::size_t>(t.thread())] = t.nthreads();
  });
  for (std::size_t i = 0; i < tids.size(); ++i) {
    EXPECT_EQ(tids[i], static_cast<int>(i));
    EXPECT_EQ(counts[i], rt().threads());
  }
}
#pragma GCC diagnostic pop

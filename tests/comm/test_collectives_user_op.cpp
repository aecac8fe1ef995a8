// Process collectives with a caller's operator (ProcessCollectives::allreduce and exclusive_scan
// taking a function) across real processes. CTest starts this program through compas-run with P
// = 1..5 (see CMakeLists.txt); every rank runs every test in the same order. Operators that do not
// commute (concatenation, matrix products) must give exactly the rank-order result, and
// floating-point sums exactly the grouping the header documents (tests/common/doubling.hpp), the
// same bits on every rank.
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "../common/doubling.hpp"
#include "../common/word.hpp"
#include "collectives_job.hpp"
#include "compas/comm/comm.hpp"

namespace {

using namespace collectives_job;

// A string of up to 12 characters in 13 bytes (an odd size: chunk boundaries cut values), with
// concatenation: associative, not commutative.
using Word = compas::testing::Word<12>;
static_assert(sizeof(Word) == 13);
using concat = compas::testing::Concat<12>;
Word word(const std::string& text) {
  return compas::testing::word<12>(text);
}
// What rank r contributes at position i: two letters, different for every rank.
Word letters(int r, std::size_t i) {
  const auto c = static_cast<char>('a' + (static_cast<std::size_t>(r) * 5 + i) % 26);
  return word(std::string{c, static_cast<char>('0' + r)});
}

// 2x2 matrices of wrapping integers under the product: associative, not commutative.
struct Mat {
  std::uint64_t a = 1, b = 0, c = 0, d = 1;
  bool operator==(const Mat&) const = default;
};
struct matmul {
  Mat operator()(const Mat& x, const Mat& y) const {
    return {x.a * y.a + x.b * y.c, x.a * y.b + x.b * y.d, x.c * y.a + x.d * y.c,
            x.c * y.b + x.d * y.d};
  }
};
Mat matrix(int r, std::size_t i) {
  const auto u = static_cast<std::uint64_t>(r) * 1000 + i;
  return {u + 2, 1, u * 3 + 1, u + 5};
}

std::string rank_order_concat(std::size_t i, int upto) {
  std::string s;
  for (int r = 0; r < upto; ++r) s += letters(r, i).str();
  return s;
}
Mat rank_order_product(std::size_t i, int upto) {
  Mat m;
  for (int r = 0; r < upto; ++r) m = matmul{}(m, matrix(r, i));
  return m;
}

// Values whose sum depends on the grouping: large and small magnitudes, both signs.
double dvalue(int r, std::size_t i) {
  const auto g = static_cast<double>(r * 7 + static_cast<int>(i % 11));
  return (r % 3 == 0 ? 1e16 : 1.0) / (g + 3) + 0.1 * r - 1e15 * (r % 2);
}
std::uint64_t bits(double d) {
  return std::bit_cast<std::uint64_t>(d);
}
const auto add = [](double a, double b) { return a + b; };

void check_concat_allreduce(ProcessCollectives& nc, std::size_t n) {
  std::vector<Word> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = letters(rank(), i);
  nc.allreduce(std::span<Word>(v), concat{});
  for (std::size_t i = 0; i < n; ++i)
    ASSERT_EQ(v[i].str(), rank_order_concat(i, nranks())) << "element " << i << " of " << n;
}

void check_concat_scan(ProcessCollectives& nc, std::size_t n) {
  std::vector<Word> in(n), out(n, word("#"));  // out stays "#" on rank 0
  for (std::size_t i = 0; i < n; ++i) in[i] = letters(rank(), i);
  nc.exclusive_scan(std::span<const Word>(in), std::span<Word>(out), concat{});
  for (std::size_t i = 0; i < n; ++i)
    ASSERT_EQ(out[i].str(), rank() == 0 ? "#" : rank_order_concat(i, rank()))
        << "element " << i << " of " << n;
}

void check_matrix_allreduce_and_scan(ProcessCollectives& nc, std::size_t n) {
  std::vector<Mat> v(n), before(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = before[i] = matrix(rank(), i);
  nc.exclusive_scan(std::span<const Mat>(v), std::span<Mat>(before), matmul{});
  nc.allreduce(std::span<Mat>(v), matmul{});
  for (std::size_t i = 0; i < n; ++i) {
    ASSERT_TRUE(v[i] == rank_order_product(i, nranks())) << "element " << i << " of " << n;
    if (rank() > 0) {
      ASSERT_TRUE(before[i] == rank_order_product(i, rank())) << "element " << i << " of " << n;
    }
  }
}

TEST(UserOpAllreduce, ConcatenationIsInRankOrder) {
  for (std::size_t n : {0ul, 1ul, 3ul, 1001ul}) check_concat_allreduce(coll(), n);
  EXPECT_EQ(coll().allreduce(letters(rank(), 0), concat{}).str(), rank_order_concat(0, nranks()));
}

TEST(UserOpAllreduce, MatrixProductIsInRankOrder) {
  for (std::size_t n : {1ul, 2ul, 257ul}) check_matrix_allreduce_and_scan(coll(), n);
}

TEST(UserOpAllreduce, IntegerSumsAreExact) {
  for (int k = 0; k < 20; ++k) {
    const long mine = (static_cast<long>(rank()) + 1) * 1000003L + k;
    const long want = 1000003L * nranks() * (nranks() + 1) / 2 + static_cast<long>(k) * nranks();
    ASSERT_EQ(coll().allreduce(mine, [](long a, long b) { return a + b; }), want) << "call " << k;
  }
}

// The left fold of x[0 .. upto), for telling the documented grouping from it.
double left_fold(const std::vector<double>& x, std::size_t upto) {
  double acc = x[0];
  for (std::size_t r = 1; r < upto; ++r) acc += x[r];
  return acc;
}
std::vector<double> dvalues(std::size_t i) {
  std::vector<double> x;
  for (int r = 0; r < nranks(); ++r) x.push_back(dvalue(r, i));
  return x;
}

TEST(UserOpAllreduce, DoublesAreGroupedAsDocumentedWithTheSameBitsEverywhere) {
  const int p = nranks();
  int unlike_left_fold = 0;
  for (std::size_t i = 0; i < 11; ++i) {
    const double got = coll().allreduce(dvalue(rank(), i), add);
    const double want = compas::test::doubling_allreduce(dvalues(i), add);
    EXPECT_EQ(bits(got), bits(want)) << "element " << i;
    unlike_left_fold += bits(want) != bits(left_fold(dvalues(i), dvalues(i).size()));
    std::uint64_t mine = bits(got);
    std::vector<std::uint64_t> all(static_cast<std::size_t>(p));
    coll().allgather(std::span<const std::uint64_t>(&mine, 1), std::span<std::uint64_t>(all));
    for (int r = 0; r < p; ++r)
      EXPECT_EQ(all[static_cast<std::size_t>(r)], mine) << "rank " << r << ", element " << i;
  }
  if (p >= 4) {
    EXPECT_GT(unlike_left_fold, 0) << "the data cannot tell the grouping from a left fold";
  }
}

TEST(UserOpScan, ConcatenationIsTheRankOrderPrefix) {
  for (std::size_t n : {0ul, 1ul, 3ul, 1001ul}) check_concat_scan(coll(), n);
}

TEST(UserOpScan, IdentityOnRankZeroWithoutApplyingTheOperator) {
  // "#" is not an identity of concatenation: any f("#", x) would show in the result.
  const Word got = coll().exclusive_scan(letters(rank(), 0), word("#"), concat{});
  EXPECT_EQ(got.str(), rank() == 0 ? "#" : rank_order_concat(0, rank()));
}

TEST(UserOpScan, IntegerPrefixSumsAreExact) {
  const long got = coll().exclusive_scan(static_cast<long>(rank() + 1), 0L,
                                         [](long a, long b) { return a + b; });
  EXPECT_EQ(got, static_cast<long>(rank()) * (rank() + 1) / 2);
}

TEST(UserOpScan, InPlace) {
  std::vector<Word> v(5);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = letters(rank(), i);
  coll().exclusive_scan(std::span<const Word>(v), std::span<Word>(v), concat{});
  for (std::size_t i = 0; i < v.size(); ++i)
    EXPECT_EQ(v[i].str(), rank() == 0 ? letters(0, i).str() : rank_order_concat(i, rank()));
}

TEST(UserOpScan, DoublesAreGroupedAsDocumented) {
  const auto me = static_cast<std::size_t>(rank());
  int unlike_left_fold = 0;
  for (std::size_t i = 0; i < 11; ++i) {
    const double got = coll().exclusive_scan(dvalue(rank(), i), -1.0, add);
    const auto want = compas::test::doubling_exclusive_scan(dvalues(i), me, add);
    EXPECT_EQ(bits(got), bits(want ? *want : -1.0)) << "element " << i;
    if (want) unlike_left_fold += bits(*want) != bits(left_fold(dvalues(i), me));
  }
  if (rank() >= 4) {
    EXPECT_GT(unlike_left_fold, 0) << "the data cannot tell the grouping from a left fold";
  }
}

TEST(UserOpScan, LengthsMustAgree) {
  std::vector<Word> in(3), out(2);
  EXPECT_THROW(coll().exclusive_scan(std::span<const Word>(in), std::span<Word>(out), concat{}),
               std::invalid_argument);
}

// Tiny slots (64 bytes of payload): messages of many chunks whose boundaries cut the 13-byte
// values, in every round.
TEST(UserOpBoth, ThroughTinySlots) {
  CollectivesOptions o;
  o.slot_bytes = 128;
  ProcessCollectives nc(comm(), o);
  for (std::size_t n : {1ul, 5ul, 1001ul}) {
    check_concat_allreduce(nc, n);
    check_concat_scan(nc, n);
    check_matrix_allreduce_and_scan(nc, n);
  }
}

TEST(UserOpBoth, BackToBackWithTheOtherCollectives) {
  for (int k = 0; k < 100; ++k) {
    check_concat_allreduce(coll(), 1 + static_cast<std::size_t>(k % 3));
    ASSERT_EQ(coll().allreduce(rank() + k, Op::sum), nranks() * (nranks() - 1) / 2 + nranks() * k);
    check_concat_scan(coll(), 1 + static_cast<std::size_t>(k % 2));
  }
}

// Rank 0's value makes the operator throw. Every process still ends the call (none waits for a
// message that never comes): where the operator threw its exception comes out, everywhere else a
// std::runtime_error naming such a rank; afterwards the object works.
struct picky {
  Word operator()(const Word& a, const Word& b) const {
    if (a.str() == "!" || b.str() == "!") throw std::domain_error("picky: will not combine '!'");
    return concat{}(a, b);
  }
};

template <class Call>
void check_operator_failure(const char* what, Call call) {
  int threw_here = 0;  // 1: picky's exception, 2: the others' runtime_error
  std::string message;
  try {
    call();
  } catch (const std::domain_error& e) {
    threw_here = 1;
    message = e.what();
  } catch (const std::runtime_error& e) {
    threw_here = 2;
    message = e.what();
  }
  std::vector<int> all(static_cast<std::size_t>(nranks()));
  coll().allgather(std::span<const int>(&threw_here, 1), std::span<int>(all));
  if (nranks() == 1) {  // nothing to combine: the operator never runs
    EXPECT_EQ(threw_here, 0) << what << ": " << message;
    return;
  }
  EXPECT_NE(threw_here, 0) << what << ": returned a result";
  int named = -1;
  if (threw_here == 2 &&
      std::sscanf(message.c_str(), "%*[^:]: the operator threw on rank %d", &named) == 1) {
    ASSERT_GE(named, 0);
    ASSERT_LT(named, nranks());
    EXPECT_EQ(all[static_cast<std::size_t>(named)], 1) << what << ": " << message;
  } else {
    EXPECT_EQ(threw_here, 1) << what << ": " << message;
  }
  check_concat_allreduce(coll(), 2);  // still usable
}

TEST(UserOpErrors, AnOperatorThatThrowsEndsTheCallEverywhere) {
  const Word mine = rank() == 0 ? word("!") : letters(rank(), 0);
  check_operator_failure("allreduce", [&] { coll().allreduce(mine, picky{}); });
  check_operator_failure("exclusive_scan",
                         [&] { coll().exclusive_scan(mine, word("#"), picky{}); });
}

// Processes that pass different element types, operators or numbers of elements to one call: every
// process ends it with an invalid_argument naming both sides (each got another answer before), and
// the object refuses further calls. Rank 1 differs from all the others.
struct plus {
  template <class T>
  T operator()(const T& a, const T& b) const {
    return a + b;
  }
};
struct larger {
  template <class T>
  T operator()(const T& a, const T& b) const {
    return a < b ? b : a;
  }
};

template <class Call>
void expect_named_difference(const char* what, Call call, const std::string& others,
                             const std::string& odd) {
  ProcessCollectives nc(comm());
  try {
    call(nc);
    ADD_FAILURE() << what << ": returned";
  } catch (const std::invalid_argument& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(what), std::string::npos) << msg;
    EXPECT_NE(msg.find("rank 1 passes " + odd), std::string::npos) << msg;
    EXPECT_NE(msg.find(" passes " + others), std::string::npos) << msg;
  }
  EXPECT_THROW(call(nc), CommError);  // refused afterwards, like any mismatch
}

TEST(UserOpErrors, TypesOrOperatorsThatDifferAreNamedEverywhere) {
  if (nranks() == 1) GTEST_SKIP() << "needs two processes";
  const bool odd = rank() == 1;
  const std::string ns = "(anonymous namespace)::";
  expect_named_difference(
      "allreduce",
      [&](ProcessCollectives& nc) {
        if (odd)
          nc.allreduce(std::int64_t{rank()}, plus{});
        else
          nc.allreduce(double(rank()), plus{});
      },
      "double with " + ns + "plus", "long with " + ns + "plus");
  expect_named_difference(
      "allreduce",
      [&](ProcessCollectives& nc) {
        if (odd)
          nc.allreduce(double(rank()), larger{});
        else
          nc.allreduce(double(rank()), plus{});
      },
      "double with " + ns + "plus", "double with " + ns + "larger");
  expect_named_difference(
      "allreduce",
      [&](ProcessCollectives& nc) {
        if (odd)
          nc.allreduce(std::int32_t{rank()}, plus{});
        else
          nc.allreduce(double(rank()), plus{});
      },
      "double with " + ns + "plus", "int with " + ns + "plus");
  // Payloads of different numbers of chunks: the same count of 4- and 8-byte values, or
  // different counts. Every process throws at once (before, those that never met rank 1's
  // data waited for COMPAS_TIMEOUT).
  expect_named_difference(
      "allreduce",
      [&](ProcessCollectives& nc) {
        if (odd) {
          std::vector<std::int32_t> v(100000, 1);
          nc.allreduce(std::span<std::int32_t>(v), plus{});
        } else {
          std::vector<double> v(100000, 1.0);
          nc.allreduce(std::span<double>(v), plus{});
        }
      },
      "double with " + ns + "plus on 100000 elements",
      "int with " + ns + "plus on 100000 elements");
  expect_named_difference(
      "exclusive_scan",
      [&](ProcessCollectives& nc) {
        std::vector<double> v(odd ? 50000 : 100000, 1.0);
        nc.exclusive_scan(std::span<const double>(v), std::span<double>(v), plus{});
      },
      "double with " + ns + "plus on 100000 elements",
      "double with " + ns + "plus on 50000 elements");
  expect_named_difference(
      "exclusive_scan",
      [&](ProcessCollectives& nc) {
        if (odd)
          nc.exclusive_scan(std::int64_t{rank()}, std::int64_t{0}, plus{});
        else
          nc.exclusive_scan(double(rank()), 0.0, plus{});
      },
      "double with " + ns + "plus", "long with " + ns + "plus");
}

}  // namespace

int main(int argc, char** argv) {
  return collectives_job::run(argc, argv, "test_collectives_user_op");
}

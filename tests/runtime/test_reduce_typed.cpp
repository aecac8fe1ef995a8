// compas::reduce and compas::allreduce on spans with compas::op::sum / prod / min / max: every
// rank of a compas-run job runs this with test_runtime (P = 1..5). The six types comm reduces with
// a typed loop and two it does not (the caller's-operator path) give the left fold in rank order
// of every rank's values, at the root (in place or not) and everywhere; lengths from 1 to past the
// 16 KiB where the typed allreduce turns to reduce-scatter; the other ranks' `out` untouched.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "../common/job_main.hpp"
#include "compas/compas.hpp"

namespace {

// Rank r's element i: small integers (exact in float, no overflow in a product of 5 ranks),
// signed where T is.
template <class T>
T value_of(int r, std::size_t i) {
  const auto v = static_cast<int>((i * 7 + static_cast<std::size_t>(r) * 3) % 5);
  if constexpr (static_cast<T>(-1) < T{0}) return static_cast<T>(v - 2);
  return static_cast<T>(v + 1);
}
template <class T>
std::vector<T> values_of(int r, std::size_t n) {
  std::vector<T> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = value_of<T>(r, i);
  return v;
}
// op over every rank's values, rank 0 first.
template <class T, class Op>
std::vector<T> fold(std::size_t n, Op op) {
  std::vector<T> acc = values_of<T>(0, n);
  for (int r = 1; r < P(); ++r)
    for (std::size_t i = 0; i < n; ++i) acc[i] = static_cast<T>(op(acc[i], value_of<T>(r, i)));
  return acc;
}

template <class T, class Op>
void check_reduce(std::size_t n, Op op) {
  SCOPED_TRACE(testing::Message() << "n " << n << ", " << typeid(T).name() << ", "
                                  << typeid(Op).name());
  const std::vector<T> in = values_of<T>(me(), n), want = fold<T>(n, op);
  for (const int root : {0, P() - 1}) {
    const std::vector<T> untouched(n, static_cast<T>(9));
    std::vector<T> out = untouched;
    compas::reduce(rt(), std::span<const T>(in), std::span<T>(out), op, root);
    EXPECT_EQ(out, me() == root ? want : untouched) << "root " << root;
    std::vector<T> inout = in;  // out == in
    compas::reduce(rt(), std::span<const T>(inout), std::span<T>(inout), op, root);
    EXPECT_EQ(inout, me() == root ? want : in) << "in place, root " << root;
  }
  std::vector<T> all(n);
  compas::allreduce(rt(), std::span<const T>(in), std::span<T>(all), op);
  EXPECT_EQ(all, want);
}

template <class T>
void check_ops() {
  // 1 element, one chunk, more than 16 KiB (allreduce's reduce-scatter for P > 2), several
  // chunks of the channel's slots (at most 256 KiB), then a short one after a long one (the kept
  // buffers larger than needed).
  for (const std::size_t n :
       {std::size_t{1}, std::size_t{300}, std::size_t{5000}, std::size_t{70000}, std::size_t{3}}) {
    check_reduce<T>(n, compas::op::sum{});
    check_reduce<T>(n, compas::op::prod{});
    check_reduce<T>(n, compas::op::min{});
    check_reduce<T>(n, compas::op::max{});
  }
}

TEST(ReduceTyped, Int32) {
  check_ops<std::int32_t>();
}
TEST(ReduceTyped, Int64) {
  check_ops<std::int64_t>();
}
TEST(ReduceTyped, Uint32) {
  check_ops<std::uint32_t>();
}
TEST(ReduceTyped, Uint64) {
  check_ops<std::uint64_t>();
}
TEST(ReduceTyped, Float) {
  check_ops<float>();
}
TEST(ReduceTyped, Double) {
  check_ops<double>();
}
// Not among comm's six types: the caller's-operator path, the same results.
TEST(ReduceTyped, Int16ThroughTheGenericPath) {
  check_ops<std::int16_t>();
}
TEST(ReduceTyped, LongLongThroughTheGenericPath) {
  check_ops<long long>();
}

TEST(ReduceTyped, ALambdaKeepsTheGenericPath) {
  const std::vector<std::int64_t> in = values_of<std::int64_t>(me(), 100);
  std::vector<std::int64_t> out(100, 0);
  auto add = [](std::int64_t a, std::int64_t b) { return a + b; };
  compas::reduce(rt(), std::span<const std::int64_t>(in), std::span<std::int64_t>(out), add, 0);
  EXPECT_EQ(out, me() == 0 ? fold<std::int64_t>(100, add) : std::vector<std::int64_t>(100, 0));
}

TEST(ReduceTyped, MismatchedLengthsStillNameBothRanks) {
  if (P() < 2) GTEST_SKIP() << "needs two processes";
  const int odd = P() - 1;
  std::vector<double> in(me() == odd ? 6 : 5, 1.0), out(in.size());
  std::string err;
  try {
    compas::reduce(rt(), std::span<const double>(in), std::span<double>(out), compas::op::sum{}, 0);
  } catch (const compas::CollectiveError& e) {
    err = e.what();
  }
  EXPECT_EQ(err, "compas::reduce: process 0 passes 5 elements, process " + std::to_string(odd) +
                     " passes 6: every process passes the same length");
}

}  // namespace

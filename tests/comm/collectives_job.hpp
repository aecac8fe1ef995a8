// What the process-collectives test programs share (test_collectives, test_collectives_reduce):
// the job every rank joins, the sizes every collective is tried with, and the serial reference
// arithmetic. Every rank computes every other's contribution from a formula, so a collective's
// result is checked against a reference computed locally.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <exception>
#include <memory>
#include <span>
#include <type_traits>
#include <vector>

#include "compas/comm/comm.hpp"

namespace collectives_job {

using namespace compas::comm;

inline std::unique_ptr<Bootstrap> g_boot;
inline std::unique_ptr<Comm> g_comm;
inline std::unique_ptr<ProcessCollectives> g_coll;

inline Comm& comm() {
  return *g_comm;
}
inline ProcessCollectives& coll() {
  return *g_coll;
}
inline int rank() {
  return g_comm->rank();
}
inline int nranks() {
  return g_comm->size();
}

// Sizes every collective is tried with: empty, one, odd, and large enough (>= 1 MiB of data for
// 8-byte elements) to go through the slots in many chunks.
inline const std::vector<std::size_t> kSizes = {0, 1, 7, 1001, 150001};

// ---- reference arithmetic (integer sums and products wrap) ----

template <class T>
T ref_op(Op op, T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    if (op == Op::sum) return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
    if (op == Op::prod) return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
  } else {
    if (op == Op::sum) return a + b;
    if (op == Op::prod) return a * b;
  }
  if (op == Op::min) return b < a ? b : a;
  return a < b ? b : a;
}

// What rank r contributes at position i. Floating-point values are small multiples of 1/4 (sums
// exact in any order) and, for products, small integers (products exact); integer values are
// large enough for sums and products to wrap.
template <class T>
T contribution(Op op, int r, std::size_t i, int salt) {
  const std::uint64_t h = (static_cast<std::uint64_t>(r) * 7919u + i * 104729u +
                           static_cast<std::uint64_t>(salt) * 13u) *
                          0x9E3779B97F4A7C15ull;
  if (op == Op::prod) {
    const auto small = static_cast<int>((h >> 40) % 5) - 2;  // -2..2
    if constexpr (std::is_unsigned_v<T>)
      return static_cast<T>((h >> 33) | 1);  // odd: products wrap without collapsing to 0
    else if constexpr (std::is_integral_v<T>)
      return static_cast<T>(h >> 33) | 1;
    else
      return static_cast<T>(small);
  }
  if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(h >> 7);
  } else {
    return static_cast<T>(static_cast<int>((h >> 40) % 4001) - 2000) / 4;
  }
}

// Every rank's contribution at each of n positions combined by op, in rank order.
template <class T>
std::vector<T> reference(Op op, std::size_t n, int salt) {
  std::vector<T> out(n);
  for (std::size_t i = 0; i < n; ++i) {
    T acc = contribution<T>(op, 0, i, salt);
    for (int r = 1; r < nranks(); ++r) acc = ref_op(op, acc, contribution<T>(op, r, i, salt));
    out[i] = acc;
  }
  return out;
}

template <class T>
void check_allreduce(ProcessCollectives& nc, Op op, std::size_t n, int salt) {
  std::vector<T> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = contribution<T>(op, rank(), i, salt);
  nc.allreduce(std::span<T>(v), op);
  const std::vector<T> want = reference<T>(op, n, salt);
  for (std::size_t i = 0; i < n; ++i)
    ASSERT_EQ(v[i], want[i]) << "element " << i << " of " << n << ", op " << to_string(op)
                             << ", salt " << salt;
}

// The program's main: joins the job (COMPAS_* variables of compas-run), runs every test, leaves.
inline int run(int argc, char** argv, const char* program) {
  ::testing::InitGoogleTest(&argc, argv);
  try {
    g_boot = Bootstrap::from_environment();
    g_comm = std::make_unique<Comm>(*g_boot);
    g_coll = std::make_unique<ProcessCollectives>(*g_comm);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: cannot form the job: %s\n", program, e.what());
    return 1;
  }
  const int rc = RUN_ALL_TESTS();
  g_coll.reset();
  g_comm.reset();
  g_boot.reset();
  return rc;
}

}  // namespace collectives_job

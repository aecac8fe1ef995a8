// DistArray<T>::atomic_update across real processes (every rank of a compas-run job runs this, in
// test_dist_array): every thread of every process updates every element, wherever it lives; after
// rt.barrier() each holds exactly the sum (or xor) of all updates. The CTest variants take the
// same-host load/store path, UCX's atomics (COMPAS_DIRECT=0) and tcp.
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "../common/job_main.hpp"
#include "compas/compas.hpp"

namespace {

using compas::DistArray;
using compas::index;
using compas::comm::AtomicOp;

// A size every part holds some of, uneven over the processes.
index table_size() {
  return 7 * rt().processes() + 53;
}

template <class T>
void expect_every_element(const DistArray<T>& t, const std::string& what, T (*want)(index)) {
  int wrong = 0;
  for (index i = t.lo(); i < t.hi(); ++i)
    if (t[i] != want(i) && ++wrong <= 3)
      ADD_FAILURE() << what << ": rank " << rt().process() << " element " << i << " holds " << t[i]
                    << ", want " << want(i);
  EXPECT_EQ(rt().allreduce(wrong, compas::op::sum{}), 0) << what;
}

TEST(AtomicUpdate, AddsAndXorsOfEveryThreadOfEveryProcessReachEveryElement) {
  DistArray<std::uint64_t> t(rt(), table_size(), {.halo = 0});
  for (index i = t.lo(); i < t.hi(); ++i) t[i] = static_cast<std::uint64_t>(i);
  compas::barrier(rt());
  const index n = t.size();
  rt().run([&](compas::ThreadCtx& c) {
    const std::uint64_t key = std::uint64_t{1} << c.global_id();
    for (index i = 0; i < n; ++i) {
      t.atomic_update(i, AtomicOp::add, 1);
      t.atomic_update(n - 1 - i, AtomicOp::bit_xor, key << 32);
    }
  });
  compas::barrier(rt());  // every update in place everywhere
  static int threads = 0;
  threads = rt().processes() * rt().threads();
  expect_every_element<std::uint64_t>(t, "add and xor", [](index i) {
    const std::uint64_t all = (std::uint64_t{1} << threads) - 1;
    return (static_cast<std::uint64_t>(i) + static_cast<std::uint64_t>(threads)) ^ (all << 32);
  });
  compas::barrier(rt());  // everybody checked before the and/or below change the values
  // And / or from one process: bit 62 set everywhere, then the low half cleared.
  if (rt().process() == rt().processes() - 1)
    for (index i = 0; i < n; ++i) {
      t.atomic_update(i, AtomicOp::bit_or, std::uint64_t{1} << 62);
      t.atomic_update(i, AtomicOp::bit_and, ~std::uint64_t{0} << 32);
    }
  compas::barrier(rt());
  expect_every_element<std::uint64_t>(t, "or and and", [](index) {
    const std::uint64_t all = (std::uint64_t{1} << threads) - 1;
    return (all << 32) | (std::uint64_t{1} << 62);
  });
}

TEST(AtomicUpdate, FourByteElementsAddAlike) {
  DistArray<std::int32_t> t(rt(), table_size(), {.halo = 1});
  for (index i = t.lo(); i < t.hi(); ++i) t[i] = -static_cast<std::int32_t>(i);
  compas::barrier(rt());
  rt().run([&](compas::ThreadCtx&) {
    for (index i = 0; i < t.size(); ++i) t.atomic_update(i, AtomicOp::add, 3);
  });
  compas::barrier(rt());
  static int threads = 0;
  threads = rt().processes() * rt().threads();
  expect_every_element<std::int32_t>(
      t, "add", [](index i) { return static_cast<std::int32_t>(3 * threads - i); });
}

TEST(AtomicUpdate, AnIndexOutsideTheDomainIsNamed) {
  DistArray<std::int64_t> t(rt(), {10, 20}, {.halo = 0});
  for (index bad : {index{9}, index{20}, index{-1}}) {
    try {
      t.atomic_update(bad, AtomicOp::add, 1);
      ADD_FAILURE() << bad << " accepted";
    } catch (const std::out_of_range& e) {
      EXPECT_NE(std::string(e.what()).find("index " + std::to_string(bad) +
                                           " is outside the array's domain [10, 20)"),
                std::string::npos)
          << e.what();
    }
  }
  compas::barrier(rt());
}

}  // namespace

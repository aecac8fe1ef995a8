// What the team collectives' test files share: team options, the mismatch log, serial references
// (left folds in thread order), value generators and operators of several types, and the
// Collectives fixture (its parameter: the team size).
#pragma once

#include <gtest/gtest.h>

#include <array>
#include <climits>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "compas/threads/ops.hpp"
#include "compas/threads/team.hpp"
#include "host_topology.hpp"

namespace threads_collectives_test {

namespace ct = compas::threads;
namespace op = compas::op;

using compas_threads_test::host;

inline ct::TeamOptions team_options(
    int threads, ct::BarrierAlgorithm barrier = ct::BarrierAlgorithm::dissemination) {
  ct::TeamOptions o;
  o.threads = threads;
  o.barrier = barrier;
  o.allow_oversubscribe = threads > host().pus();
  return o;
}

// Mismatches seen by each thread; the first few are kept with a description.
class Log {
 public:
  explicit Log(int threads) : per_thread_(static_cast<std::size_t>(threads)) {}
  void expect(const ct::ThreadCtx& ctx, bool ok, const std::string& what) {
    if (ok) return;
    Entry& e = per_thread_[static_cast<std::size_t>(ctx.thread())];
    if (e.count++ < 5) e.first.push_back(what);
  }
  void check() const {
    for (std::size_t t = 0; t < per_thread_.size(); ++t) {
      const Entry& e = per_thread_[t];
      std::string list;
      for (const auto& s : e.first) list += "\n  " + s;
      EXPECT_EQ(e.count, 0) << "tid " << t << " saw wrong results, e.g.:" << list;
    }
  }

 private:
  struct alignas(64) Entry {
    int count = 0;
    std::vector<std::string> first;
  };
  std::vector<Entry> per_thread_;
};

inline std::string at(const char* what, int iteration) {
  return std::string(what) + " at iteration " + std::to_string(iteration);
}

// Serial references: left folds in thread order.
template <class T, class F, class Op>
T fold_all(int n, F value, Op o) {
  T acc = value(0);
  for (int i = 1; i < n; ++i) acc = o(acc, value(i));
  return acc;
}
template <class T, class F, class Op>
T fold_inclusive(int tid, F value, Op o) {
  T acc = value(0);
  for (int i = 1; i <= tid; ++i) acc = o(acc, value(i));
  return acc;
}
template <class T, class F, class Op>
T fold_exclusive(int tid, F value, Op o, T identity) {
  T acc = identity;
  for (int i = 0; i < tid; ++i) acc = o(acc, value(i));
  return acc;
}

template <class T>
inline bool same_bits(const T& a, const T& b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

// ---- value generators and operators --------------------------------------------------------

inline int ival(int tid, int it) {
  return (tid * 37 + it * 11) % 29 - 14;
}

// Order-sensitive on purpose: combining in another order gives another result.
struct IntHorner {
  int operator()(int a, int b) const { return a * 3 + b; }
};

inline double dval(int tid, int it) {
  // Mixed magnitudes, so that the sum depends on the order of the additions.
  static constexpr double kBase[] = {0.1, 1e16, 3.3, -1e16, 0.7, 2.5e15, -7.1};
  return kBase[tid % 7] * (1.0 + 0.001 * it) + 0.37 * (tid / 7);
}

inline std::uint64_t uval(int tid, int it) {
  return (1ull << ((tid * 13 + it) % 64)) | (tid == 3 ? 0x8000000000000000ull : 0ull);
}

struct Small {
  int a;
  double b;
};
struct SmallOp {
  Small operator()(const Small& x, const Small& y) const {
    return {x.a * 2 - y.a, x.b * 0.5 + y.b};
  }
};
inline Small sval(int tid, int it) {
  return {tid * 5 - it % 7, 0.25 * tid + 1.0 / (1 + it)};
}
bool operator==(const Small& x, const Small& y) {
  return x.a == y.a && same_bits(x.b, y.b);
}

// 320 bytes: the pointer path.
using Big = std::array<double, 40>;
static_assert(sizeof(Big) > 128);
struct BigOp {
  Big operator()(const Big& x, const Big& y) const {
    Big r;
    for (std::size_t i = 0; i < r.size(); ++i) r[i] = x[i] * 1.5 - y[i];
    return r;
  }
};
inline Big bval(int tid, int it) {
  Big b;
  for (std::size_t i = 0; i < b.size(); ++i)
    b[i] = static_cast<double>(tid) * 0.3 + static_cast<double>(i) - 0.01 * it;
  return b;
}

// Exactly at the slot size (128 bytes, slot path) and just over it (pointer path).
struct Edge128 {
  std::uint64_t w[16];
};
static_assert(sizeof(Edge128) == 128);
struct Edge132 {
  std::int32_t w[33];
};
static_assert(sizeof(Edge132) == 132);
template <class E>
inline E eval(int tid, int it) {
  E e;
  constexpr std::size_t n = sizeof(e.w) / sizeof(e.w[0]);
  using W = std::remove_reference_t<decltype(e.w[0])>;
  for (std::size_t i = 0; i < n; ++i) e.w[i] = static_cast<W>(tid * 100 + static_cast<int>(i) + it);
  return e;
}
struct EdgeOp {
  template <class E>
  E operator()(const E& x, const E& y) const {
    E r;
    constexpr std::size_t n = sizeof(r.w) / sizeof(r.w[0]);
    for (std::size_t i = 0; i < n; ++i) r.w[i] = x.w[i] * 2 - y.w[i];
    return r;
  }
};
template <class E>
inline bool same(const E& a, const E& b) {
  return same_bits(a, b);
}

}  // namespace threads_collectives_test

class Collectives : public testing::TestWithParam<int> {
 protected:
  int threads() const { return GetParam(); }
};

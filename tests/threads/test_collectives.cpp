// Team collectives against serial references, for team sizes 1, 2, 3, 4 and 7 (the larger ones
// oversubscribed on a small host), several types and operators, the large-type pointer path,
// span versions, long back-to-back sequences, and block partitioning.
//
// Every value a thread contributes is a function of (tid, iteration), so each thread computes
// the serial reference itself (a left fold in thread order) and records mismatches; the test
// thread asserts on the records after run().
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <climits>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "compas/threads/ops.hpp"
#include "compas/threads/team.hpp"
#include "host_topology.hpp"

namespace ct = compas::threads;
namespace op = compas::op;

namespace {

using compas_threads_test::host;

ct::TeamOptions team_options(int threads,
                             ct::BarrierAlgorithm barrier = ct::BarrierAlgorithm::dissemination) {
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
    Entry& e = per_thread_[static_cast<std::size_t>(ctx.tid())];
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

std::string at(const char* what, int iteration) {
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
bool same_bits(const T& a, const T& b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

// ---- value generators and operators --------------------------------------------------------

int ival(int tid, int it) {
  return (tid * 37 + it * 11) % 29 - 14;
}

// Order-sensitive on purpose: combining in another order gives another result.
struct IntHorner {
  int operator()(int a, int b) const { return a * 3 + b; }
};

double dval(int tid, int it) {
  // Mixed magnitudes, so that the sum depends on the order of the additions.
  static constexpr double kBase[] = {0.1, 1e16, 3.3, -1e16, 0.7, 2.5e15, -7.1};
  return kBase[tid % 7] * (1.0 + 0.001 * it) + 0.37 * (tid / 7);
}

std::uint64_t uval(int tid, int it) {
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
Small sval(int tid, int it) {
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
Big bval(int tid, int it) {
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
E eval(int tid, int it) {
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
bool same(const E& a, const E& b) {
  return same_bits(a, b);
}

}  // namespace

class Collectives : public testing::TestWithParam<int> {
 protected:
  int threads() const { return GetParam(); }
};

TEST_P(Collectives, IntSumMaxMin) {
  const int n = threads();
  ct::Team team(host(), team_options(n));
  Log log(n);
  team.run([&](ct::ThreadCtx& ctx) {
    const int tid = ctx.tid();
    for (int it = 0; it < 40; ++it) {
      auto v = [it](int t) { return ival(t, it); };
      const int mine = v(tid);
      log.expect(ctx, ctx.allreduce(mine, op::sum{}) == fold_all<int>(n, v, op::sum{}),
                 at("allreduce sum", it));
      log.expect(ctx, ctx.allreduce(mine, op::max{}) == fold_all<int>(n, v, op::max{}),
                 at("allreduce max", it));
      log.expect(ctx, ctx.allreduce(mine, op::min{}) == fold_all<int>(n, v, op::min{}),
                 at("allreduce min", it));
      log.expect(ctx, ctx.allreduce(mine, IntHorner{}) == fold_all<int>(n, v, IntHorner{}),
                 at("allreduce ordered", it));
      const int root = it % n;
      const int r = ctx.reduce(mine, op::sum{}, root);
      if (tid == root) log.expect(ctx, r == fold_all<int>(n, v, op::sum{}), at("reduce sum", it));
      const int rh = ctx.reduce(mine, IntHorner{}, n - 1 - root);
      if (tid == n - 1 - root)
        log.expect(ctx, rh == fold_all<int>(n, v, IntHorner{}), at("reduce ordered", it));
      log.expect(ctx, ctx.broadcast(mine, root) == v(root), at("broadcast", it));
      log.expect(ctx, ctx.broadcast(mine) == v(0), at("broadcast root 0", it));
      log.expect(ctx, ctx.inclusive_scan(mine, op::sum{}) == fold_inclusive<int>(tid, v, op::sum{}),
                 at("inclusive_scan sum", it));
      log.expect(ctx,
                 ctx.inclusive_scan(mine, IntHorner{}) == fold_inclusive<int>(tid, v, IntHorner{}),
                 at("inclusive_scan ordered", it));
      log.expect(
          ctx, ctx.exclusive_scan(mine, op::sum{}, 0) == fold_exclusive<int>(tid, v, op::sum{}, 0),
          at("exclusive_scan sum", it));
      log.expect(ctx,
                 ctx.exclusive_scan(mine, op::max{}, INT_MIN) ==
                     fold_exclusive<int>(tid, v, op::max{}, INT_MIN),
                 at("exclusive_scan max", it));
      log.expect(
          ctx,
          ctx.exclusive_scan(mine, IntHorner{}, 5) == fold_exclusive<int>(tid, v, IntHorner{}, 5),
          at("exclusive_scan ordered", it));
    }
  });
  log.check();
}

TEST_P(Collectives, DoubleSumIsReproducible) {
  const int n = threads();
  ct::Team team(host(), team_options(n));
  Log log(n);
  constexpr int kRepeats = 30;
  constexpr int kValues = 4;
  // results[repeat][value set][tid]
  std::vector<std::array<std::array<double, 8>, kValues>> results(kRepeats);
  for (int rep = 0; rep < kRepeats; ++rep) {
    team.run([&](ct::ThreadCtx& ctx) {
      const int tid = ctx.tid();
      for (int it = 0; it < kValues; ++it) {
        auto v = [it](int t) { return dval(t, it); };
        const double all = ctx.allreduce(v(tid), op::sum{});
        results[static_cast<std::size_t>(rep)][static_cast<std::size_t>(it)]
               [static_cast<std::size_t>(tid)] = all;
        log.expect(ctx, same_bits(all, fold_all<double>(n, v, op::sum{})), at("allreduce", it));
        const double red = ctx.reduce(v(tid), op::sum{}, n - 1);
        if (tid == n - 1)
          log.expect(ctx, same_bits(red, fold_all<double>(n, v, op::sum{})), at("reduce", it));
        log.expect(ctx,
                   same_bits(ctx.inclusive_scan(v(tid), op::sum{}),
                             fold_inclusive<double>(tid, v, op::sum{})),
                   at("inclusive_scan", it));
        log.expect(ctx,
                   same_bits(ctx.exclusive_scan(v(tid), op::sum{}, 0.0),
                             fold_exclusive<double>(tid, v, op::sum{}, 0.0)),
                   at("exclusive_scan", it));
        log.expect(ctx, same_bits(ctx.broadcast(v(tid), n / 2), v(n / 2)), at("broadcast", it));
      }
    });
  }
  log.check();
  for (int rep = 1; rep < kRepeats; ++rep)
    for (int it = 0; it < kValues; ++it)
      for (int t = 0; t < n; ++t)
        EXPECT_TRUE(same_bits(results[static_cast<std::size_t>(rep)][static_cast<std::size_t>(it)]
                                     [static_cast<std::size_t>(t)],
                              results[0][static_cast<std::size_t>(it)][0]))
            << "repeat " << rep << " value set " << it << " tid " << t;
  // The mixed magnitudes make the order visible: a different order gives a different sum here.
  if (n >= 4) {
    auto v = [](int t) { return dval(t, 0); };
    double reversed = v(n - 1);
    for (int i = n - 2; i >= 0; --i) reversed = reversed + v(i);
    EXPECT_FALSE(same_bits(reversed, fold_all<double>(n, v, op::sum{})))
        << "test values do not detect the reduction order";
  }
}

TEST_P(Collectives, Uint64BitOps) {
  const int n = threads();
  ct::Team team(host(), team_options(n));
  Log log(n);
  team.run([&](ct::ThreadCtx& ctx) {
    const int tid = ctx.tid();
    for (int it = 0; it < 64; ++it) {
      auto v = [it](int t) { return uval(t, it); };
      log.expect(ctx,
                 ctx.allreduce(v(tid), op::bit_or{}) == fold_all<std::uint64_t>(n, v, op::bit_or{}),
                 at("allreduce or", it));
      log.expect(ctx,
                 ctx.allreduce(v(tid) | 1u, op::bit_and{}) ==
                     fold_all<std::uint64_t>(
                         n, [&](int t) { return v(t) | 1u; }, op::bit_and{}),
                 at("allreduce and", it));
      log.expect(ctx,
                 ctx.inclusive_scan(v(tid), op::bit_or{}) ==
                     fold_inclusive<std::uint64_t>(tid, v, op::bit_or{}),
                 at("inclusive_scan or", it));
      log.expect(ctx,
                 ctx.exclusive_scan(v(tid), op::bit_or{}, std::uint64_t{0}) ==
                     fold_exclusive<std::uint64_t>(tid, v, op::bit_or{}, std::uint64_t{0}),
                 at("exclusive_scan or", it));
      log.expect(ctx, ctx.broadcast(v(tid), (it + 1) % n) == v((it + 1) % n), at("broadcast", it));
    }
  });
  log.check();
}

TEST_P(Collectives, SmallStructCustomOp) {
  const int n = threads();
  ct::Team team(host(), team_options(n));
  Log log(n);
  team.run([&](ct::ThreadCtx& ctx) {
    const int tid = ctx.tid();
    const auto lambda = [](const Small& x, const Small& y) { return SmallOp{}(x, y); };
    for (int it = 0; it < 40; ++it) {
      auto v = [it](int t) { return sval(t, it); };
      log.expect(ctx, ctx.allreduce(v(tid), lambda) == fold_all<Small>(n, v, lambda),
                 at("allreduce", it));
      const Small r = ctx.reduce(v(tid), lambda, it % n);
      if (tid == it % n) log.expect(ctx, r == fold_all<Small>(n, v, lambda), at("reduce", it));
      log.expect(ctx, ctx.broadcast(v(tid), (it + 2) % n) == v((it + 2) % n), at("broadcast", it));
      log.expect(ctx, ctx.inclusive_scan(v(tid), lambda) == fold_inclusive<Small>(tid, v, lambda),
                 at("inclusive_scan", it));
      const Small id{1, -0.5};
      log.expect(
          ctx, ctx.exclusive_scan(v(tid), lambda, id) == fold_exclusive<Small>(tid, v, lambda, id),
          at("exclusive_scan", it));
    }
  });
  log.check();
}

TEST_P(Collectives, LargeStructPointerPath) {
  const int n = threads();
  ct::Team team(host(), team_options(n));
  Log log(n);
  team.run([&](ct::ThreadCtx& ctx) {
    const int tid = ctx.tid();
    const BigOp o;
    for (int it = 0; it < 30; ++it) {
      auto v = [it](int t) { return bval(t, it); };
      log.expect(ctx, ctx.allreduce(v(tid), o) == fold_all<Big>(n, v, o), at("allreduce", it));
      const Big mine = v(tid);
      const Big r = ctx.reduce(mine, o, (it + 1) % n);
      if (tid == (it + 1) % n)
        log.expect(ctx, r == fold_all<Big>(n, v, o), at("reduce", it));
      else
        log.expect(ctx, r == mine, at("reduce off root", it));
      log.expect(ctx, ctx.broadcast(mine, it % n) == v(it % n), at("broadcast", it));
      log.expect(ctx, ctx.inclusive_scan(mine, o) == fold_inclusive<Big>(tid, v, o),
                 at("inclusive_scan", it));
      Big id;
      id.fill(2.0);
      log.expect(ctx, ctx.exclusive_scan(mine, o, id) == fold_exclusive<Big>(tid, v, o, id),
                 at("exclusive_scan", it));
      // Sizes right at the slot boundary, both sides.
      auto e128 = [it](int t) { return eval<Edge128>(t, it); };
      auto e132 = [it](int t) { return eval<Edge132>(t, it); };
      log.expect(ctx,
                 same(ctx.allreduce(e128(tid), EdgeOp{}), fold_all<Edge128>(n, e128, EdgeOp{})),
                 at("allreduce 128 bytes", it));
      log.expect(ctx,
                 same(ctx.allreduce(e132(tid), EdgeOp{}), fold_all<Edge132>(n, e132, EdgeOp{})),
                 at("allreduce 132 bytes", it));
      log.expect(ctx,
                 same(ctx.exclusive_scan(e132(tid), EdgeOp{}, e132(0)),
                      fold_exclusive<Edge132>(tid, e132, EdgeOp{}, e132(0))),
                 at("exclusive_scan 132 bytes", it));
      log.expect(ctx, same(ctx.broadcast(e128(tid), n - 1), e128(n - 1)),
                 at("broadcast 128 bytes", it));
    }
  });
  log.check();
}

// Many different collectives back to back, over every barrier algorithm: a collective that
// reuses its buffer too early shows up as a wrong result in a later one.
#if defined(__SANITIZE_THREAD__)
constexpr int kMixedIterations = 64;  // ThreadSanitizer: interleavings matter, not volume
#else
constexpr int kMixedIterations = 500;
#endif

TEST_P(Collectives, BackToBackMixedSequence) {
  const int n = threads();
  for (auto algorithm : {ct::BarrierAlgorithm::central, ct::BarrierAlgorithm::dissemination,
                         ct::BarrierAlgorithm::tree}) {
    ct::Team team(host(), team_options(n, algorithm));
    Log log(n);
    team.run([&](ct::ThreadCtx& ctx) {
      const int tid = ctx.tid();
      std::vector<long> arr(7);
      for (int it = 0; it < kMixedIterations; ++it) {
        auto iv = [it](int t) { return ival(t, it); };
        switch (it % 8) {
          case 0:
            log.expect(ctx,
                       ctx.allreduce(iv(tid), IntHorner{}) == fold_all<int>(n, iv, IntHorner{}),
                       at("allreduce int", it));
            break;
          case 1:
            log.expect(ctx, ctx.broadcast(iv(tid), it % n) == iv(it % n), at("broadcast int", it));
            break;
          case 2: {
            auto uv = [it](int t) { return uval(t, it); };
            log.expect(ctx,
                       ctx.inclusive_scan(uv(tid), op::bit_or{}) ==
                           fold_inclusive<std::uint64_t>(tid, uv, op::bit_or{}),
                       at("inclusive_scan u64", it));
            break;
          }
          case 3: {
            auto sv = [it](int t) { return sval(t, it); };
            const Small id{0, 0.0};
            log.expect(ctx,
                       ctx.exclusive_scan(sv(tid), SmallOp{}, id) ==
                           fold_exclusive<Small>(tid, sv, SmallOp{}, id),
                       at("exclusive_scan small", it));
            break;
          }
          case 4: {
            auto bv = [it](int t) { return bval(t, it); };
            const Big r = ctx.reduce(bv(tid), BigOp{}, n - 1);
            if (tid == n - 1)
              log.expect(ctx, r == fold_all<Big>(n, bv, BigOp{}), at("reduce big", it));
            break;
          }
          case 5: {
            for (std::size_t j = 0; j < arr.size(); ++j)
              arr[j] = ival(tid, it + static_cast<int>(j));
            ctx.allreduce(std::span<long>(arr), op::sum{});
            bool ok = true;
            for (std::size_t j = 0; j < arr.size(); ++j) {
              long expect = 0;
              for (int t = 0; t < n; ++t) expect += ival(t, it + static_cast<int>(j));
              ok = ok && arr[j] == expect;
            }
            log.expect(ctx, ok, at("span allreduce", it));
            break;
          }
          case 6: {
            auto dv = [it](int t) { return dval(t, it); };
            log.expect(
                ctx,
                same_bits(ctx.allreduce(dv(tid), op::sum{}), fold_all<double>(n, dv, op::sum{})),
                at("allreduce double", it));
            break;
          }
          case 7: {
            auto bv = [it](int t) { return bval(t, it); };
            log.expect(ctx, ctx.allreduce(bv(tid), BigOp{}) == fold_all<Big>(n, bv, BigOp{}),
                       at("allreduce big", it));
            break;
          }
        }
        // Every eighth step, a collective right after a plain barrier.
        if (it % 8 == 7) ctx.barrier();
        // Skew: some threads fall behind now and then, so fast threads run ahead into the next
        // collective while slow ones still read the previous one.
        if ((it * 7 + tid * 3) % 11 == 0)
          for (int k = 0; k < 20; ++k) std::this_thread::yield();
      }
    });
    log.check();
  }
}

// Collectives from consecutive runs of one team: state carried across run() must stay in step.
TEST_P(Collectives, AcrossRuns) {
  const int n = threads();
  ct::Team team(host(), team_options(n));
  Log log(n);
  for (int run = 0; run < 60; ++run) {
    team.run([&](ct::ThreadCtx& ctx) {
      auto v = [run](int t) { return ival(t, run); };
      // An odd number of slot collectives per run flips the parity between runs.
      log.expect(ctx, ctx.allreduce(v(ctx.tid()), IntHorner{}) == fold_all<int>(n, v, IntHorner{}),
                 at("allreduce", run));
      if (run % 3 == 0)
        log.expect(ctx, ctx.broadcast(v(ctx.tid()), run % n) == v(run % n), at("broadcast", run));
    });
  }
  log.check();
}

// ---- span versions ----------------------------------------------------------------------------

namespace {

double span_dval(int tid, std::size_t j) {
  return dval(tid, static_cast<int>(j % 17)) + static_cast<double>(j);
}
long span_lval(int tid, std::size_t j) {
  return static_cast<long>((tid * 31 + static_cast<int>(j) * 7) % 101) - 50;
}
struct LongHorner {
  long operator()(long a, long b) const { return a * 3 + b; }
};

}  // namespace

TEST_P(Collectives, SpanAllreduce) {
  const int n = threads();
  ct::Team team(host(), team_options(n));
  Log log(n);
  team.run([&](ct::ThreadCtx& ctx) {
    const int tid = ctx.tid();
    for (int rep = 0; rep < 3; ++rep) {
      for (std::size_t size :
           {std::size_t{0}, std::size_t{1}, std::size_t{5}, std::size_t{1000}, std::size_t{3}}) {
        std::vector<double> d(size);
        std::vector<long> l(size);
        for (std::size_t j = 0; j < size; ++j) {
          d[j] = span_dval(tid, j);
          l[j] = span_lval(tid, j);
        }
        ctx.allreduce(std::span<double>(d), op::sum{});
        ctx.allreduce(std::span<long>(l), LongHorner{});
        bool dok = true, lok = true;
        for (std::size_t j = 0; j < size; ++j) {
          dok = dok && same_bits(d[j], fold_all<double>(
                                           n, [j](int t) { return span_dval(t, j); }, op::sum{}));
          lok = lok && l[j] == fold_all<long>(
                                   n, [j](int t) { return span_lval(t, j); }, LongHorner{});
        }
        log.expect(ctx, dok, "double sum, size " + std::to_string(size));
        log.expect(ctx, lok, "ordered long, size " + std::to_string(size));
      }
    }
  });
  log.check();
}

TEST_P(Collectives, SpanExclusiveScan) {
  const int n = threads();
  ct::Team team(host(), team_options(n));
  Log log(n);
  team.run([&](ct::ThreadCtx& ctx) {
    const int tid = ctx.tid();
    for (int rep = 0; rep < 3; ++rep) {
      for (std::size_t size :
           {std::size_t{0}, std::size_t{1}, std::size_t{5}, std::size_t{1000}, std::size_t{2}}) {
        std::vector<double> d(size);
        std::vector<long> l(size);
        for (std::size_t j = 0; j < size; ++j) {
          d[j] = span_dval(tid, j);
          l[j] = span_lval(tid, j);
        }
        ctx.exclusive_scan(std::span<double>(d), op::sum{}, 0.0);
        ctx.exclusive_scan(std::span<long>(l), LongHorner{}, 7L);
        bool dok = true, lok = true;
        for (std::size_t j = 0; j < size; ++j) {
          dok = dok &&
                same_bits(d[j], fold_exclusive<double>(
                                    tid, [j](int t) { return span_dval(t, j); }, op::sum{}, 0.0));
          lok = lok && l[j] == fold_exclusive<long>(
                                   tid, [j](int t) { return span_lval(t, j); }, LongHorner{}, 7L);
        }
        log.expect(ctx, dok, "double sum, size " + std::to_string(size));
        log.expect(ctx, lok, "ordered long, size " + std::to_string(size));
      }
    }
  });
  log.check();
}

// ---- blocks -----------------------------------------------------------------------------------

TEST_P(Collectives, ThreadBlocksPartitionTheRange) {
  const int n = threads();
  ct::Team team(host(), team_options(n));
  const std::vector<std::size_t> sizes = {0, 1, 2, 3, 6, 7, 8, 13, 100, 1001};
  // ranges[size index][tid]
  std::vector<std::vector<std::pair<std::size_t, std::size_t>>> ranges(
      sizes.size(), std::vector<std::pair<std::size_t, std::size_t>>(static_cast<std::size_t>(n)));
  team.run([&](ct::ThreadCtx& ctx) {
    for (std::size_t s = 0; s < sizes.size(); ++s)
      ranges[s][static_cast<std::size_t>(ctx.tid())] = ctx.block(sizes[s]);
  });
  for (std::size_t s = 0; s < sizes.size(); ++s) {
    std::size_t next = 0;
    for (int t = 0; t < n; ++t) {
      const auto [lo, hi] = ranges[s][static_cast<std::size_t>(t)];
      EXPECT_EQ(lo, next) << "size " << sizes[s] << " tid " << t;
      EXPECT_LE(lo, hi);
      EXPECT_EQ(ranges[s][static_cast<std::size_t>(t)], ct::block_range(sizes[s], n, t));
      next = hi;
    }
    EXPECT_EQ(next, sizes[s]);
  }
}

INSTANTIATE_TEST_SUITE_P(TeamSizes, Collectives, testing::Values(1, 2, 3, 4, 7),
                         [](const testing::TestParamInfo<int>& info) {
                           return std::to_string(info.param) + "threads";
                         });

TEST(Block, RangesPartitionEvenly) {
  for (std::size_t n : {0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 100, 1000, 1001, 1023}) {
    for (int parts : {1, 2, 3, 4, 5, 7, 8, 16, 33}) {
      std::size_t next = 0, smallest = n + 1, largest = 0, previous = n + 1;
      for (int i = 0; i < parts; ++i) {
        const auto [lo, hi] = ct::block_range(n, parts, i);
        ASSERT_EQ(lo, next) << "n " << n << " parts " << parts << " part " << i;
        ASSERT_LE(lo, hi);
        const std::size_t size = hi - lo;
        EXPECT_LE(size, previous) << "larger parts first: n " << n << " parts " << parts;
        previous = size;
        smallest = std::min(smallest, size);
        largest = std::max(largest, size);
        next = hi;
      }
      EXPECT_EQ(next, n) << "n " << n << " parts " << parts;
      EXPECT_LE(largest - smallest, 1u) << "n " << n << " parts " << parts;
    }
  }
}

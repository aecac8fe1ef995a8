// halo_overlap: how much of a halo exchange hides behind interior work with
// DistArray::begin_exchange(). Every rank of a job (compas-run -n P halo_overlap ROWS COLS STEPS
// REPEATS [BLOCK]) sweeps a 5-point Jacobi step over a ROWS x COLS array cut by rows, five ways,
// alternating within each repeat (few long rows: the exchange weighs as much as the interior):
//   exchange    exchange_halos() alone
//   interior    the rows that need no halo, alone
//   sequential  exchange_halos(), then the whole sweep
//   overlapped  begin_exchange(), the interior, wait(), then the two edge rows
//   tested      as overlapped, the interior in blocks of BLOCK rows (default 8) with
//               HaloExchange::test() after each
// Rank 0 prints the medians (ms per step) and hidden = (sequential - overlapped) / exchange (and
// the same for tested): 1 when the exchange is all hidden, 0 when none of it is. Not a test: a
// measurement.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "compas/compas.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using Index = compas::index;

void sweep_rows(compas::DistArray<double, 2>& u, compas::DistArray<double, 2>& v, Index lo,
                Index hi) {
  const compas::Range cols = u.cols();
#pragma omp parallel for
  for (Index i = lo; i < hi; ++i)
    for (Index j = std::max(cols.lo, Index{1}); j < std::min(cols.hi, u.domain().cols.hi - 1); ++j)
      v(i, j) = 0.25 * (u(i - 1, j) + u(i + 1, j) + u(i, j - 1) + u(i, j + 1));
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  compas::Runtime rt(argc, argv);
  const Index m = argc > 1 ? std::atol(argv[1]) : 4096, n = argc > 2 ? std::atol(argv[2]) : 4096;
  const int steps = argc > 3 ? std::atoi(argv[3]) : 20;
  const int repeats = argc > 4 ? std::atoi(argv[4]) : 7;
  const Index block = argc > 5 ? std::atol(argv[5]) : 8;
  if (m < 3 * rt.processes() || n < 3 || steps < 1 || repeats < 1 || block < 1) {
    if (rt.process() == 0)
      std::fprintf(stderr,
                   "halo_overlap: ROWS %ld COLS %ld STEPS %d REPEATS %d BLOCK %ld are not "
                   "allowed: at least 3 rows per process, 3 columns, 1 step, 1 repeat and a "
                   "block of 1 row\n",
                   static_cast<long>(m), static_cast<long>(n), steps, repeats,
                   static_cast<long>(block));
    return 2;
  }
  compas::DistArray<double, 2> u(rt, m, n), v = u.like();
  const compas::Range rows = u.rows();
  for (Index i = rows.lo; i < rows.hi; ++i)
    for (Index j = 0; j < n; ++j) u(i, j) = static_cast<double>((i * 31 + j) % 97);
  const Index first = std::max(rows.lo, Index{1}), last = std::min(rows.hi, m - 1);
  auto interior = [&] { sweep_rows(u, v, first + 1, last - 1); };
  auto edges = [&] {
    sweep_rows(u, v, first, first + 1);
    sweep_rows(u, v, last - 1, last);
  };
  auto timed = [&](auto&& body) {
    (void)rt.allreduce(0, compas::op::sum{});  // every process starts together
    const auto t0 = Clock::now();
    for (int s = 0; s < steps; ++s) body();
    (void)rt.allreduce(0, compas::op::sum{});
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count() / steps;
  };
  auto interior_tested = [&](compas::HaloExchange& x) {
    for (Index b = first + 1; b < last - 1; b += block) {
      sweep_rows(u, v, b, std::min(b + block, last - 1));
      (void)x.test();
    }
  };
  std::vector<double> ex, in, seq, ovl, tst;
  for (int r = 0; r < repeats; ++r) {
    ex.push_back(timed([&] { u.exchange_halos(); }));
    in.push_back(timed(interior));
    seq.push_back(timed([&] {
      u.exchange_halos();
      interior();
      edges();
    }));
    ovl.push_back(timed([&] {
      auto x = u.begin_exchange();
      interior();
      x.wait();
      edges();
    }));
    tst.push_back(timed([&] {
      auto x = u.begin_exchange();
      interior_tested(x);
      x.wait();
      edges();
    }));
  }
  if (rt.process() == 0) {
    const double e = median(ex), s = median(seq), o = median(ovl), t = median(tst);
    std::printf(
        "halo_overlap: %d processes, %ld x %ld, %d steps x %d repeats, test() every %ld rows, "
        "medians in ms per step\n"
        "  exchange %.4f  interior %.4f  sequential %.4f  overlapped %.4f  hidden %.2f  tested "
        "%.4f  hidden %.2f\n",
        rt.processes(), static_cast<long>(m), static_cast<long>(n), steps, repeats,
        static_cast<long>(block), e, median(in), s, o, e > 0 ? (s - o) / e : 0.0, t,
        e > 0 ? (s - t) / e : 0.0);
  }
  return 0;
}

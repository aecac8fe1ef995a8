// capi_halo: what the C API adds to a halo exchange. Under a launcher (compas-run -n 2 capi_halo
// ROWS COLS EXCHANGES REPEATS) every rank makes a ROWS x COLS array of doubles, halo 1, rows over
// the processes, twice: through the C API (compas_array_create, compas_array_exchange) and as a
// compas::DistArray<double, 2> on the same Runtime (the one behind the C API's handle). Each
// repeat times EXCHANGES exchanges of one, then of the other (alternating, so that a drift of the
// machine weighs on both); rank 0 prints the medians in microseconds per exchange and the ratio
// C / C++. Not a test: a measurement.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "../src/handles.hpp"  // the Runtime behind a compas_runtime
#include "compas/base/statistics.hpp"
#include "compas/compas.h"
#include "compas/port/dist_array.hpp"

namespace {

using Clock = std::chrono::steady_clock;

template <class F>
double us_per_call(compas::Runtime& rt, int calls, F f) {
  compas::barrier(rt);
  const auto t0 = Clock::now();
  for (int k = 0; k < calls; ++k) f();
  const double s = std::chrono::duration<double>(Clock::now() - t0).count();
  return rt.allreduce(s, compas::op::max{}) / calls * 1e6;  // the slowest process's
}

void check(int code) {
  if (code != COMPAS_OK) {
    std::fprintf(stderr, "capi_halo: %s\n", compas_last_error());
    std::exit(1);
  }
}

}  // namespace

int main(int argc, char** argv) {
  compas_runtime* h = nullptr;
  check(compas_init(&argc, &argv, &h));
  compas::Runtime& rt = *h->runtime;
  const long rows = argc > 1 ? std::atol(argv[1]) : 1024,
             cols = argc > 2 ? std::atol(argv[2]) : 1024;
  const int calls = argc > 3 ? std::atoi(argv[3]) : 200,
            repeats = argc > 4 ? std::atoi(argv[4]) : 5;
  if (rows < 2 * rt.processes() || cols < 1 || calls < 1 || repeats < 1) {
    std::fprintf(stderr,
                 "capi_halo: ROWS %ld COLS %ld EXCHANGES %d REPEATS %d are not allowed: at "
                 "least 2 rows per process, 1 column, 1 exchange and 1 repeat\n",
                 rows, cols, calls, repeats);
    return 2;
  }
  {  // the C++ array goes before the Runtime does
    const int64_t lo[2] = {0, 0}, hi[2] = {rows, cols};
    compas_array* a = nullptr;
    check(compas_array_create(h, COMPAS_DOUBLE, 2, lo, hi, nullptr, &a));
    compas::DistArray<double, 2> b(rt, rows, cols);
    std::vector<double> c_api, cxx;
    for (int r = 0; r < repeats; ++r) {
      c_api.push_back(us_per_call(rt, calls, [&] { check(compas_array_exchange(a)); }));
      cxx.push_back(us_per_call(rt, calls, [&] { b.exchange_halos(); }));
    }
    const double mc = compas::base::median(c_api), mx = compas::base::median(cxx);
    if (rt.process() == 0)
      std::printf(
          "capi_halo: %d processes, %ld x %ld doubles, halo 1, rows cut, median of %d x %d "
          "exchanges: C API %.2f us, C++ %.2f us per exchange, C / C++ %.3f\n",
          rt.processes(), rows, cols, repeats, calls, mc, mx, mc / mx);
  }
  check(compas_finalize(&h));
  return 0;
}

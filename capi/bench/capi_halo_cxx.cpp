// The C++ half of capi_halo_f (capi_halo.f90): a compas::DistArray<double, 2> of ROWS x COLS on
// the Runtime behind the Fortran module's runtime handle, halo 1, rows cut, and its exchanges
// timed as capi_halo.cpp times them. Not a test: a measurement.
#include <chrono>
#include <memory>

#include "../src/handles.hpp"  // the Runtime behind a compas_runtime
#include "compas/port/dist_array.hpp"

namespace {
std::unique_ptr<compas::DistArray<double, 2>> g_array;
compas::Runtime* g_rt = nullptr;
}  // namespace

extern "C" void capi_halo_cxx_create(compas_runtime* h, long rows, long cols) {
  g_rt = h->runtime.get();
  g_array = std::make_unique<compas::DistArray<double, 2>>(*g_rt, rows, cols);
}

// Microseconds per exchange over `calls` exchanges, the slowest process's.
extern "C" double capi_halo_cxx_time(int calls) {
  compas::barrier(*g_rt);
  const auto t0 = std::chrono::steady_clock::now();
  for (int k = 0; k < calls; ++k) g_array->exchange_halos();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return g_rt->allreduce(s, compas::op::max{}) / calls * 1e6;
}

extern "C" void capi_halo_cxx_destroy() {
  g_array.reset();
}

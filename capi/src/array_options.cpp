// compas_array_options_init and the options' translation into DistOptions / DistOptions3.
#include <string>

#include "array_impl.hpp"

namespace compas::capi {
namespace {

std::string list(const std::int64_t* v, int n) {
  std::string s = "{";
  for (int d = 0; d < n; ++d) s += (d ? ", " : "") + std::to_string(v[d]);
  return s + "}";
}

std::string list(const int* v, int n) {
  const std::int64_t w[3] = {v[0], n > 1 ? v[1] : 0, n > 2 ? v[2] : 0};
  return list(w, n);
}

comm::Fill fill_of(int fill) {
  if (fill == COMPAS_FILL_ZERO) return comm::Fill::zero;
  if (fill == COMPAS_FILL_NONE) return comm::Fill::none;
  throw Error(COMPAS_ERR_ARG,
              "fill " + std::to_string(fill) + ": COMPAS_FILL_ZERO (0) or COMPAS_FILL_NONE (1)");
}

void check_common(const compas_array_options& o, int dims) {
  for (int d = 0; d < dims; ++d) {
    if (o.halo[d] < 0)
      throw Error(COMPAS_ERR_ARG, "halo " + list(o.halo, dims) + ": a halo width is 0 or more");
    if (o.periodic[d] != 0 && o.periodic[d] != 1)
      throw Error(COMPAS_ERR_ARG, "periodic " + list(o.periodic, dims) + ": each 0 or 1");
    if (o.grid[d] < 0)
      throw Error(COMPAS_ERR_ARG, "grid " + list(o.grid, dims) +
                                      ": processes per dimension, "
                                      "0 (chosen) or more");
  }
}

}  // namespace

DistOptions options_2d(const compas_array_options& o, int dims, int processes) {
  check_common(o, dims);
  if (dims == 2 && (o.halo[0] != o.halo[1] || o.periodic[0] != o.periodic[1]))
    throw Error(COMPAS_ERR_ARG, "halo " + list(o.halo, 2) + ", periodic " + list(o.periodic, 2) +
                                    ": a 2-D array takes one width and one periodic flag for "
                                    "rows and columns (a 3-D array takes each)");
  DistOptions d;
  d.halo = o.halo[0];
  d.periodic = o.periodic[0] != 0;
  d.fill = fill_of(o.fill);
  if (dims == 1 && o.grid[0] != 0 && o.grid[0] != processes)
    throw Error(COMPAS_ERR_ARG, "grid {" + std::to_string(o.grid[0]) + "}: a 1-D array is cut " +
                                    "over all " + std::to_string(processes) + " processes (0 or " +
                                    std::to_string(processes) + ")");
  if (dims == 2) {
    if (o.decomposition == COMPAS_DECOMP_GRID) {
      d.decomposition = Decomposition::grid;
      d.grid = {o.grid[0], o.grid[1]};
    } else if (o.decomposition != COMPAS_DECOMP_ROWS) {
      throw Error(COMPAS_ERR_ARG, "decomposition " + std::to_string(o.decomposition) +
                                      ": COMPAS_DECOMP_ROWS (0) or COMPAS_DECOMP_GRID (1)");
    } else if (o.grid[0] != 0 || o.grid[1] != 0) {
      throw Error(COMPAS_ERR_ARG,
                  "grid " + list(o.grid, 2) +
                      " is for COMPAS_DECOMP_GRID; COMPAS_DECOMP_ROWS takes {0, 0}");
    }
  }
  return d;
}

DistOptions3 options_3d(const compas_array_options& o) {
  check_common(o, 3);
  DistOptions3 d;
  for (int k = 0; k < 3; ++k) {
    d.halo[k] = o.halo[k];
    d.periodic[k] = o.periodic[k] != 0;
    d.grid[k] = o.grid[k];
  }
  d.fill = fill_of(o.fill);
  return d;
}

Layout layout_of(int layout) {
  if (layout == COMPAS_LAYOUT_PADDED) return Layout::padded;
  if (layout == COMPAS_LAYOUT_CONTIGUOUS) return Layout::contiguous;
  throw Error(COMPAS_ERR_ARG, "layout " + std::to_string(layout) +
                                  ": COMPAS_LAYOUT_PADDED (0) or COMPAS_LAYOUT_CONTIGUOUS (1)");
}

}  // namespace compas::capi

extern "C" int compas_array_options_init(compas_array_options* options) {
  return compas::capi::guard("compas_array_options_init", [&] {
    compas::capi::need(options, "options");
    *options =
        compas_array_options{{1, 1, 1}, {0, 0, 0}, {0, 0, 0}, COMPAS_DECOMP_ROWS, COMPAS_FILL_ZERO};
  });
}

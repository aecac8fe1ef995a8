// compas_block_of: block `part` of a range cut in `parts` (C++'s compas::block_of), the split
// compas gives every array's range, for a program's own ranges (a CSR's rows, a list of planes).
#include <cstdint>
#include <string>

#include "compas/runtime/range.hpp"
#include "errors.hpp"

using namespace compas::capi;

namespace {

std::string range_text(int64_t lo, int64_t hi) {
  return "[" + std::to_string(lo) + ", " + std::to_string(hi) + ")";
}

}  // namespace

extern "C" int compas_block_of(int64_t lo, int64_t hi, int64_t parts, int64_t part,
                               int64_t* block_lo, int64_t* block_hi) {
  return guard("compas_block_of", [&] {
    need(block_lo, "block_lo");
    need(block_hi, "block_hi");
    if (hi < lo)
      throw Error(COMPAS_ERR_ARG, "range " + range_text(lo, hi) + ": hi >= lo is allowed");
    if (parts < 1)
      throw Error(COMPAS_ERR_ARG, "parts " + std::to_string(parts) + ": 1 or more are allowed");
    if (part < 0 || part >= parts)
      throw Error(COMPAS_ERR_ARG, "part " + std::to_string(part) + " of " + std::to_string(parts) +
                                      ": 0 to " + std::to_string(parts - 1) + " is allowed");
    const compas::Range b = compas::block_of(compas::Range{lo, hi}, parts, part);
    *block_lo = b.lo;
    *block_hi = b.hi;
  });
}

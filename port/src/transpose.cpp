// compas::transpose's untyped core (transpose.hpp): the checks, the two meetings, and every
// process's block of a, in place where it is mapped here, else fetched row by row.
#include "compas/port/transpose.hpp"

#include <stdexcept>
#include <string>
#include <vector>

#include "compas/comm/window.hpp"

namespace compas::detail {

namespace {

std::string text(const Range2& d) {
  return "[" + std::to_string(d.rows.lo) + ", " + std::to_string(d.rows.hi) + ") x [" +
         std::to_string(d.cols.lo) + ", " + std::to_string(d.cols.hi) + ")";
}

// The array's global domain when every process holds whole rows of it (cut by rows), else
// std::invalid_argument naming `name` and the process whose part is not whole rows.
Range2 row_cut_domain(const Halo& h, int processes, const char* name) {
  Range2 d = h.part_of(0);
  for (int r = 1; r < processes; ++r) {
    const Range2 part = h.part_of(r);
    if (part.cols.lo != d.cols.lo || part.cols.hi != d.cols.hi)
      throw std::invalid_argument(
          std::string("compas::transpose: ") + name + " is not cut by rows (process " +
          std::to_string(r) + " holds columns [" + std::to_string(part.cols.lo) + ", " +
          std::to_string(part.cols.hi) + ")): make it with Decomposition::rows or a {P, 1} grid");
    d.rows.hi = part.rows.hi;
  }
  return d;
}

}  // namespace

TransposeCore::TransposeCore(DistBase& a, DistBase& b, std::size_t elem_bytes)
    : a_(&a), b_(&b), elem_(elem_bytes) {
  Halo& ha = DistAccess::halo(a);
  ha.check_funneled("compas::transpose");
  if (&a == &b || &ha == &DistAccess::halo(b))
    throw std::invalid_argument("compas::transpose: a and b are one array; b needs its own");
  const int p = DistAccess::runtime(a).processes();
  const Range2 da = row_cut_domain(ha, p, "a"), db = row_cut_domain(DistAccess::halo(b), p, "b");
  const Range2 want{da.cols, da.rows};
  if (db.rows.lo != want.rows.lo || db.rows.hi != want.rows.hi || db.cols.lo != want.cols.lo ||
      db.cols.hi != want.cols.hi)
    throw std::invalid_argument("compas::transpose: a is " + text(da) + ", b is " + text(db) +
                                ": b must be " + text(want) + " (a's transpose)");
}

void TransposeCore::run(Apply apply, void* ctx) {
  Runtime& rt = DistAccess::runtime(*a_);
  Halo& ha = DistAccess::halo(*a_);
  comm::WindowBytes& win = ha.window();
  const int p = rt.processes(), me = rt.process();
  const Range mine = DistAccess::halo(*b_).part_of(me).rows;  // the columns of a wanted here
  const index pitch = ha.pitch(), hr = ha.halo_rows(), hc = ha.halo_cols();
  const auto width = static_cast<std::size_t>(mine.size());
  std::vector<std::byte> buffer;
  std::vector<comm::Request> gets;
  compas::barrier(rt);  // every process's a is written
  for (int k = 0; k < p && width > 0; ++k) {
    const int from = (me + k) % p;
    const Range2 part = ha.part_of(from);
    if (part.rows.size() == 0) continue;
    auto offset = [&](index j) {  // of a(j, mine.lo) in `from`'s window, in bytes
      return ha.origin_bytes(from) + static_cast<std::size_t>((j - part.rows.lo + hr) * pitch +
                                                              (mine.lo - part.cols.lo + hc)) *
                                         elem_;
    };
    TransposeBlock block{nullptr, pitch, part.rows, mine};
    if (std::byte* mapped = win.peer_data(from)) {
      block.data = mapped + offset(part.rows.lo);
      // Updated in the same tiles only at one process (all of a: one sweep instead of two, PRK's
      // transpose 1x2 +7%); at two, the fused half ran 4% slower than a separate pass (2x1).
      block.own = from == me && p == 1;
    } else {
      buffer.resize(static_cast<std::size_t>(part.rows.size()) * width * elem_);
      gets.clear();
      for (index j = part.rows.lo; j < part.rows.hi; ++j)
        gets.push_back(
            win.get_nb(from, offset(j),
                       buffer.data() + static_cast<std::size_t>(j - part.rows.lo) * width * elem_,
                       width * elem_));
      for (auto& g : gets) g.wait();
      block = {buffer.data(), static_cast<index>(width), part.rows, mine};
    }
    apply(ctx, block);
  }
  compas::barrier(rt);  // nobody writes a while another process may still read it
}

}  // namespace compas::detail

// compas::redistribute (redistribute3.hpp): every owned cell of one 3-D array copied into the
// process owning it in another of the same domain, over any two partitions and groups.
#include <cstring>
#include <string>
#include <vector>

#include "compas/port/redistribute3.hpp"
#include "compas/runtime/collectives.hpp"
#include "dist_agree.hpp"

namespace compas::detail {

namespace {

// The first byte of cell (i, j, k) of this process's part of `h`.
std::byte* cell_at(Halo3& h, index i, index j, index k) {
  const Range3 own = h.owned();
  const std::array<index, 3> halo = h.shape().options.halo;
  const index at = (i - own.planes.lo + halo[0]) * h.plane() +
                   (j - own.rows.lo + halo[1]) * h.pitch() + (k - own.cols.lo + halo[2]);
  return h.origin() + static_cast<std::size_t>(at) * h.shape().elem_bytes;
}

// Row by row over the cells of `box` (inside this process's part of `h`): f(first cell, bytes).
template <class F>
void rows_of(Halo3& h, const Range3& box, F f) {
  if (box.empty()) return;
  const std::size_t row = static_cast<std::size_t>(box.cols.size()) * h.shape().elem_bytes;
  for (index i = box.planes.lo; i < box.planes.hi; ++i)
    for (index j = box.rows.lo; j < box.rows.hi; ++j) f(cell_at(h, i, j, box.cols.lo), row);
}

// The cells of `box` (inside this process's parts of both) copied from `from` into `to`, row by
// row, with no buffer between.
void copy_own(Halo3& from, Halo3& to, const Range3& box) {
  if (box.empty()) return;
  const std::size_t row = static_cast<std::size_t>(box.cols.size()) * from.shape().elem_bytes;
  for (index i = box.planes.lo; i < box.planes.hi; ++i)
    for (index j = box.rows.lo; j < box.rows.hi; ++j)
      std::memcpy(cell_at(to, i, j, box.cols.lo), cell_at(from, i, j, box.cols.lo), row);
}

std::string domain_text(const Range3& d) {
  return range_text(d.planes) + " x " + range_text(d.rows) + " x " + range_text(d.cols);
}

std::string name(const Halo3& h) {
  return "DistArray #" + std::to_string(h.number());
}

// What is wrong on this process alone ("" when nothing): short, it rides on the agreement.
std::string pending_problem(const Halo3& from, const Halo3& to) {
  for (const Halo3* h : {&from, &to})
    if (h->pending()) return name(*h) + " has a halo exchange pending: wait() for it first";
  return "";
}

// Every process agrees that it copies the same array into the same array, none with an exchange
// pending: else the same CollectiveError everywhere, before anything moves. Then the arrays are
// the same everywhere, and so is the verdict on their domains.
void agree_on_transfer(Runtime& rt, const Halo3& from, const Halo3& to) {
  const std::size_t elem = from.shape().elem_bytes;
  const std::type_info* type = from.shape().elem_type;
  agree(Processes(rt), {CollectiveCall::redist_from, elem, 0, -1, true, {}, from.number(), type});
  agree(Processes(rt), {CollectiveCall::redist_to, elem, 0, -1, true, pending_problem(from, to),
                        to.number(), type});
  if (from.shape().domain != to.shape().domain)
    throw CollectiveError("compas::redistribute: " + name(from) + " covers " +
                          domain_text(from.shape().domain) + ", " + name(to) + " " +
                          domain_text(to.shape().domain) +
                          ": redistribute copies between arrays of one domain");
}

}  // namespace

void redistribute3(Halo3& from, Halo3& to) {
  Runtime& rt = from.runtime();
  rt.check_funneled("compas::redistribute", "from the thread that made the Runtime, outside run()");
  agree_on_transfer(rt, from, to);
  const int P = rt.processes(), me = rt.process();
  const std::size_t elem = from.shape().elem_bytes;
  copy_own(from, to, intersect(from.owned(), to.owned()));  // this process's own cells: no buffer
  if (P == 1) return;
  std::vector<std::size_t> send_counts(static_cast<std::size_t>(P)),
      recv_counts(static_cast<std::size_t>(P));
  std::vector<std::byte> send, recv;
  for (int q = 0; q < P; ++q) {
    if (q == me) continue;
    const Range3 box = intersect(from.owned(), to.part_of(q));
    send_counts[static_cast<std::size_t>(q)] = static_cast<std::size_t>(box.size()) * elem;
    rows_of(from, box,
            [&](std::byte* cell, std::size_t n) { send.insert(send.end(), cell, cell + n); });
    recv_counts[static_cast<std::size_t>(q)] =
        static_cast<std::size_t>(intersect(from.part_of(q), to.owned()).size()) * elem;
  }
  std::size_t total = 0;
  for (std::size_t c : recv_counts) total += c;
  recv.resize(total);
  Processes(rt).collectives().alltoallv(std::span<const std::byte>(send), send_counts,
                                        std::span<std::byte>(recv), recv_counts);
  const std::byte* in = recv.data();
  for (int p = 0; p < P; ++p)
    if (p != me)
      rows_of(to, intersect(from.part_of(p), to.owned()), [&](std::byte* cell, std::size_t n) {
        std::memcpy(cell, in, n);
        in += n;
      });
}

}  // namespace compas::detail

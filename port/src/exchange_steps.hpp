// The steps of a halo exchange as the 2-D and the 3-D machinery (dist_halo.cpp, dist_halo3.cpp)
// both run them: one pending exchange at a time, numbered by `epoch` (whose parity picks the
// receive areas). M has `epoch`, `pending`, `win` (the window), `nb` (the neighbour on each side,
// or -1), `sent` (the sends' Requests, one per side), exchanges(side), post() (every edge on its
// way), finish() (every halo in place, every send complete), and for the reverse post_halos()
// (every halo block to its owner) and add_arrivals(add) (every arrived block added into the edge
// it images, every send complete). Before anything is sent, every process checks that the others
// make the same call on the same array (M's `rt`, `number` and `shape.elem_bytes`; over
// M::processes() when M has it: the members of a 3-D array on a Group): one
// allreduce of a hash of them (agree, collectives.hpp: O(log P), no process's record held by
// every process unless they differ), so that an exchange against an accumulation, or
// exchanges of two arrays begun in a different order, are the same CollectiveError everywhere
// instead of mixed-up cells.
#pragma once

#include <cstddef>
#include <iterator>
#include <stdexcept>
#include <string>

#include "compas/runtime/collectives.hpp"

namespace compas::detail {

// The processes an exchange of the array runs over: M::processes() when M has it, else the job.
template <class M>
Processes processes_of(const M& m) {
  if constexpr (requires { m.processes(); })
    return m.processes();
  else
    return Processes(*m.rt);
}

// Every process makes `call` on this array, or the same CollectiveError on every process.
template <class M>
void agree_on_step(const M& m, CollectiveCall call) {
  agree(processes_of(m), {call, m.shape.elem_bytes, 0, -1, true, {}, m.number});
}

template <class M>
void begin_exchange_steps(M& m, const char* array) {
  if (m.pending)
    throw std::logic_error(std::string(array) +
                           ": begin_exchange() while an exchange of the array is pending: wait() "
                           "first");
  agree_on_step(m, CollectiveCall::halo_exchange);
  ++m.epoch;
  m.pending = true;
  m.post();
}

template <class M>
void finish_exchange_steps(M& m) {
  if (!m.pending) return;
  m.pending = false;
  m.finish();
}

// Progresses the pending exchange once; true when finish() would not block: every side's block of
// this epoch has arrived (its signal counts it) and every send is complete. True when none is
// pending.
template <class M>
bool test_exchange_steps(M& m) {
  if (!m.pending) return true;
  m.win->comm().progress();
  for (std::size_t side = 0; side < std::size(m.sent); ++side)
    if (m.exchanges(side) && m.win->signal(side) < m.epoch) return false;
  for (auto& r : m.sent)
    if (!r.test()) return false;
  return true;
}

// The reverse of an exchange (accumulate_halos): a collective step of its own, numbered like an
// exchange (it uses the same receive areas), refused while an exchange is pending.
template <class M, class Add>
void accumulate_steps(M& m, const char* array, Add add) {
  if (m.pending)
    throw std::logic_error(std::string(array) +
                           ": accumulate_halos() while an exchange of the array is pending: "
                           "wait() first");
  agree_on_step(m, CollectiveCall::halo_accumulate);
  ++m.epoch;
  m.post_halos();
  m.add_arrivals(add);
}

}  // namespace compas::detail

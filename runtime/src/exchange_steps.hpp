// The two halves of a halo exchange as the 2-D and the 3-D machinery (dist_halo.cpp,
// dist_halo3.cpp) both run them: one pending exchange at a time, numbered by `epoch` (whose
// parity picks the receive areas). M has `epoch`, `pending`, post() (every edge on its way) and
// finish() (every halo in place, every send complete).
#pragma once

#include <stdexcept>
#include <string>

namespace compas::detail {

template <class M>
void begin_exchange_steps(M& m, const char* array) {
  if (m.pending)
    throw std::logic_error(std::string(array) +
                           ": begin_exchange() while an exchange of the array is pending: wait() "
                           "first");
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

}  // namespace compas::detail

// The host's topology, loaded once per test program (hwloc discovery is the slow part of the
// threads tests' setup).
#pragma once

#include "compas/threads/topology.hpp"

namespace compas_threads_test {

inline const compas::threads::Topology& host() {
  static const compas::threads::Topology t = compas::threads::Topology::host();
  return t;
}

}  // namespace compas_threads_test

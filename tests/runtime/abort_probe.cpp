// abort_probe: every rank's program for test_abort. Modes:
//   abort  rank 1 calls rt.abort(3, "x") from a thread of its own while the others wait in a
//          rt.barrier() that rank 1 never enters;
//   shape  a DistArray whose length differs on rank 1 (12 elements, 10 elsewhere), not caught.
#include <cstdio>
#include <string>
#include <thread>

#include "compas/compas.hpp"

int main(int argc, char** argv) {
  compas::Runtime rt(argc, argv);
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "abort") {
    rt.barrier();  // every rank is up
    if (rt.process() == 1) std::thread([&] { rt.abort(3, "x"); }).join();
    rt.barrier();
  } else if (mode == "shape") {
    compas::DistArray<double> a(rt, rt.process() == 1 ? 12 : 10);
  } else {
    std::fprintf(stderr, "abort_probe: mode '%s' is not one of: abort, shape\n", mode.c_str());
    return 2;
  }
  std::fprintf(stderr, "abort_probe: rank %d: returned\n", rt.process());
  return 0;
}

// abort_probe: every rank's program for test_abort. Modes:
//   abort  rank 1 calls rt.abort(3, "x") from a thread of its own while the others wait in a
//          rt.barrier() that rank 1 never enters;
//   shape  a DistArray whose length differs on rank 1 (12 elements, 10 elsewhere), not caught;
//   group  ranks 2 and 1 form a group (in that order; rank 0 is alone) and broadcast lengths that
//          differ (3 on rank 1, 2 on rank 2), not caught, while rank 0 waits in a rt.barrier().
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "compas/compas.hpp"

int main(int argc, char** argv) {
  compas::Runtime rt(argc, argv);
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "abort") {
    compas::barrier(rt);  // every rank is up
    if (rt.process() == 1) std::thread([&] { rt.abort(3, "x"); }).join();
    compas::barrier(rt);
  } else if (mode == "shape") {
    compas::DistArray<double> a(rt, rt.process() == 1 ? 12 : 10);
  } else if (mode == "group") {
    compas::Group g =
        compas::group_of(rt, rt.process() == 0 ? std::vector<int>{0} : std::vector<int>{2, 1});
    std::vector<int> data(rt.process() == 1 ? 3 : 2);
    if (rt.process() != 0) compas::broadcast(g, std::span<int>(data), 0);
    compas::barrier(rt);
  } else {
    std::fprintf(stderr, "abort_probe: mode '%s' is not one of: abort, shape, group\n",
                 mode.c_str());
    return 2;
  }
  std::fprintf(stderr, "abort_probe: rank %d: returned\n", rt.process());
  return 0;
}

// memory_probe CASE BYTES [HOLD]: every rank of a job runs this program; each tries one allocation
// and prints what happened, then meets the others at a barrier (a refused collective allocation
// must leave every rank able to go on together):
//   "memory_probe: rank R: refused: <message>"   or   "memory_probe: rank R: allocated"
//   "memory_probe: rank R: after: ok"
// Cases:
//   window BYTES           rt.window<char>(BYTES) on every rank (the data written and read back)
//   window-rank0 BYTES     rank 0 asks BYTES, the others 4 KiB
//   distarray ELEMENTS     DistArray<double>(rt, ELEMENTS), each part written and summed
// With HOLD, rank 0 first allocates and touches HOLD bytes of its own memory, kept to the end.
// Exit codes: 0 the case ran (refused or not), 1 any other failure, 2 bad arguments.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "compas/compas.hpp"

namespace {

void try_window(compas::Runtime& rt, std::size_t bytes) {
  auto w = rt.window<char>(bytes);
  auto mine = w.local();
  for (std::size_t i = 0; i < mine.size(); i += 4096) mine[i] = 1;
  std::size_t sum = 0;
  for (std::size_t i = 0; i < mine.size(); i += 4096) sum += static_cast<std::size_t>(mine[i]);
  if (sum != (mine.size() + 4095) / 4096) throw std::runtime_error("window data lost");
}

void try_distarray(compas::Runtime& rt, compas::index elements) {
  compas::DistArray<double> a(rt, elements);
  double sum = 0;
  for (auto& v : a.local()) sum += (v = 1.0);
  if (sum != static_cast<double>(a.local().size())) throw std::runtime_error("array data lost");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3 || argc > 4) {
    std::fprintf(stderr, "usage: memory_probe window|window-rank0|distarray SIZE [HOLD]\n");
    return 2;
  }
  const std::string what = argv[1];
  const unsigned long long size = std::strtoull(argv[2], nullptr, 0);
  const unsigned long long hold = argc == 4 ? std::strtoull(argv[3], nullptr, 0) : 0;
  int rank = -1;
  try {
    compas::Runtime rt(compas::RuntimeOptions::from_environment());
    rank = rt.process();
    std::vector<char> held(rank == 0 ? hold : 0, 1);  // touched as it is filled
    rt.comm().barrier();                              // in use before any rank asks
    try {
      if (what == "window")
        try_window(rt, size);
      else if (what == "window-rank0")
        try_window(rt, rank == 0 ? size : 4096);
      else if (what == "distarray")
        try_distarray(rt, static_cast<compas::index>(size));
      else
        return 2;
      std::printf("memory_probe: rank %d: allocated\n", rank);
    } catch (const compas::comm::CommError& e) {
      std::printf("memory_probe: rank %d: refused: %s\n", rank, e.what());
    }
    std::fflush(stdout);
    rt.comm().barrier();
    std::printf("memory_probe: rank %d: after: ok\n", rank);
    return held.empty() || held.back() == 1 ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "memory_probe: rank %d: failed: %s\n", rank, e.what());
    return 1;
  }
}

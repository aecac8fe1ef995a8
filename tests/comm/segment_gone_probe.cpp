// A same-host window whose owner's shared-memory segment goes away before a peer first touches
// it: the state a peer sees when the owner dies between two of its operations. Rank 0 detaches
// its own window's System V segment (keeping the segment id); the other ranks then put into rank 0
// and read it back for the first time; rank 0 attaches the segment again at the same address and
// checks their data. Every rank exits 0 when the data is right, 1 when not, 77 (all ranks alike)
// when the window memory is not a System V segment here. Started by compas-run -n P (P >= 2).
#include <sys/shm.h>

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "compas/comm/comm.hpp"

namespace {

using namespace compas::comm;

constexpr std::size_t kCount = 4096;

// The System V segment id of the mapping that starts at `p`, or -1 when it is anything else.
long sysv_segment_at(const void* p) {
  std::ifstream maps("/proc/self/maps");
  const auto want = reinterpret_cast<std::uintptr_t>(p);
  for (std::string line; std::getline(maps, line);) {
    std::istringstream in(line);
    std::string range, perms, offset, dev, path;
    long inode = -1;
    in >> range >> perms >> offset >> dev >> inode >> path;
    const auto dash = range.find('-');
    if (dash == std::string::npos) continue;
    if (std::stoull(range.substr(0, dash), nullptr, 16) != want) continue;
    return path.rfind("/SYSV", 0) == 0 ? inode : -1;
  }
  return -1;
}

double value(int from, std::size_t i) {
  return 1000.0 * from + static_cast<double>(i);
}

int run(Comm& comm) {
  const int me = comm.rank();
  const int P = comm.size();
  auto win = std::make_unique<Window<double>>(comm, kCount * static_cast<std::size_t>(P));
  void* base = win->local().data();
  const long shmid = sysv_segment_at(base);
  if (shmid < 0) {
    std::printf("segment_gone_probe: the window memory is not a System V segment here\n");
    comm.barrier();
    return 77;
  }
  comm.barrier();
  if (me == 0 && shmdt(base) != 0) {
    std::perror("segment_gone_probe: shmdt");
    return 1;
  }
  comm.barrier();  // rank 0's segment is now held only by the peers that attached it
  int bad = 0;
  if (me != 0) {
    std::vector<double> mine(kCount), back(kCount);
    for (std::size_t i = 0; i < kCount; ++i) mine[i] = value(me, i);
    const std::size_t at = kCount * static_cast<std::size_t>(me);
    win->put(0, at, std::span<const double>(mine));
    comm.flush(0);
    win->get(0, at, std::span<double>(back));
    bad = back != mine;
    std::printf("segment_gone_probe: rank %d: put and read back %zu doubles from rank 0: %s\n", me,
                kCount, bad ? "WRONG" : "ok");
  }
  comm.barrier();
  if (me == 0) {
    if (shmat(static_cast<int>(shmid), base, 0) != base) {
      std::perror("segment_gone_probe: shmat");
      return 1;
    }
    for (int r = 1; r < P; ++r)
      for (std::size_t i = 0; i < kCount; ++i)
        if (win->local()[kCount * static_cast<std::size_t>(r) + i] != value(r, i)) {
          std::printf("segment_gone_probe: rank 0: element %zu from rank %d is wrong\n", i, r);
          bad = 1;
          break;
        }
    if (!bad) std::printf("segment_gone_probe: rank 0: every peer's data arrived\n");
  }
  win.reset();
  return bad;
}

}  // namespace

int main() {
  try {
    auto boot = Bootstrap::from_environment();
    Comm comm(*boot, CommOptions::from_environment());
    const int rc = run(comm);
    std::fflush(stdout);
    return rc;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "segment_gone_probe: %s\n", e.what());
    return 1;
  }
}

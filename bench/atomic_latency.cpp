// atomic_latency: the latency of one blocking 8-byte remote atomic, WindowBytes::fetch_add from
// rank 0 on rank 1's window, the figure `compas pingpong` does not measure. Run under a launcher:
//
//   compas-run -n 2 -t 1 atomic_latency [--iters N] [--repeats R]
//
// Rank 0 makes N fetch_adds per repeat (the first repeat warms up and is not reported) while
// rank 1 waits in the process barrier, as pingpong's get does; a peer on this host is reached by
// load/store (a CPU atomic), another over UCX. Rank 0 prints one line of JSON:
//   {"op":"fetch_add","bytes":8,"iterations":N,"min_us":...,"median_us":...,"max_us":...}
// and checks the word's final value (exit 1 when it is wrong).
//
// It uses only comm's public API, the same since release 0.1 (Bootstrap::from_environment, Comm,
// WindowBytes::fetch_add), so that bench/hotpath_ab.sh can compile this one file against two
// builds of comm that differ in that API elsewhere, and both run the same loop.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "compas/comm/bootstrap.hpp"
#include "compas/comm/ucx.hpp"
#include "compas/comm/window.hpp"

namespace {

using Clock = std::chrono::steady_clock;

int positive(const char* flag, const char* v) {
  char* end = nullptr;
  const long x = std::strtol(v, &end, 10);
  if (*v == '\0' || *end != '\0' || x < 1 || x > 100000000) {
    std::fprintf(stderr, "atomic_latency: %s '%s' is not a positive integer\n", flag, v);
    std::exit(2);
  }
  return static_cast<int>(x);
}

}  // namespace

int main(int argc, char** argv) try {
  int iters = 20000, repeats = 5;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if ((flag == "--iters" || flag == "--repeats") && i + 1 < argc) {
      (flag == "--iters" ? iters : repeats) = positive(argv[i], argv[i + 1]);
      ++i;
    } else {
      std::fprintf(stderr,
                   "usage: compas-run -n 2 -t 1 atomic_latency [--iters N] [--repeats R]\n");
      return 2;
    }
  }
  auto boot = compas::comm::Bootstrap::from_environment();
  compas::comm::Comm comm(*boot);
  if (comm.size() < 2) {
    std::fprintf(stderr, "atomic_latency: needs 2 processes (compas-run -n 2 -t 1)\n");
    return 2;
  }
  int status = 0;
  {
    compas::comm::WindowBytes w(comm, 64, 1);
    std::vector<double> us;
    for (int r = 0; r < repeats + 1; ++r) {
      comm.barrier();
      if (comm.rank() == 0) {
        const auto start = Clock::now();
        for (int k = 0; k < iters; ++k) (void)w.fetch_add(1, 0, 1, 8);
        const std::chrono::duration<double, std::micro> t = Clock::now() - start;
        if (r > 0) us.push_back(t.count() / iters);
      }
      comm.barrier();
    }
    if (comm.rank() == 0) {
      const std::uint64_t last = w.fetch_add(1, 0, 0, 8);
      const std::uint64_t want = static_cast<std::uint64_t>(iters) * (repeats + 1);
      if (last != want) {
        std::fprintf(stderr, "atomic_latency: the word holds %llu, not %llu\n",
                     static_cast<unsigned long long>(last), static_cast<unsigned long long>(want));
        status = 1;
      }
      std::sort(us.begin(), us.end());
      std::printf(
          "{\"op\":\"fetch_add\",\"bytes\":8,\"iterations\":%d,\"min_us\":%.5f,"
          "\"median_us\":%.5f,\"max_us\":%.5f}\n",
          iters, us.front(), us[us.size() / 2], us.back());
    }
    comm.barrier();
  }
  return status;
} catch (const std::exception& e) {
  std::fprintf(stderr, "atomic_latency: %s\n", e.what());
  return 1;
}

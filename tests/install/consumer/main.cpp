// A user program against an installed compas: a team of two threads (pinned, oversubscribed if
// this machine has one PU) and an allreduce. Prints the result; exits 1 when it is wrong.
#include <compas/compas.hpp>
#include <cstdio>
#include <exception>
#include <vector>

int main() {
  try {
    const auto topo = compas::Topology::host();
    compas::TeamOptions options;
    options.threads = 2;
    options.allow_oversubscribe = true;
    compas::Team team(topo, options);
    std::vector<long> sums(2, 0);
    team.run([&](compas::ThreadCtx& c) {
      sums[static_cast<std::size_t>(c.thread())] =
          c.allreduce(static_cast<long>(c.thread() + 1) * 10, compas::op::sum{});
    });
    std::printf("allreduce over %d threads: %ld %ld (expected 30)\n", team.threads(), sums[0],
                sums[1]);
    return sums[0] == 30 && sums[1] == 30 ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "consumer failed: %s\n", e.what());
    return 1;
  }
}

// two_runtimes: every rank of a job makes a Runtime, meets the others in a barrier, ends it, and
// makes a second Runtime. One Runtime per process is supported under compas-run: the second one
// must fail on rank 0 with a message that says so, and the launcher then ends the job. Prints
// "two_runtimes: rank R: ..." (stderr) and exits 1 when a Runtime fails, 0 when both were made.
#include <cstdio>
#include <cstdlib>
#include <exception>

#include "compas/compas.hpp"

namespace {

void one_runtime() {
  auto options = compas::RuntimeOptions::from_environment();
  options.oversubscribe = true;
  compas::Runtime rt(options);
  rt.run([&](compas::ThreadCtx& t) { rt.barrier(t); });
}

}  // namespace

int main() {
  const char* rank_env = std::getenv("COMPAS_RANK");
  const int rank = rank_env ? std::atoi(rank_env) : 0;
  try {
    one_runtime();
    std::fprintf(stderr, "two_runtimes: rank %d: the first Runtime ended\n", rank);
    one_runtime();
    std::fprintf(stderr, "two_runtimes: rank %d: a second Runtime was made\n", rank);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "two_runtimes: rank %d: %s\n", rank, e.what());
    return 1;
  }
}

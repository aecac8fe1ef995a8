// two_runtimes: every process of a job (compas-run -n P, P > 1) makes a Runtime, tries a second
// one while the first lives, ends the first and tries again. Both tries must throw
// comm::SecondJobError on every process at once (two_runtimes.sh). Prints
// "two_runtimes: rank R: WHEN: KIND: MESSAGE" on stderr for each try and exits 0 when both threw
// SecondJobError, 1 otherwise. With the argument "uncaught" the try after the first Runtime ended
// is not caught: the process must print "compas: MESSAGE" and exit with status 1.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <string>

#include "compas/compas.hpp"

namespace {

int g_rank = 0;

std::unique_ptr<compas::Runtime> make_runtime() {
  auto options = compas::RuntimeOptions::from_environment();
  options.oversubscribe = true;
  return std::make_unique<compas::Runtime>(options);
}

// A second Runtime, caught: true when it threw SecondJobError.
bool second_refused(const char* when) {
  try {
    auto rt = make_runtime();
    std::fprintf(stderr, "two_runtimes: rank %d: %s: a second Runtime was made\n", g_rank, when);
    return false;
  } catch (const compas::comm::SecondJobError& e) {
    std::fprintf(stderr, "two_runtimes: rank %d: %s: SecondJobError: %s\n", g_rank, when, e.what());
    return true;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "two_runtimes: rank %d: %s: another error: %s\n", g_rank, when, e.what());
    return false;
  }
}

}  // namespace

int main(int argc, char** argv) {
  const char* rank_env = std::getenv("COMPAS_RANK");
  g_rank = rank_env ? std::atoi(rank_env) : 0;
  const bool uncaught = argc > 1 && std::string(argv[1]) == "uncaught";
  bool ok = true;
  {
    auto rt = make_runtime();
    rt->run([&](compas::ThreadCtx& t) { rt->barrier(t); });
    ok = second_refused("while the first lives") && ok;
    compas::barrier(*rt);  // the first Runtime still works
  }
  if (uncaught) {
    make_runtime();
    std::fprintf(stderr, "two_runtimes: rank %d: a second Runtime was made\n", g_rank);
    return 1;
  }
  ok = second_refused("after the first ended") && ok;
  return ok ? 0 : 1;
}

// openmp_triad: a[i] = b[i] + s * c[i] over three arrays of N MiB each under
// `#pragma omp parallel for`, `repeats` times after one warm-up pass, with or without a
// compas::Runtime made first (--runtime; its flags --threads, --openmp, ... and COMPAS_* apply).
// --flops K makes each element a chain of K multiply-adds instead (a[i] = ((c*b + s)*b + s)...),
// so the loop is bound by the cores rather than by memory. Prints one line: the seconds of the
// timed repeats, the thread count of the loop, whether the Runtime pinned OpenMP's threads, and a
// checksum. bench/openmp_pinning.sh compares the runs.
//
//   openmp_triad [--runtime] [--mib N] [--repeats N] [--flops K] [Runtime flags]
#include <omp.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "compas/runtime/runtime.hpp"

namespace {

long positive(const std::string& flag, const char* text) {
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  if (!*text || *end || v < 1) {
    std::fprintf(stderr, "openmp_triad: %s '%s' is not a positive whole number\n", flag.c_str(),
                 text);
    std::exit(2);
  }
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    bool with_runtime = false;
    for (int i = 1; i < argc; ++i)
      if (std::string(argv[i]) == "--runtime") with_runtime = true;
    std::optional<compas::Runtime> rt;
    if (with_runtime) rt.emplace(argc, argv);  // takes its own flags out of argv

    long mib = 64, repeats = 50, flops = 0;
    for (int i = 1; i < argc; ++i) {
      const std::string arg = argv[i];
      if (arg == "--runtime") continue;
      if ((arg == "--mib" || arg == "--repeats" || arg == "--flops") && i + 1 < argc) {
        (arg == "--mib" ? mib : arg == "--repeats" ? repeats : flops) = positive(arg, argv[++i]);
      } else {
        std::fprintf(stderr,
                     "openmp_triad: unknown argument '%s'\n"
                     "usage: openmp_triad [--runtime] [--mib N] [--repeats N] [--flops K] "
                     "[Runtime flags]\n",
                     arg.c_str());
        return 2;
      }
    }

    const std::size_t n = static_cast<std::size_t>(mib) * (1u << 20) / sizeof(double);
    // Not std::vector: its value-initialisation would touch every page on this one thread.
    std::unique_ptr<double[]> a(new double[n]), b(new double[n]), c(new double[n]);
    const double s = 3.0;
    const long count = static_cast<long>(n);
#pragma omp parallel for schedule(static)
    for (long i = 0; i < count; ++i) {  // first touch by the thread that will use the page
      a[i] = 0.0;
      b[i] = 1.0 + static_cast<double>(i % 7);
      c[i] = 2.0 - static_cast<double>(i % 5);
    }
    int threads = 0;
    auto triad = [&] {
      if (flops == 0) {
#pragma omp parallel for schedule(static)
        for (long i = 0; i < count; ++i) a[i] = b[i] + s * c[i];
      } else {
        const double x = 1.0 / s;
#pragma omp parallel for schedule(static)
        for (long i = 0; i < count; ++i) {
          double y = c[i];
          for (long k = 0; k < flops; ++k) y = y * x + b[i];
          a[i] = y;
        }
      }
    };
    triad();  // warm-up
#pragma omp parallel
#pragma omp single
    threads = omp_get_num_threads();

    const auto t0 = std::chrono::steady_clock::now();
    for (long r = 0; r < repeats; ++r) triad();
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

    double check = 0;
    for (std::size_t i = 0; i < n; i += 4096) check += a[i];
    std::printf("seconds=%.6f threads=%d runtime=%d pinned=%d GBps=%.2f check=%.17g\n", seconds,
                threads, with_runtime ? 1 : 0, rt && rt->openmp_pinned() ? 1 : 0,
                3.0 * static_cast<double>(n * sizeof(double)) * static_cast<double>(repeats) /
                    seconds / 1e9,
                check);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "openmp_triad: %s\n", e.what());
    return 1;
  }
}

// The starting point of compact_hybrid.cpp: a histogram and a stream compaction, the reductions
// and scans of a particle or sorting code, parallelised with OpenMP on one shared-memory node.
//
// n keys k_i = mix(i): a histogram of their top 6 bits (an array reduction), then the compaction
// of the keys that fall in the fullest bin (an exclusive scan gives each kept key its place in
// the output). Prints the checksum of (place, key) pairs, and checks it, the count and the
// histogram's total against a plain serial loop.
#include <omp.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

std::uint64_t mix(std::uint64_t z) {  // splitmix64
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

int main(int argc, char** argv) {
  const long n = argc > 1 ? std::atol(argv[1]) : 20000000;
  constexpr int bins = 64;

  long count[bins] = {};
#pragma omp parallel for reduction(+ : count[:bins])
  for (long i = 0; i < n; ++i) ++count[mix(i) >> 58];
  std::uint64_t top = 0;
  long total = 0;
  for (int b = 0; b < bins; ++b) {
    total += count[b];
    if (count[b] > count[top]) top = b;
  }

  long place = 0;
  std::uint64_t check = 0;
#pragma omp parallel for reduction(inscan, + : place) reduction(+ : check)
  for (long i = 0; i < n; ++i) {
    if (mix(i) >> 58 == top) check += place * mix(i);
#pragma omp scan exclusive(place)
    place += mix(i) >> 58 == top;
  }

  std::uint64_t want = 0;
  long kept = 0;
  for (long i = 0; i < n; ++i)
    if (mix(i) >> 58 == top) want += kept++ * mix(i);
  std::printf("n %ld threads %d: bin %lu holds %ld keys; result = %lu, serial %lu\n", n,
              omp_get_max_threads(), top, count[top], check, want);
  return check == want && kept == count[top] && total == n ? 0 : 1;
}

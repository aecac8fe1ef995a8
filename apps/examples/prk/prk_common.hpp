// What the Parallel Research Kernels' programs in this folder share, the OpenMP originals and
// their compas ports alike (so that a port's diff is its porting only): the positional
// arguments, the PRK_PERTURB switch of the tests, and each kernel's verification and output,
// with PRK's formulas and PRK's output lines ("Solution validates", "Rate (...): R  Avg time
// (s): T"), so that one parser reads PRK's programs and these.
//
// Bad input (an argument that is not an integer in range, an unknown choice, an empty value, a
// wrong number of arguments) prints what is allowed and exits 2; a failed verification returns 1.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace prk {

[[noreturn]] inline void bad_input(const std::string& message) {
  std::fprintf(stderr, "%s\n", message.c_str());
  std::exit(2);
}

bool perturbed();

// The program's positional arguments: argv[1..argc-1], between `required` and `names.size()`;
// and PRK_PERTURB's value, checked before the run.
inline void check_count(int argc, char** argv, std::size_t required,
                        const std::vector<const char*>& names) {
  perturbed();
  const std::size_t given = static_cast<std::size_t>(argc > 0 ? argc - 1 : 0);
  if (given >= required && given <= names.size()) return;
  std::string usage = std::string("usage: ") + (argc > 0 ? argv[0] : "prk");
  for (std::size_t k = 0; k < names.size(); ++k)
    usage += k < required ? std::string(" ") + names[k] : std::string(" [") + names[k] + "]";
  bad_input(usage + " (" + std::to_string(given) + " arguments given)");
}

// argv[k] as an integer >= lo (and <= hi), `fallback` when it is not given.
inline long integer(int argc, char** argv, int k, const char* name, long lo, long fallback = 0,
                    long hi = 1L << 40) {
  if (k >= argc) return fallback;
  const std::string text = argv[k];
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno != 0 || v < lo || v > hi)
    bad_input(std::string(name) + " '" + text + "': an integer from " + std::to_string(lo) +
              " to " + std::to_string(hi) + " is needed");
  return v;
}

// argv[k] is `yes` (true) or `no` (false); `fallback` when it is not given.
inline bool choice(int argc, char** argv, int k, const char* name, const char* yes, const char* no,
                   bool fallback) {
  if (k >= argc) return fallback;
  const std::string text = argv[k];
  if (text == yes || text == no) return text == yes;
  bad_input(std::string(name) + " '" + text + "': " + yes + " or " + no + " is needed");
}

// f(), with its std::invalid_argument (a part smaller than the stencil) made bad input.
template <class F>
auto or_bad_input(F f) {
  try {
    return f();
  } catch (const std::invalid_argument& e) {
    bad_input(e.what());
  }
}

// PRK_PERTURB=1 changes one element of the result before the verification, so that a test sees
// the verification fail (unset or 0: nothing changes).
inline bool perturbed() {
  const char* v = std::getenv("PRK_PERTURB");
  if (v == nullptr || std::string(v) == "0") return false;
  if (std::string(v) != "1") bad_input(std::string("PRK_PERTURB '") + v + "': 0 or 1 is needed");
  return true;
}

// nstream: A = 0, B = C = 2 and iterations + 1 sweeps of A += B + 3 C give every element the same
// value; the sum of |A| must match it times the length within 1e-8 (relative). Rate: 4 doubles
// moved per element and sweep, over the average time of a timed sweep. 0 when it validates.
inline int nstream_verdict(long iterations, long length, double sum, double seconds, bool print) {
  double each = 0;
  for (long it = 0; it <= iterations; ++it) each += 2.0 + 3.0 * 2.0;
  const double expected = each * static_cast<double>(length);
  const bool ok = std::fabs(expected - sum) / sum <= 1e-8;
  const double avg = seconds / static_cast<double>(iterations);
  if (print && ok)
    std::printf("Solution validates\nRate (MB/s): %lf Avg time (s): %lf\n",
                1e-6 * 4.0 * sizeof(double) * static_cast<double>(length) / avg, avg);
  else if (print)
    std::printf(
        "Failed Validation on output array\n        Expected checksum: %lf\n"
        "        Observed checksum: %lf\n",
        expected, sum);
  return ok ? 0 : 1;
}

// stencil weights of radius r, w[(di + r) * (2r + 1) + (dj + r)] multiplying in(i + di, j + dj):
// PRK's discrete divergence operator, star (the axes) or grid (the whole square).
inline std::vector<double> stencil_weights(long r, bool star) {
  const long side = 2 * r + 1;
  std::vector<double> w(static_cast<std::size_t>(side * side), 0.0);
  auto at = [&](long di, long dj) -> double& { return w[(di + r) * side + (dj + r)]; };
  for (long k = 1; k <= r; ++k) {
    if (star) {
      at(0, k) = at(k, 0) = 1.0 / (2.0 * k * r);
      at(0, -k) = at(-k, 0) = -1.0 / (2.0 * k * r);
      continue;
    }
    for (long m = -k + 1; m < k; ++m) {
      at(m, k) = at(k, m) = 1.0 / (4.0 * k * (2.0 * k - 1) * r);
      at(m, -k) = at(-k, m) = -1.0 / (4.0 * k * (2.0 * k - 1) * r);
    }
    at(k, k) = 1.0 / (4.0 * k * r);
    at(-k, -k) = -1.0 / (4.0 * k * r);
  }
  return w;
}

// stencil: in = i + j, out += stencil(in), in += 1, iterations + 1 times: the L1 norm of out over
// the (n - 2r)^2 active points, divided by their count, must be 2 (iterations + 1) within 1e-8.
// Rate: 2 flops per stencil point and 1 for the update of in, per active point and iteration.
inline int stencil_verdict(long iterations, long n, long r, bool star, double norm, double seconds,
                           bool print) {
  const double active = static_cast<double>(n - 2 * r) * static_cast<double>(n - 2 * r);
  const double l1 = norm / active, reference = 2.0 * static_cast<double>(iterations + 1);
  const bool ok = std::fabs(l1 - reference) <= 1e-8;
  const double points = star ? 4.0 * r + 1 : (2.0 * r + 1) * (2.0 * r + 1);
  const double avg = seconds / static_cast<double>(iterations);
  if (print && ok)
    std::printf("Solution validates\nRate (MFlops/s): %lf  Avg time (s): %lf\n",
                1e-6 * (2.0 * points + 1) * active / avg, avg);
  else if (print)
    std::printf("ERROR: L1 norm = %lf, Reference L1 norm = %lf\n", l1, reference);
  return ok ? 0 : 1;
}

// synch_p2p's "row j of strip t is done" between threads: one counter per strip and row, on its
// own cache line, holding the number of sweeps that have finished that row.
struct alignas(64) Flag {
  std::atomic<long> sweeps{0};
};

// Waits until `f` has counted `sweeps`, spinning, then yielding the cpu (threads may outnumber
// the cpus).
inline void wait_for(const Flag& f, long sweeps) {
  for (int spins = 0; f.sweeps.load(std::memory_order_acquire) < sweeps; ++spins)
    if (spins > 1000) std::this_thread::yield();
}

// synch_p2p: the left and bottom edges hold i and j and every sweep makes A(i, j) = A(i - 1, j) +
// A(i, j - 1) - A(i - 1, j - 1); the top right corner A(m - 1, n - 1) must be (iterations + 1)
// (m + n - 2) within 1e-8 (relative). Rate: 2 flops per interior point and sweep.
inline int p2p_verdict(long iterations, long m, long n, double corner, double seconds, bool print) {
  const double reference = static_cast<double>((iterations + 1) * (m + n - 2));
  const bool ok = std::fabs(corner - reference) / reference < 1e-8;
  const double avg = seconds / static_cast<double>(iterations);
  if (print && ok)
    std::printf("Solution validates\nRate (MFlops/s): %lf Avg time (s): %lf\n",
                1e-6 * 2.0 * static_cast<double>((m - 1) * (n - 1)) / avg, avg);
  else if (print)
    std::printf("ERROR: checksum %lf does not match verification value %lf\n", corner, reference);
  return ok ? 0 : 1;
}

// reduce: W workers (threads, or processes x threads) each hold a vector of ones and add ones to
// it every sweep; the workers' vectors are then added element by element into worker 0's (which
// thus accumulates, as MPI_Reduce in place at its root does). After iterations + 1 sweeps every
// element of worker 0's vector must be iterations + 2 + (iterations^2 + 5 iterations + 4)(W - 1)
// / 2 within 1e-8. Rate: (2 W - 1) flops per element and sweep.
inline int reduce_verdict(long iterations, long length, long workers, const double* root,
                          double seconds, bool print) {
  const double it = static_cast<double>(iterations);
  const double reference = it + 2.0 + (it * it + 5.0 * it + 4.0) * (workers - 1.0) / 2.0;
  long bad = -1;
  for (long i = 0; i < length && bad < 0; ++i)
    if (std::fabs(root[i] - reference) >= 1e-8) bad = i;
  const double avg = seconds / it;
  if (print && bad < 0)
    std::printf("Solution validates\nRate (MFlops/s): %lf  Avg time (s): %lf\n",
                1e-6 * (2.0 * workers - 1.0) * static_cast<double>(length) / avg, avg);
  else if (print)
    std::printf("First error at i=%ld; value: %lf; reference value: %lf\n", bad, root[bad],
                reference);
  return bad < 0 ? 0 : 1;
}

// transpose: A(i, j) = i order + j and B = 0; each sweep B += A^T, then A += 1. After iterations
// + 1 sweeps B(i, j) must be (j order + i)(iterations + 1) + iterations (iterations + 1) / 2:
// `abserr`, the sum of |B - that| over every element, below 1e-8. Rate: PRK's MPI versions' 2
// matrices of doubles per sweep.
inline double transpose_error(long order, long iterations, long i, long j, double b) {
  const double it = static_cast<double>(iterations);
  return std::fabs(b - (static_cast<double>(j * order + i) * (it + 1.0) + (it + 1.0) * it / 2.0));
}
inline int transpose_verdict(long iterations, long order, double abserr, double seconds,
                             bool print) {
  const bool ok = abserr < 1e-8;
  const double avg = seconds / static_cast<double>(iterations);
  if (print && ok)
    std::printf("Solution validates\nRate (MB/s): %lf Avg time (s): %lf\n",
                1e-6 * 2.0 * sizeof(double) * static_cast<double>(order * order) / avg, avg);
  else if (print)
    std::printf("ERROR: Aggregate squared error %lf exceeds threshold %e\n", abserr, 1e-8);
  return ok ? 0 : 1;
}

// heat3d: the initial mode sin(pi x) sin(pi y) sin(pi z) at interior point (i, j, k) of an n^3
// grid (h = 1 / (n + 1)); its growth factor per step, g = 1 + 6 r (cos(pi h) - 1); and the exact
// value after iterations + 1 steps. The largest difference over g^(iterations + 1) must stay
// below 1e-9. Rate: 9 flops per interior point and step.
inline double heat3d_mode(long n, long i, long j, long k) {
  const double ph = std::acos(-1.0) / static_cast<double>(n + 1);
  return std::sin(ph * static_cast<double>(i)) * std::sin(ph * static_cast<double>(j)) *
         std::sin(ph * static_cast<double>(k));
}
inline double heat3d_decay(long n, double r, long iterations) {
  const double g = 1.0 + 6.0 * r * (std::cos(std::acos(-1.0) / static_cast<double>(n + 1)) - 1.0);
  return std::pow(g, static_cast<double>(iterations + 1));
}
inline double heat3d_exact(long n, double r, long iterations, long i, long j, long k) {
  return heat3d_decay(n, r, iterations) * heat3d_mode(n, i, j, k);
}
inline int heat3d_verdict(long iterations, long n, double r, double err, double seconds,
                          bool print) {
  const double scale = heat3d_decay(n, r, iterations);
  const bool ok = err / scale < 1e-9;
  const double avg = seconds / static_cast<double>(iterations);
  const double points = static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
  if (print && ok)
    std::printf("Solution validates\nRate (MFlops/s): %lf  Avg time (s): %lf\n",
                1e-6 * 9.0 * points / avg, avg);
  else if (print)
    std::printf("ERROR: largest difference %e from the exact solution (relative %e)\n", err,
                err / scale);
  return ok ? 0 : 1;
}

// dgemm: A(i, j) = B(i, j) = j and C = 0; iterations + 1 products C += A B make the sum of C
// 0.25 n^3 (n - 1)^2 (iterations + 1), matched within 1e-8 (relative). Rate: 2 n^3 flops per
// product over the average time of a timed one.
inline int dgemm_verdict(long iterations, long order, double checksum, double seconds, bool print) {
  const double n = static_cast<double>(order);
  const double reference = 0.25 * n * n * n * (n - 1.0) * (n - 1.0) * (iterations + 1.0);
  const bool ok = std::fabs((checksum - reference) / reference) <= 1e-8;
  const double avg = seconds / static_cast<double>(iterations);
  if (print && ok)
    std::printf("Solution validates\nRate (MFlops/s): %lf  Avg time (s): %lf\n",
                1e-6 * 2.0 * n * n * n / avg, avg);
  else if (print)
    std::printf("ERROR: Checksum = %lf, Reference checksum = %lf\n", checksum, reference);
  return ok ? 0 : 1;
}

// dgemm's local product, PRK's blocking: C(0:m, 0:n) += A(0:m, 0:k) B(0:k, 0:n), column-major
// (x(i, j) at x[i + ld * j]), in tiles of `block` (0: the plain triple loop): for each tile of C,
// a tile of B copied transposed and one of A, their product summed in a tile of its own, then
// added to C. Called by every thread of a parallel region: the threads share C's column blocks.
inline void dgemm_tiles(long m, long n, long k, const double* a, long lda, const double* b,
                        long ldb, double* c, long ldc, long block) {
  if (block <= 0) {
#pragma omp for
    for (long j = 0; j < n; ++j)
      for (long l = 0; l < k; ++l)
        for (long i = 0; i < m; ++i) c[i + ldc * j] += a[i + lda * l] * b[l + ldb * j];
    return;
  }
  std::vector<double> tiles(3 * static_cast<std::size_t>(block * block));
  double *aa = tiles.data(), *bb = aa + block * block, *cc = bb + block * block;
#pragma omp for
  for (long jj = 0; jj < n; jj += block) {
    const long nj = std::min(block, n - jj);
    for (long kk = 0; kk < k; kk += block) {
      const long nk = std::min(block, k - kk);
      for (long j = 0; j < nj; ++j)
        for (long l = 0; l < nk; ++l) bb[j + block * l] = b[kk + l + ldb * (jj + j)];
      for (long ii = 0; ii < m; ii += block) {
        const long ni = std::min(block, m - ii);
        for (long l = 0; l < nk; ++l)
          for (long i = 0; i < ni; ++i) aa[i + block * l] = a[ii + i + lda * (kk + l)];
        for (long j = 0; j < nj; ++j)
          for (long i = 0; i < ni; ++i) cc[i + block * j] = 0.0;
        for (long l = 0; l < nk; ++l)
          for (long j = 0; j < nj; ++j)
            for (long i = 0; i < ni; ++i)
              cc[i + block * j] += aa[i + block * l] * bb[j + block * l];
        for (long j = 0; j < nj; ++j)
          for (long i = 0; i < ni; ++i) c[ii + i + ldc * (jj + j)] += cc[i + block * j];
      }
    }
  }
}

// sparse: the matrix of a star stencil of radius r on a periodic 2^lsize x 2^lsize grid, the point
// (i, j) being row and column i + 2^lsize j, or that number with its 2 lsize bits reversed when
// `scramble` (PRK's default, an irregular pattern). Row `row`'s 4 r + 1 columns, ascending, into
// cols; its entries are 1 / (column + 1).
inline long bit_reverse(unsigned long x, int bits) {
  x = ((x >> 1) & 0x5555555555555555UL) | ((x & 0x5555555555555555UL) << 1);
  x = ((x >> 2) & 0x3333333333333333UL) | ((x & 0x3333333333333333UL) << 2);
  x = ((x >> 4) & 0x0f0f0f0f0f0f0f0fUL) | ((x & 0x0f0f0f0f0f0f0f0fUL) << 4);
  x = ((x >> 8) & 0x00ff00ff00ff00ffUL) | ((x & 0x00ff00ff00ff00ffUL) << 8);
  x = ((x >> 16) & 0x0000ffff0000ffffUL) | ((x & 0x0000ffff0000ffffUL) << 16);
  x = (x >> 32) | (x << 32);
  return bits == 0 ? 0 : static_cast<long>(x >> (64 - bits));
}
inline void sparse_row(long row, int lsize, long r, bool scramble, long* cols) {
  const long size = 1L << lsize, i = row % size, j = row / size;
  auto at = [&](long x, long y) {
    const long lin = x + (y << lsize);
    return scramble ? bit_reverse(static_cast<unsigned long>(lin), 2 * lsize) : lin;
  };
  long* c = cols;
  *c++ = at(i, j);
  for (long k = 1; k <= r; ++k) {
    *c++ = at((i + k) % size, j);
    *c++ = at((i - k + size) % size, j);
    *c++ = at(i, (j + k) % size);
    *c++ = at(i, (j - k + size) % size);
  }
  std::sort(cols, c);
}

// sparse: vector[c] += c + 1 and result += matrix * vector, iterations + 1 times, so that every
// product term is (iterations' count so far) and the sum of the result must be PRK's reference,
// rows * (4 r + 1) * (iterations + 1) (iterations + 2) / 2, within 1e-8 (relative: the sum is
// added in another order by every job shape). Rate: 2 flops per nonzero and iteration.
inline int sparse_verdict(long iterations, long rows, long r, double sum, double seconds,
                          bool print) {
  const double it = static_cast<double>(iterations), nent = static_cast<double>(rows) * (4 * r + 1);
  const double reference = 0.5 * nent * (it + 1.0) * (it + 2.0);
  const bool ok = std::fabs(sum - reference) <= 1e-8 * reference;
  const double avg = seconds / it;
  if (print && ok)
    std::printf("Solution validates\nRate (MFlops/s): %lf  Avg time (s): %lf\n",
                1e-6 * 2.0 * nent / avg, avg);
  else if (print)
    std::printf("ERROR: Vector sum = %lf, Reference vector sum = %lf\n", sum, reference);
  return ok ? 0 : 1;
}

// random (RandomAccess): streams of powers of 2 modulo x^63 + x^2 + x + 1 (HPC Challenge's
// generator); stream s starts at element SEQSEED + s * (its length) of the sequence.
constexpr unsigned long kPoly = 0x7UL, kSeqSeed = 834568137686317453UL;
constexpr long kPeriod = 1317624576693539401L;
inline unsigned long random_next(unsigned long x) {
  return (x << 1) ^ (static_cast<long>(x) < 0 ? kPoly : 0UL);
}
// Element n of the sequence (n >= 0), by repeated squaring. Squaring is linear over GF(2): the
// square of x is the xor of byte j of x's squares, looked up in a table of 8 x 256 made once
// (from m2[b], the square of bit b), 8 lookups a squaring instead of 64.
inline unsigned long random_start(long n) {
  static const auto squares = [] {
    std::array<std::array<unsigned long, 256>, 8> sq{};
    unsigned long m2 = 1;
    for (int b = 0; b < 64; ++b, m2 = random_next(random_next(m2)))
      for (unsigned v = 0; v < 256; ++v)
        if ((v >> (b % 8)) & 1) sq[b / 8][v] ^= m2;
    return sq;
  }();
  n %= kPeriod;
  if (n == 0) return 1;
  int k = 62;
  while (((n >> k) & 1) == 0) --k;
  unsigned long ran = 2;
  while (k > 0) {
    unsigned long next = 0;
    for (int j = 0; j < 8; ++j) next ^= squares[j][(ran >> (8 * j)) & 0xff];
    ran = next;
    if ((n >> --k) & 1) ran = random_next(ran);
  }
  return ran;
}

// random: a table of 2^L entries T[i] = i, UPDATES updates T[ran & (2^L - 1)] ^= ran in two
// identical rounds, so that every entry must be back to i: 0 entries may differ. Rate: updates
// per second (GUPS).
inline int random_verdict(long updates, long wrong, double seconds, bool print) {
  if (print && wrong == 0)
    std::printf("Solution validates\nRate (GUPS/s): %lf, Time (s): %lf\n",
                1e-9 * static_cast<double>(updates) / seconds, seconds);
  else if (print)
    std::printf("ERROR: number of incorrect table elements = %ld\n", wrong);
  return wrong == 0 ? 0 : 1;
}

}  // namespace prk

// The Parallel Research Kernels' PIC (particle-in-cell), what its OpenMP original and its compas
// port share (prk_common.hpp's role for the other kernels): the arguments, the particles' placing,
// the force and move of one particle, the verification and the output.
//
// The problem (PRK's definition): an L x L grid of cells, periodic, with a fixed charge at every
// vertex, +1 on even columns and -1 on odd ones. Particles start at cell centres, their number per
// cell drawn from a distribution over the columns (GEOMETRIC, SINUSOIDAL, LINEAR) or uniform in a
// patch (PATCH); each gets the charge that, with the four charges around it, moves it exactly
// 2k + 1 cells in x per step, and the vertical velocity m. Every step each particle feels the
// Coulomb force of its cell's four corners and moves (time step 1, mass 1). After ITERATIONS + 1
// steps each particle must be within 1e-6 of x0 + (ITERATIONS + 1)(2k + 1), y0 + (ITERATIONS +
// 1) m (mod L), and the serial numbers of the particles must add up to placed (placed + 1) / 2.
// Rate: particles moved per second over the timed steps (the first is not timed), in millions.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "prk_common.hpp"

namespace prk {

// A particle: position, velocity, charge, where it started and its serial number (1..placed).
struct Particle {
  double x, y, vx, vy, q, x0, y0;
  long id;
};

enum class PicMode { geometric, sinusoidal, linear, patch };

struct PicArgs {
  long iterations = 0, size = 0, particles = 0, k = 0, m = 0;
  PicMode mode = PicMode::geometric;
  std::string mode_name;
  double rho = 0, alpha = 0, beta = 0;            // GEOMETRIC's rho, LINEAR's alpha and beta
  long left = 0, right = 0, bottom = 0, top = 0;  // PATCH's cells, bounds included
};

// argv[k] as a finite number.
inline double real(int argc, char** argv, int k, const char* name) {
  const std::string text = k < argc ? argv[k] : "";
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !std::isfinite(v))
    bad_input(std::string(name) + " '" + text + "': a number is needed");
  return v;
}

// ITERATIONS GRID_SIZE PARTICLES K M MODE [its parameters]: PRK's MPI order.
inline PicArgs pic_args(int argc, char** argv) {
  std::vector<const char*> names = {"ITERATIONS", "GRID_SIZE", "PARTICLES",
                                    "K",          "M",         "GEOMETRIC|SINUSOIDAL|LINEAR|PATCH"};
  if (argc < 7) check_count(argc, argv, 6, names);  // fewer than the mode: the usage
  PicArgs a;
  a.iterations = integer(argc, argv, 1, "iterations", 1);
  a.size = integer(argc, argv, 2, "grid size", 2, 0, 1L << 14);
  if (a.size % 2 != 0)
    bad_input("grid size '" + std::to_string(a.size) + "': an even number of cells is needed");
  a.particles = integer(argc, argv, 3, "particles", 1, 0, 1L << 30);
  a.k = integer(argc, argv, 4, "k", 0, 0, 1L << 20);
  a.m = integer(argc, argv, 5, "m", -a.size, 0, a.size);
  a.mode_name = argv[6];
  const std::vector<std::pair<std::string, std::vector<const char*>>> modes = {
      {"GEOMETRIC", {"RHO"}},
      {"SINUSOIDAL", {}},
      {"LINEAR", {"ALPHA", "BETA"}},
      {"PATCH", {"LEFT", "RIGHT", "BOTTOM", "TOP"}}};
  std::size_t mode = 0;
  while (mode < modes.size() && modes[mode].first != a.mode_name) ++mode;
  if (mode == modes.size())
    bad_input("mode '" + a.mode_name + "': GEOMETRIC, SINUSOIDAL, LINEAR or PATCH is needed");
  a.mode = static_cast<PicMode>(mode);
  names.insert(names.end(), modes[mode].second.begin(), modes[mode].second.end());
  check_count(argc, argv, names.size(), names);
  if (a.mode == PicMode::geometric) {
    a.rho = real(argc, argv, 7, "rho");
    if (a.rho <= 0 || a.rho == 1 || !std::isfinite(std::pow(a.rho, a.size)))
      bad_input("rho '" + std::string(argv[7]) + "': a number > 0 other than 1 is needed, rho^" +
                std::to_string(a.size) + " finite");
  } else if (a.mode == PicMode::linear) {
    a.alpha = real(argc, argv, 7, "alpha");
    a.beta = real(argc, argv, 8, "beta");
    if (a.beta <= 0 || a.alpha > a.beta)
      bad_input("alpha '" + std::string(argv[7]) + "', beta '" + argv[8] +
                "': beta > 0 and alpha <= beta are needed (no negative density)");
  } else if (a.mode == PicMode::patch) {
    a.left = integer(argc, argv, 7, "left", 0, 0, a.size - 2);
    a.right = integer(argc, argv, 8, "right", a.left + 1, 0, a.size - 1);
    a.bottom = integer(argc, argv, 9, "bottom", 0, 0, a.size - 2);
    a.top = integer(argc, argv, 10, "top", a.bottom + 1, 0, a.size - 1);
  }
  return a;
}

inline void pic_print(const PicArgs& a) {
  std::printf(
      "Grid size                      = %ld\nNumber of particles requested  = %ld\n"
      "Number of time steps           = %ld\nInitialization mode            = %s\n",
      a.size, a.particles, a.iterations, a.mode_name.c_str());
  if (a.mode == PicMode::geometric) std::printf("  Attenuation factor           = %lf\n", a.rho);
  if (a.mode == PicMode::linear)
    std::printf("  Negative slope               = %lf\n  Offset                       = %lf\n",
                a.alpha, a.beta);
  if (a.mode == PicMode::patch)
    std::printf("  Bounding box                 = %ld, %ld, %ld, %ld\n", a.left, a.right, a.bottom,
                a.top);
  std::printf("Particle charge semi-increment = %ld\nVertical velocity              = %ld\n", a.k,
              a.m);
}

// PRK's generator of the counts: s -> a s + c on 64 bits from 27182818285. Cell (x, y) makes two
// draws from step 2 (x L + y) on, so any block of columns can start where it begins (at(steps):
// the affine map applied `steps` times, by squaring).
struct Lcg {
  static constexpr std::uint64_t kA = 6364136223846793005ULL, kC = 1442695040888963407ULL;
  std::uint64_t s = 27182818285ULL;
  std::uint64_t next(std::uint64_t bound) { return (s = kA * s + kC) % bound; }
  static Lcg at(std::uint64_t steps) {
    std::uint64_t mul = 1, add = 0, pa = kA, pc = kC;  // (mul, add): done so far; (pa, pc): 2^b
    for (; steps != 0; steps >>= 1, pc = pa * pc + pc, pa *= pa)
      if (steps & 1) {
        mul *= pa;
        add = pa * add + pc;
      }
    Lcg g;
    g.s = mul * g.s + add;
    return g;
  }
};

// A count of mean mu: normal with a standard deviation of 15% of mu, rounded, for mu >= 1; else 1
// with probability mu. Two draws either way.
inline long pic_draw(double mu, Lcg& g) {
  const std::uint64_t all = ~0ULL, half = 0xffffffffULL;
  if (mu >= 1.0) {
    const double u0 = static_cast<double>(g.next(all)) * (1.0 / static_cast<double>(all));
    const double u1 = static_cast<double>(g.next(all)) * (1.0 / static_cast<double>(all));
    const double z = std::sqrt(-2.0 * std::log(u0)) * std::cos(2.0 * std::acos(-1.0) * u1);
    const double v = z * 0.15 * mu + mu + 0.5;
    return v > 0 ? static_cast<long>(v) : 0;
  }
  const auto threshold = static_cast<std::uint32_t>(mu * static_cast<double>(half));
  g.next(half);
  return g.next(half) <= threshold ? 1 : 0;
}

// The mean number of particles of a cell in column x (inside the patch for PATCH).
inline double pic_mean(const PicArgs& a, long x) {
  const double n = static_cast<double>(a.particles), size = static_cast<double>(a.size);
  switch (a.mode) {
    case PicMode::geometric:
      return n * (1.0 - a.rho) / (1.0 - std::pow(a.rho, size)) / size * std::pow(a.rho, x);
    case PicMode::sinusoidal: {
      const double c = std::cos(static_cast<double>(x) * std::acos(-1.0) / size);
      return 2.0 * c * c * n / (size * size);
    }
    case PicMode::linear: {
      const double total = a.beta * size - a.alpha * 0.5 * (size - 1.0);
      return n * ((a.beta - a.alpha * static_cast<double>(x) / size) / total) / size;
    }
    case PicMode::patch:
      return n / static_cast<double>((a.right - a.left + 1) * (a.top - a.bottom + 1));
  }
  return 0;
}

// Appends the particles of the cells in columns [x_lo, x_hi) and rows [y_lo, y_hi), column by
// column, numbered from 1 on in that order: the charge that moves each 2k + 1 cells right per
// step (its column's sign times (2k + 1) / (the x pull of the four corners at unit charges)).
inline void pic_place(const PicArgs& a, long x_lo, long x_hi, long y_lo, long y_hi,
                      std::vector<Particle>& out) {
  const double r = std::sqrt(0.5), pull = 1.0 / (2.0 * (0.5 / r) / 0.5);
  for (long x = x_lo; x < x_hi; ++x) {
    Lcg g = Lcg::at(2 * static_cast<std::uint64_t>(x * a.size + y_lo));
    const double mu = pic_mean(a, x), q = (x % 2 == 0 ? 1.0 : -1.0) * (2 * a.k + 1) * pull;
    for (long y = y_lo; y < y_hi; ++y) {
      long count = pic_draw(mu, g);
      if (a.mode == PicMode::patch && (x < a.left || x > a.right || y < a.bottom || y > a.top))
        count = 0;
      for (long c = 0; c < count; ++c) {
        const double px = static_cast<double>(x) + 0.5, py = static_cast<double>(y) + 0.5;
        out.push_back(
            {px, py, 0.0, static_cast<double>(a.m), q, px, py, static_cast<long>(out.size()) + 1});
      }
    }
  }
}

// One step of one particle: the Coulomb force of the four charges at its cell's corners,
// `charge(x, y)` the charge at vertex (x, y), then the move (periodic) and the new velocity.
template <class Charge>
inline void pic_move(Particle& p, const Charge& charge, long size) {
  const long x = static_cast<long>(p.x), y = static_cast<long>(p.y);
  const double rx = p.x - static_cast<double>(x), ry = p.y - static_cast<double>(y);
  double fx = 0, fy = 0;
  auto pull = [&](double dx, double dy, double q, double sx, double sy) {
    const double r2 = dx * dx + dy * dy, f = p.q * q / r2 / std::sqrt(r2);
    fx += sx * f * dx;
    fy += sy * f * dy;
  };
  pull(rx, ry, charge(x, y), 1, 1);
  pull(rx, 1.0 - ry, charge(x, y + 1), 1, -1);
  pull(1.0 - rx, ry, charge(x + 1, y), -1, 1);
  pull(1.0 - rx, 1.0 - ry, charge(x + 1, y + 1), -1, -1);
  const double l = static_cast<double>(size);
  p.x = std::fmod(p.x + p.vx + 0.5 * fx + l, l);
  p.y = std::fmod(p.y + p.vy + 0.5 * fy + l, l);
  p.vx += fx;
  p.vy += fy;
}

// Whether p is where ITERATIONS + 1 steps of 2k + 1 cells right and m up take it (the shifts
// reduced mod L in integers, so large counts lose no precision).
inline bool pic_in_place(const Particle& p, const PicArgs& a) {
  const long steps = (a.iterations + 1) % a.size, l = a.size;
  const long sx = steps * ((2 * a.k + 1) % l) % l, sy = steps * ((a.m % l + l) % l) % l;
  const double x = std::fmod(p.x0 + static_cast<double>(sx), static_cast<double>(l));
  const double y = std::fmod(p.y0 + static_cast<double>(sy), static_cast<double>(l));
  return std::fabs(p.x - x) <= 1e-6 && std::fabs(p.y - y) <= 1e-6;
}

// `wrong` particles out of place, or serial numbers that do not add up (one lost or doubled),
// fail; 0 when it validates.
inline int pic_verdict(const PicArgs& a, long placed, long wrong, long id_sum, double seconds,
                       bool print) {
  const bool ok = wrong == 0 && id_sum == placed * (placed + 1) / 2;
  const double avg = seconds / static_cast<double>(a.iterations);
  if (print && ok)
    std::printf("Solution validates\nRate (Mparticles_moved/s): %lf  Avg time (s): %lf\n",
                1e-6 * static_cast<double>(placed) / avg, avg);
  else if (print && wrong != 0)
    std::printf("ERROR: there are %ld miscalculated locations\n", wrong);
  else if (print)
    std::printf("ERROR: Particle checksum incorrect: %ld, expected %ld\n", id_sum,
                placed * (placed + 1) / 2);
  return ok ? 0 : 1;
}

}  // namespace prk

// NAS CG: random numbers, classes and the matrix (NPB 3.x makea, sprnvc, vecset, sparse).
#include <algorithm>
#include <cctype>
#include <cmath>
#include <stdexcept>
#include <string>

#include "cg_internal.hpp"

namespace compas::kernels::cg {

namespace {

constexpr double kR23 = 1.0 / 8388608.0;  // 2^-23
constexpr double kR46 = kR23 * kR23;      // 2^-46
constexpr double kT23 = 8388608.0;        // 2^23
constexpr double kT46 = kT23 * kT23;      // 2^46

// Integer part of a non-negative double below 2^63 (Fortran's int / C's (int) cast).
inline double whole(double v) {
  return static_cast<double>(static_cast<std::int64_t>(v));
}

}  // namespace

double randlc(double* x, double a) {
  // a = 2^23 a1 + a2 and x = 2^23 x1 + x2, all four below 2^23. Then
  // a x mod 2^46 = 2^23 ((a1 x2 + a2 x1) mod 2^23) + a2 x2 (mod 2^46), where every product is
  // below 2^46 and every sum below 2^48: exact in a double.
  const double a1 = whole(kR23 * a);
  const double a2 = a - kT23 * a1;
  const double x1 = whole(kR23 * *x);
  const double x2 = *x - kT23 * x1;
  const double t1 = a1 * x2 + a2 * x1;
  const double t2 = whole(kR23 * t1);
  const double z = t1 - kT23 * t2;
  const double t3 = kT23 * z + a2 * x2;
  const double t4 = whole(kR46 * t3);
  *x = t3 - kT46 * t4;
  return kR46 * *x;
}

void vranlc(std::int64_t n, double* x, double a, double* y) {
  for (std::int64_t i = 0; i < n; ++i) y[i] = randlc(x, a);
}

ClassParams params(char cls) {
  ClassParams p;
  p.cls = static_cast<char>(std::toupper(static_cast<unsigned char>(cls)));
  switch (p.cls) {
    case 'S':
      p.na = 1400, p.nonzer = 7, p.niter = 15, p.shift = 10, p.zeta_verify = 8.5971775078648;
      break;
    case 'W':
      p.na = 7000, p.nonzer = 8, p.niter = 15, p.shift = 12, p.zeta_verify = 10.362595087124;
      break;
    case 'A':
      p.na = 14000, p.nonzer = 11, p.niter = 15, p.shift = 20, p.zeta_verify = 17.130235054029;
      break;
    case 'B':
      p.na = 75000, p.nonzer = 13, p.niter = 75, p.shift = 60, p.zeta_verify = 22.712745482631;
      break;
    case 'C':
      p.na = 150000, p.nonzer = 15, p.niter = 75, p.shift = 110, p.zeta_verify = 28.973605592845;
      break;
    case 'T':
      // This project's tiny class; its value is serial_reference's (see cg.hpp).
      p.na = 1400, p.nonzer = 8, p.niter = 15, p.shift = 12, p.zeta_verify = 10.546255636930191;
      p.official = false;
      break;
    default:
      throw std::invalid_argument("cg: unknown class '" + std::string(1, cls) +
                                  "' (allowed: S, W, A, B, C, T)");
  }
  return p;
}

double Csr::bytes() const {
  return static_cast<double>(values.size()) * sizeof(double) +
         static_cast<double>(colidx.size()) * sizeof(std::int32_t) +
         static_cast<double>(rowstr.size()) * sizeof(std::int64_t);
}

namespace {

// The n sparse random vectors of makea, vector i with count[i] entries (columns 0-based) at
// [i * width, i * width + count[i]), and the scale factor NPB's sparse applies to it.
struct Vectors {
  std::int64_t n = 0;
  int width = 0;
  std::vector<int> count;
  std::vector<std::int32_t> col;
  std::vector<double> val;
  std::vector<double> scale;
};

Vectors generate_vectors(const ClassParams& cp) {
  Vectors v;
  v.n = cp.na;
  v.width = cp.nonzer + 1;
  const std::size_t n = static_cast<std::size_t>(cp.na), w = static_cast<std::size_t>(v.width);
  v.count.assign(n, 0);
  v.col.assign(n * w, 0);
  v.val.assign(n * w, 0.0);
  v.scale.assign(n, 0.0);

  // NPB's main draws one number (its initial "zeta") before makea.
  double tran = kSeed;
  randlc(&tran, kMultiplier);
  // Smallest power of two >= n (at least 2), so that column draws are uniform over it.
  std::int64_t nn1 = 1;
  do nn1 *= 2;
  while (nn1 < cp.na);
  const double pow2 = static_cast<double>(nn1);

  std::vector<double> vc(w);
  std::vector<std::int64_t> ivc(w);  // 1-based columns, as NPB draws them
  for (std::size_t i = 0; i < n; ++i) {
    // sprnvc: nonzer distinct random columns with random values; both numbers of a pair are
    // drawn even when the column is rejected.
    int nzv = 0;
    while (nzv < cp.nonzer) {
      const double vecelt = randlc(&tran, kMultiplier);
      const double vecloc = randlc(&tran, kMultiplier);
      const std::int64_t c = static_cast<std::int64_t>(pow2 * vecloc) + 1;
      if (c > cp.na) continue;
      if (std::find(ivc.begin(), ivc.begin() + nzv, c) != ivc.begin() + nzv) continue;
      vc[static_cast<std::size_t>(nzv)] = vecelt;
      ivc[static_cast<std::size_t>(nzv)] = c;
      ++nzv;
    }
    // vecset: the entry in column i (1-based i + 1) becomes 0.5, appended when absent.
    const std::int64_t diag = static_cast<std::int64_t>(i) + 1;
    bool set = false;
    for (int k = 0; k < nzv; ++k) {
      if (ivc[static_cast<std::size_t>(k)] == diag) {
        vc[static_cast<std::size_t>(k)] = 0.5;
        set = true;
      }
    }
    if (!set) {
      vc[static_cast<std::size_t>(nzv)] = 0.5;
      ivc[static_cast<std::size_t>(nzv)] = diag;
      ++nzv;
    }
    v.count[i] = nzv;
    for (int k = 0; k < nzv; ++k) {
      v.col[i * w + static_cast<std::size_t>(k)] =
          static_cast<std::int32_t>(ivc[static_cast<std::size_t>(k)] - 1);
      v.val[i * w + static_cast<std::size_t>(k)] = vc[static_cast<std::size_t>(k)];
    }
  }

  // sparse's geometric scaling: vector i is weighted by ratio^i, ratio = rcond^(1/n), computed
  // by the same repeated product.
  const double ratio = std::pow(cp.rcond, 1.0 / static_cast<double>(cp.na));
  double size = 1.0;
  for (std::size_t i = 0; i < n; ++i) {
    v.scale[i] = size;
    size = size * ratio;
  }
  return v;
}

struct Entry {
  std::int32_t col;
  double val;
};

}  // namespace

Csr make_matrix(const ClassParams& cp, std::int64_t row_lo, std::int64_t row_hi) {
  if (row_lo < 0 || row_hi < row_lo || row_hi > cp.na)
    throw std::invalid_argument("cg: row range [" + std::to_string(row_lo) + ", " +
                                std::to_string(row_hi) + ") outside [0, " + std::to_string(cp.na) +
                                ")");
  const Vectors v = generate_vectors(cp);
  const std::size_t w = static_cast<std::size_t>(v.width);

  Csr a;
  a.n = cp.na;
  a.row_lo = row_lo;
  a.row_hi = row_hi;
  a.rowstr.reserve(static_cast<std::size_t>(row_hi - row_lo) + 1);
  a.rowstr.push_back(0);

  // Upper bound of the nonzeros: every generated product (duplicates counted).
  std::size_t raw_total = 0;
  for (std::int64_t i = 0; i < cp.na; ++i) {
    const std::size_t c = static_cast<std::size_t>(v.count[static_cast<std::size_t>(i)]);
    for (std::size_t k = 0; k < c; ++k) {
      const std::int32_t j = v.col[static_cast<std::size_t>(i) * w + k];
      if (j >= row_lo && j < row_hi) raw_total += c;
    }
  }
  a.colidx.reserve(raw_total);
  a.values.reserve(raw_total);

  // Rows in blocks of a bounded number of products. Vector i adds to row j (one of its columns)
  // the entries val[i][b] * (scale[i] * val[i][j's position]) in every column of the vector; a
  // row's products are collected in generation order (i, then the vector's columns) and duplicates
  // summed in that order from 0.0, which is exactly what NPB's sparse computes.
  const std::int64_t block_rows = std::max<std::int64_t>(
      kChunkRows, static_cast<std::int64_t>((std::size_t{1} << 22) / (w * w)));
  std::vector<std::size_t> start;
  std::vector<Entry> raw;
  for (std::int64_t blo = row_lo; blo < row_hi; blo += block_rows) {
    const std::int64_t bhi = std::min(row_hi, blo + block_rows);
    const std::size_t brows = static_cast<std::size_t>(bhi - blo);
    start.assign(brows + 1, 0);
    for (std::int64_t i = 0; i < cp.na; ++i) {
      const std::size_t c = static_cast<std::size_t>(v.count[static_cast<std::size_t>(i)]);
      for (std::size_t k = 0; k < c; ++k) {
        const std::int32_t j = v.col[static_cast<std::size_t>(i) * w + k];
        if (j >= blo && j < bhi) start[static_cast<std::size_t>(j - blo) + 1] += c;
      }
    }
    for (std::size_t r = 0; r < brows; ++r) start[r + 1] += start[r];
    raw.resize(start[brows]);
    std::vector<std::size_t> pos(start.begin(), start.end() - 1);

    for (std::int64_t i = 0; i < cp.na; ++i) {
      const std::size_t base = static_cast<std::size_t>(i) * w;
      const std::size_t c = static_cast<std::size_t>(v.count[static_cast<std::size_t>(i)]);
      for (std::size_t k = 0; k < c; ++k) {
        const std::int32_t j = v.col[base + k];
        if (j < blo || j >= bhi) continue;
        const double scale = v.scale[static_cast<std::size_t>(i)] * v.val[base + k];
        std::size_t& p = pos[static_cast<std::size_t>(j - blo)];
        for (std::size_t b = 0; b < c; ++b) {
          const std::int32_t jcol = v.col[base + b];
          double va = v.val[base + b] * scale;
          // rcond on the diagonal bounds the smallest eigenvalue from below; the shift is
          // subtracted from the stored matrix.
          if (jcol == j && j == i) va = va + cp.rcond - cp.shift;
          raw[p++] = Entry{jcol, va};
        }
      }
    }

    for (std::size_t r = 0; r < brows; ++r) {
      const auto first = raw.begin() + static_cast<std::ptrdiff_t>(start[r]);
      const auto last = raw.begin() + static_cast<std::ptrdiff_t>(start[r + 1]);
      std::stable_sort(first, last, [](const Entry& x, const Entry& y) { return x.col < y.col; });
      for (auto e = first; e != last;) {
        const std::int32_t col = e->col;
        double sum = 0.0;
        for (; e != last && e->col == col; ++e) sum = sum + e->val;
        a.colidx.push_back(col);
        a.values.push_back(sum);
      }
      a.rowstr.push_back(static_cast<std::int64_t>(a.values.size()));
    }
  }
  return a;
}

Csr make_matrix(const ClassParams& cp) {
  return make_matrix(cp, 0, cp.na);
}

}  // namespace compas::kernels::cg

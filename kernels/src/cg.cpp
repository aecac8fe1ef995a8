// NAS CG: the solver (NPB 3.x conj_grad and outer loop) over the rows of one process, its
// threads splitting the rows in whole chunks; the serial reference; work models.
#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

#include "compas/kernels/cg.hpp"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace compas::kernels::cg {

std::pair<std::int64_t, std::int64_t> row_block(std::int64_t na, int parts, int index) {
  if (parts < 1 || index < 0 || index >= parts)
    throw std::invalid_argument("cg: part " + std::to_string(index) + " of " +
                                std::to_string(parts));
  const auto [c0, c1] =
      threads::block_range(static_cast<std::size_t>(chunk_count(na)), parts, index);
  const std::int64_t lo = static_cast<std::int64_t>(c0) * kChunkRows;
  const std::int64_t hi = std::min(na, static_cast<std::int64_t>(c1) * kChunkRows);
  return {std::min(lo, na), hi};
}

IterationModel inner_iteration_model(std::int64_t na, std::int64_t rows, std::int64_t nnz,
                                     double matrix_bytes) {
  const double n = static_cast<double>(na), m = static_cast<double>(rows),
               z = static_cast<double>(nnz);
  IterationModel model;
  model.flops = 2 * z + 10 * m;
  model.matrix_bytes = matrix_bytes >= 0 ? matrix_bytes : 12 * z + 8.0 * (m + 1);
  model.vector_bytes = 8 * n + 8 * m + 48 * m + 24 * m;
  return model;
}

double npb_flops(const ClassParams& cp) {
  const double nz = static_cast<double>(cp.nonzer) * (cp.nonzer + 1);
  return 2.0 * cp.niter * static_cast<double>(cp.na) * (3 + nz + 25 * (5 + nz) + 3);
}

bool verify(const ClassParams& cp, double zeta, double* error) {
  const double err = std::fabs(zeta - cp.zeta_verify) / cp.zeta_verify;
  if (error) *error = err;
  return err <= kEpsilon;  // false for NaN
}

namespace {

using Clock = std::chrono::steady_clock;

void finish(Result& res, const ClassParams& cp, double zeta, double rnorm, double seconds) {
  res.cls = cp.cls;
  res.zeta = zeta;
  res.rnorm = rnorm;
  res.zeta_verify = cp.zeta_verify;
  res.verified = verify(cp, zeta, &res.error);
  res.seconds = seconds;
  res.mops = seconds > 0 ? npb_flops(cp) / seconds / 1e6 : 0;
}

}  // namespace

struct Solver::Impl {
  ClassParams cp;
  const Csr& a;
  Exchange& ex;
  std::int64_t chunk_lo = 0, chunk_hi = 0, nchunks = 0;
  // x, z, r, q: this process's rows (index 0 = row a.row_lo); p: all na columns.
  std::vector<double> x, z, r, q, p;
  std::array<std::vector<double>, 2> partials;  // 2 values per chunk of the whole matrix

  // The bytes of this process's matrix as the solver lays it out (Panels; the split into
  // threads and their groups adds a few bytes per group).
  double layout_bytes = 0;

  bool avx2 = false;  // the product's AVX2 loop

  Impl(const ClassParams& c, const Csr& m, Exchange& e) : cp(c), a(m), ex(e) {}

  // One thread's rows of the matrix, column panel by column panel, in slices of 8 rows (SELL-8
  // with sorting inside each 64-row chunk): for panel j, the rows of every chunk are ordered by
  // their number of entries in that panel (stable, longest first) and taken 8 at a time; a slice
  // stores its entries column-major (entry t of its 8 rows, then entry t + 1), each row padded
  // to the slice's longest with zeros (value 0, the panel's first column). Column indices are
  // 16-bit offsets into the panel (10 bytes an entry instead of 12). The 8 rows of a slice
  // are summed side by side, so the loop runs once per slice instead of once per row and exits
  // where the branch predictor expects it; the sort keeps the padding small (a few percent).
  // Each row is still summed from 0 over its panel entries in the row's column order and then
  // added to out, so the results are those of one row at a time (a padded zero product leaves a
  // sum unchanged). Built by the thread that uses it (its pages are local to it).
  struct Panels {
    static constexpr int kLanes = 8;
    static constexpr std::uint8_t kNoRow = 0xff;
    static constexpr std::size_t kAhead = 256;     // entries the product prefetches ahead
    std::int64_t rows = 0, count = 0, slices = 0;  // slices per panel: ceil(rows / 8)
    std::vector<std::uint32_t> start;    // count * slices + 1: first entry of slice (j, g)
    std::vector<std::uint8_t> lane_row;  // count * slices * 8: lane's row in the slice's chunk
    std::vector<std::uint16_t> col;      // column - j kPanelColumns
    std::vector<double> val;
    static_assert(kPanelColumns <= 65536, "panel offsets are 16 bits");

    // The layout's shape for local rows [first, last) (first a chunk boundary): slice starts,
    // lanes' rows, and len = entries of every (panel, row), panel-major. Returns the entries
    // stored.
    static std::uint64_t plan(const Csr& a, std::int64_t first, std::int64_t last,
                              std::vector<std::uint32_t>& len, std::vector<std::uint32_t>& start,
                              std::vector<std::uint8_t>& lane_row) {
      static_assert(kChunkRows % kLanes == 0 && kChunkRows <= kNoRow);
      const std::int64_t* rs = a.rowstr.data();
      const std::size_t nr = static_cast<std::size_t>(last - first),
                        np = static_cast<std::size_t>(panel_count(a.n)),
                        ns = (nr + kLanes - 1) / kLanes;
      len.assign(np * nr, 0);
      for (std::size_t r = 0; r < nr; ++r)
        for (std::int64_t k = rs[first + static_cast<std::int64_t>(r)];
             k < rs[first + static_cast<std::int64_t>(r) + 1]; ++k)
          ++len[static_cast<std::size_t>(a.colidx[k] / kPanelColumns) * nr + r];
      start.assign(np * ns + 1, 0);
      lane_row.assign(np * ns * kLanes, kNoRow);
      std::uint64_t at = 0;
      std::vector<std::uint8_t> order;
      for (std::size_t j = 0; j < np; ++j)
        for (std::size_t c0 = 0; c0 < nr; c0 += kChunkRows) {
          const std::size_t c1 = std::min(nr, c0 + kChunkRows);
          const std::uint32_t* lj = len.data() + j * nr + c0;
          order.resize(c1 - c0);
          for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<std::uint8_t>(i);
          std::stable_sort(order.begin(), order.end(),
                           [&](std::uint8_t x, std::uint8_t y) { return lj[x] > lj[y]; });
          for (std::size_t q = 0; q < order.size(); q += kLanes) {
            const std::size_t g = (c0 + q) / kLanes;
            std::uint32_t longest = 0;
            for (std::size_t i = 0; i < kLanes && q + i < order.size(); ++i) {
              lane_row[(j * ns + g) * kLanes + i] = order[q + i];
              longest = std::max(longest, lj[order[q + i]]);
            }
            start[j * ns + g] = static_cast<std::uint32_t>(at);
            at += std::uint64_t{longest} * kLanes;
            if (at >= std::uint64_t{1} << 32)
              throw std::length_error("cg: over 2^32 - 1 stored entries in one thread's rows");
          }
        }
      start[np * ns] = static_cast<std::uint32_t>(at);
      return at;
    }

    // Bytes of the layout of local rows [first, last) (what the product streams).
    static double layout_bytes(const Csr& a, std::int64_t first, std::int64_t last) {
      std::vector<std::uint32_t> len, start;
      std::vector<std::uint8_t> lane_row;
      const std::uint64_t at = plan(a, first, last, len, start, lane_row);
      return 10.0 * static_cast<double>(at) + 4.0 * static_cast<double>(start.size()) +
             static_cast<double>(lane_row.size());
    }

    void build(const Csr& a, std::int64_t first, std::int64_t last) {
      rows = last - first;
      count = panel_count(a.n);
      slices = (rows + kLanes - 1) / kLanes;
      const std::int64_t* rs = a.rowstr.data();
      const std::size_t nr = static_cast<std::size_t>(rows), np = static_cast<std::size_t>(count),
                        ns = static_cast<std::size_t>(slices);
      std::vector<std::uint32_t> len;
      const std::uint64_t at = plan(a, first, last, len, start, lane_row);
      // kAhead values and 2 kAhead offsets of padding: the product's prefetches stay inside.
      col.assign(at + 2 * kAhead, 0);
      val.assign(at + kAhead, 0.0);
      // Fill: every row's entries go to its lane in column order (CSR rows are sorted), then
      // the padding.
      std::vector<std::uint32_t> next(np * nr);  // (panel, row) -> next slot, lanes apart
      for (std::size_t j = 0; j < np; ++j)
        for (std::size_t g = 0; g < ns; ++g) {
          const std::uint32_t s0 = start[j * ns + g], s1 = start[j * ns + g + 1];
          const std::size_t chunk = g * kLanes / kChunkRows * kChunkRows;
          for (std::size_t i = 0; i < kLanes; ++i) {
            const std::uint8_t lr = lane_row[(j * ns + g) * kLanes + i];
            std::uint32_t used = 0;
            if (lr != kNoRow) {
              next[j * nr + chunk + lr] = s0 + static_cast<std::uint32_t>(i);
              used = len[j * nr + chunk + lr];
            }
            for (std::uint32_t k = s0 + static_cast<std::uint32_t>(i) + used * kLanes; k < s1;
                 k += kLanes) {
              col[k] = 0;
              val[k] = 0.0;
            }
          }
        }
      for (std::size_t r = 0; r < nr; ++r)
        for (std::int64_t k = rs[first + static_cast<std::int64_t>(r)];
             k < rs[first + static_cast<std::int64_t>(r) + 1]; ++k) {
          std::uint32_t& to = next[static_cast<std::size_t>(a.colidx[k] / kPanelColumns) * nr + r];
          col[to] = static_cast<std::uint16_t>(a.colidx[k] % kPanelColumns);
          val[to] = a.values[k];
          to += kLanes;
        }
    }

    // out[r] = local row r of A times v for the rows [0, rows), panel by panel.
    void times(const double* v, double* out, bool avx2) const {
#if defined(__x86_64__)
      if (avx2) return times_avx2(v, out);
#endif
      (void)avx2;
      times_generic(v, out);
    }

#if defined(__x86_64__)
    // The same sums with 4 lanes to a vector: the gathered values are paired by scalar loads into
    // 128-bit halves (what the gather instructions did no faster), the values loaded whole; each
    // lane multiplies and then adds (no fused multiply-add), so the bits are those of
    // times_generic.
    __attribute__((target("avx2"))) void times_avx2(const double* v, double* out) const {
      const std::uint16_t* ci = col.data();
      const double* va = val.data();
      for (std::int64_t r = 0; r < rows; ++r) out[r] = 0.0;
      const std::size_t ns = static_cast<std::size_t>(slices);
      static_assert(kLanes == 8);
      for (std::size_t j = 0; j < static_cast<std::size_t>(count); ++j) {
        const double* vj = v + j * static_cast<std::size_t>(kPanelColumns);
        for (std::size_t g = 0; g < ns; ++g) {
          __m256d s0 = _mm256_setzero_pd(), s1 = _mm256_setzero_pd();
          for (std::uint32_t k = start[j * ns + g], e = start[j * ns + g + 1]; k < e; k += kLanes) {
            __builtin_prefetch(va + k + kAhead);
            __builtin_prefetch(ci + k + 2 * kAhead);
            const std::uint16_t* c = ci + k;
            const __m128d p01 = _mm_loadh_pd(_mm_load_sd(vj + c[0]), vj + c[1]);
            const __m128d p23 = _mm_loadh_pd(_mm_load_sd(vj + c[2]), vj + c[3]);
            const __m128d p45 = _mm_loadh_pd(_mm_load_sd(vj + c[4]), vj + c[5]);
            const __m128d p67 = _mm_loadh_pd(_mm_load_sd(vj + c[6]), vj + c[7]);
            const __m256d g0 = _mm256_insertf128_pd(_mm256_castpd128_pd256(p01), p23, 1);
            const __m256d g1 = _mm256_insertf128_pd(_mm256_castpd128_pd256(p45), p67, 1);
            s0 = _mm256_add_pd(s0, _mm256_mul_pd(_mm256_loadu_pd(va + k), g0));
            s1 = _mm256_add_pd(s1, _mm256_mul_pd(_mm256_loadu_pd(va + k + 4), g1));
          }
          alignas(32) double sum[kLanes];
          _mm256_store_pd(sum, s0);
          _mm256_store_pd(sum + 4, s1);
          const std::uint8_t* lr = lane_row.data() + (j * ns + g) * kLanes;
          double* o = out + g * kLanes / kChunkRows * kChunkRows;
          for (int i = 0; i < kLanes; ++i)
            if (lr[i] != kNoRow) o[lr[i]] = o[lr[i]] + sum[i];
        }
      }
    }
#endif

    void times_generic(const double* v, double* out) const {
      const std::uint16_t* ci = col.data();
      const double* va = val.data();
      for (std::int64_t r = 0; r < rows; ++r) out[r] = 0.0;
      const std::size_t ns = static_cast<std::size_t>(slices);
      for (std::size_t j = 0; j < static_cast<std::size_t>(count); ++j) {
        const double* vj = v + j * static_cast<std::size_t>(kPanelColumns);
        for (std::size_t g = 0; g < ns; ++g) {
          double sum[kLanes] = {};
          for (std::uint32_t k = start[j * ns + g], e = start[j * ns + g + 1]; k < e; k += kLanes) {
            // 2 KiB ahead in the values and 1 KiB in the offsets (the arrays are padded for it):
            // the hardware prefetcher alone leaves this loop 10% slower (class B, one thread).
            __builtin_prefetch(va + k + kAhead);
            __builtin_prefetch(ci + k + 2 * kAhead);
            for (int i = 0; i < kLanes; ++i) sum[i] = sum[i] + va[k + i] * vj[ci[k + i]];
          }
          const std::uint8_t* lr = lane_row.data() + (j * ns + g) * kLanes;
          double* o = out + g * kLanes / kChunkRows * kChunkRows;
          for (int i = 0; i < kLanes; ++i)
            if (lr[i] != kNoRow) o[lr[i]] = o[lr[i]] + sum[i];
        }
      }
    }
  };

  // A thread's rows are cut into up to kGroups groups of whole chunks, each with its own panels
  // (built by the thread that owns it, so its pages are that thread's). The product is shared
  // out dynamically: each thread takes its own groups in order from its counter, then the groups
  // the others on its socket have not started, from theirs; a thread whose core runs slower
  // (another job, a virtual machine's other guests) takes fewer. Which thread computes a row does
  // not change its sum, so the results stay bit for bit those of any P x T.
  static constexpr int kGroups = 8;
  struct Group {
    std::int64_t lo = 0, hi = 0;  // local rows
    Panels panels;
  };
  // What one thread owns: chunks [c0, c1) (numbered over the whole matrix), which are the local
  // rows [lo, hi).
  struct Share {
    std::int64_t c0 = 0, c1 = 0;
    std::int64_t lo = 0, hi = 0;
    int socket = 0;             // the owner's socket
    unsigned parity = 0;        // which partials array the next reduction uses
    std::vector<Group> groups;  // rows [lo, hi) of the matrix
  };
  struct alignas(64) Counter {
    std::atomic<int> next{0};  // the owner's next group not yet taken
  };
  std::vector<Share*> shares;           // every thread's, for the product
  std::unique_ptr<Counter[]> counters;  // one per thread

  // out[i] = row i of A times v for every local row (out and v indexed like q and p): each thread
  // calls it; on return every row is done (team barrier).
  void times(threads::ThreadCtx& t, const double* v, double* out) {
    const int nt = t.nthreads(), me = t.tid();
    for (int k = 0; k < nt; ++k) {
      const int u = (me + k) % nt;
      const Share& o = *shares[static_cast<std::size_t>(u)];
      // Only groups of threads on my socket: their panels are in their owner's memory.
      if (o.socket != shares[static_cast<std::size_t>(me)]->socket) continue;
      const int count = static_cast<int>(o.groups.size());
      for (int g; (g = counters[u].next.fetch_add(1, std::memory_order_relaxed)) < count;) {
        const Group& gr = o.groups[static_cast<std::size_t>(g)];
        gr.panels.times(v, out + gr.lo, avx2);
      }
    }
    t.barrier();
    // Nobody takes from this counter again before the next product, which comes after another
    // barrier of the whole team (a reduction or an exchange).
    counters[me].next.store(0, std::memory_order_relaxed);
  }

  std::int64_t chunk_end(std::int64_t c) const {  // local index past chunk c's last row
    return std::min(a.row_hi, (c + 1) * kChunkRows) - a.row_lo;
  }
  std::int64_t chunk_begin(std::int64_t c) const {
    return c * kChunkRows - a.row_lo;
  }

  // Sums over the whole job of the k values each chunk put in its slots, added in chunk order.
  template <std::size_t K>
  std::array<double, K> reduce(threads::ThreadCtx& t, Share& s) {
    std::vector<double>& buf = partials[s.parity];
    const std::span<double> span(buf.data(), static_cast<std::size_t>(nchunks) * K);
    ex.assemble_partials(t, span, K);
    std::array<double, K> sum{};
    for (std::int64_t c = 0; c < nchunks; ++c)
      for (std::size_t m = 0; m < K; ++m) sum[m] += span[static_cast<std::size_t>(c) * K + m];
    s.parity ^= 1u;
    return sum;
  }

  double conj_grad(threads::ThreadCtx& t, Share& s) {
    const std::int64_t row_lo = a.row_lo;
    double* pv = p.data() + row_lo;  // this process's rows of p
    {
      double* out = partials[s.parity].data();
      for (std::int64_t c = s.c0; c < s.c1; ++c) {
        double rho = 0.0;
        for (std::int64_t i = chunk_begin(c); i < chunk_end(c); ++i) {
          q[i] = 0.0;
          z[i] = 0.0;
          r[i] = x[i];
          pv[i] = r[i];
          rho = rho + r[i] * r[i];
        }
        out[c] = rho;
      }
    }
    double rho = reduce<1>(t, s)[0];
    ex.assemble_vector(t, p);

    for (int cgit = 1; cgit <= kCgIterations; ++cgit) {
      double* out = partials[s.parity].data();
      times(t, p.data(), q.data());
      for (std::int64_t c = s.c0; c < s.c1; ++c) {
        double d = 0.0;
        for (std::int64_t i = chunk_begin(c); i < chunk_end(c); ++i) d = d + pv[i] * q[i];
        out[c] = d;
      }
      const double alpha = rho / reduce<1>(t, s)[0];
      const double rho0 = rho;

      out = partials[s.parity].data();
      for (std::int64_t c = s.c0; c < s.c1; ++c) {
        double rr = 0.0;
        for (std::int64_t i = chunk_begin(c); i < chunk_end(c); ++i) {
          z[i] = z[i] + alpha * pv[i];
          r[i] = r[i] - alpha * q[i];
          rr = rr + r[i] * r[i];
        }
        out[c] = rr;
      }
      rho = reduce<1>(t, s)[0];
      const double beta = rho / rho0;

      for (std::int64_t i = s.lo; i < s.hi; ++i) pv[i] = r[i] + beta * pv[i];
      // The last p is not used (NPB computes it all the same).
      if (cgit < kCgIterations) ex.assemble_vector(t, p);
    }

    // ||x - A z||: z goes through p to be whole on every process.
    for (std::int64_t i = s.lo; i < s.hi; ++i) pv[i] = z[i];
    ex.assemble_vector(t, p);
    double* out = partials[s.parity].data();
    times(t, p.data(), r.data());
    for (std::int64_t c = s.c0; c < s.c1; ++c) {
      double sum = 0.0;
      for (std::int64_t i = chunk_begin(c); i < chunk_end(c); ++i) {
        const double d = x[i] - r[i];
        sum = sum + d * d;
      }
      out[c] = sum;
    }
    return std::sqrt(reduce<1>(t, s)[0]);
  }

  // x.z and z.z; then x = z / ||z||. Returns x.z.
  double normalize(threads::ThreadCtx& t, Share& s) {
    double* out = partials[s.parity].data();
    for (std::int64_t c = s.c0; c < s.c1; ++c) {
      double xz = 0.0, zz = 0.0;
      for (std::int64_t i = chunk_begin(c); i < chunk_end(c); ++i) {
        xz = xz + x[i] * z[i];
        zz = zz + z[i] * z[i];
      }
      out[2 * c] = xz;
      out[2 * c + 1] = zz;
    }
    const std::array<double, 2> norms = reduce<2>(t, s);
    const double scale = 1.0 / std::sqrt(norms[1]);
    for (std::int64_t i = s.lo; i < s.hi; ++i) x[i] = scale * z[i];
    return norms[0];
  }

  void reset_x(const Share& s) {
    for (std::int64_t i = s.lo; i < s.hi; ++i) x[i] = 1.0;
  }

  Result run(threads::ThreadCtx& t) {
    Share s;
    s.socket = t.socket();
    const auto [b0, b1] =
        threads::block_range(static_cast<std::size_t>(chunk_hi - chunk_lo), t.nthreads(), t.tid());
    s.c0 = chunk_lo + static_cast<std::int64_t>(b0);
    s.c1 = chunk_lo + static_cast<std::int64_t>(b1);
    if (s.c1 > s.c0) {
      s.lo = chunk_begin(s.c0);
      s.hi = chunk_end(s.c1 - 1);
    }
    {
      const std::size_t chunks = static_cast<std::size_t>(s.c1 - s.c0);
      // One thread alone takes one group: the split costs it 2-4% (class B) and gains nothing.
      const std::size_t groups = std::min<std::size_t>(t.nthreads() > 1 ? kGroups : 1, chunks);
      s.groups.resize(groups);
      for (std::size_t g = 0; g < groups; ++g) {
        const auto [g0, g1] =
            threads::block_range(chunks, static_cast<int>(groups), static_cast<int>(g));
        Group& gr = s.groups[g];
        gr.lo = chunk_begin(s.c0 + static_cast<std::int64_t>(g0));
        gr.hi = chunk_end(s.c0 + static_cast<std::int64_t>(g1) - 1);
        gr.panels.build(a, gr.lo, gr.hi);
      }
    }
    if (t.tid() == 0) {
      shares.assign(static_cast<std::size_t>(t.nthreads()), nullptr);
      counters = std::make_unique<Counter[]>(static_cast<std::size_t>(t.nthreads()));
    }
    t.barrier();
    shares[static_cast<std::size_t>(t.tid())] = &s;
    t.barrier();

    // One untimed iteration (page faults, caches), then x back to ones: the timed part starts
    // from the same state.
    reset_x(s);
    conj_grad(t, s);
    normalize(t, s);
    reset_x(s);
    ex.synchronize(t);

    Result res;
    res.zeta_history.reserve(static_cast<std::size_t>(cp.niter));
    const auto start = Clock::now();
    double zeta = 0, rnorm = 0;
    for (int it = 1; it <= cp.niter; ++it) {
      rnorm = conj_grad(t, s);
      const double xz = normalize(t, s);
      zeta = cp.shift + 1.0 / xz;
      res.zeta_history.push_back(zeta);
    }
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    // Nobody leaves (and frees the arrays others may still be reading) before everyone is done.
    ex.synchronize(t);
    finish(res, cp, zeta, rnorm, seconds);
    res.threads = t.nthreads();
    res.nnz = a.nnz();
    res.model = inner_iteration_model(a.n, a.rows(), a.nnz(), layout_bytes);
    return res;
  }
};

Solver::Solver(const ClassParams& cp, const Csr& a, Exchange& exchange, Product product)
    : impl_(std::make_unique<Impl>(cp, a, exchange)) {
#if defined(__x86_64__)
  impl_->avx2 = product == Product::automatic && __builtin_cpu_supports("avx2");
#else
  (void)product;
#endif
  if (a.n != cp.na)
    throw std::invalid_argument("cg: matrix of order " + std::to_string(a.n) + " for class " +
                                std::string(1, cp.cls) + " (na " + std::to_string(cp.na) + ")");
  const bool aligned_lo = a.row_lo % kChunkRows == 0 || a.row_lo == a.n;  // empty at the end
  const bool aligned_hi = a.row_hi % kChunkRows == 0 || a.row_hi == a.n;
  if (a.row_lo < 0 || a.row_hi > a.n || a.row_hi < a.row_lo || !aligned_lo || !aligned_hi ||
      a.rowstr.size() != static_cast<std::size_t>(a.rows()) + 1)
    throw std::invalid_argument("cg: rows [" + std::to_string(a.row_lo) + ", " +
                                std::to_string(a.row_hi) +
                                ") are not a block of whole chunks (use row_block)");
  Impl& m = *impl_;
  m.nchunks = chunk_count(cp.na);
  m.chunk_lo = (a.row_lo + kChunkRows - 1) / kChunkRows;
  m.chunk_hi = (a.row_hi + kChunkRows - 1) / kChunkRows;
  const std::size_t rows = static_cast<std::size_t>(a.rows());
  m.x.assign(rows, 1.0);
  m.z.assign(rows, 0.0);
  m.r.assign(rows, 0.0);
  m.q.assign(rows, 0.0);
  m.p.assign(static_cast<std::size_t>(cp.na), 0.0);
  for (auto& buf : m.partials) buf.assign(static_cast<std::size_t>(m.nchunks) * 2, 0.0);
  m.layout_bytes = Impl::Panels::layout_bytes(a, 0, a.rows());
}

Solver::~Solver() = default;

Result Solver::run(threads::ThreadCtx& t) {
  return impl_->run(t);
}

std::span<const double> Solver::z() const {
  return impl_->z;
}

Result run(threads::Team& team, const ClassParams& cp) {
  const Csr a = make_matrix(cp);
  TeamExchange exchange;
  Solver solver(cp, a, exchange);
  Result result;
  team.run([&](threads::ThreadCtx& t) {
    Result mine = solver.run(t);
    if (t.tid() == 0) result = std::move(mine);
  });
  return result;
}

Result serial_reference(const ClassParams& cp, const Csr& a) {
  if (a.n != cp.na || a.row_lo != 0 || a.row_hi != a.n)
    throw std::invalid_argument("cg: serial_reference needs the whole matrix");
  const std::size_t n = static_cast<std::size_t>(cp.na);
  std::vector<double> x(n, 1.0), z(n), r(n), q(n), p(n);
  const auto times = [&](std::size_t i, const std::vector<double>& v) {
    double sum = 0.0;
    for (std::int64_t k = a.rowstr[i]; k < a.rowstr[i + 1]; ++k)
      sum = sum + a.values[static_cast<std::size_t>(k)] *
                      v[static_cast<std::size_t>(a.colidx[static_cast<std::size_t>(k)])];
    return sum;
  };
  const auto conj_grad = [&] {
    double rho = 0.0;
    for (std::size_t j = 0; j < n; ++j) {
      q[j] = 0.0;
      z[j] = 0.0;
      r[j] = x[j];
      p[j] = r[j];
    }
    for (std::size_t j = 0; j < n; ++j) rho = rho + r[j] * r[j];
    for (int cgit = 1; cgit <= kCgIterations; ++cgit) {
      for (std::size_t j = 0; j < n; ++j) q[j] = times(j, p);
      double d = 0.0;
      for (std::size_t j = 0; j < n; ++j) d = d + p[j] * q[j];
      const double alpha = rho / d;
      const double rho0 = rho;
      rho = 0.0;
      for (std::size_t j = 0; j < n; ++j) {
        z[j] = z[j] + alpha * p[j];
        r[j] = r[j] - alpha * q[j];
      }
      for (std::size_t j = 0; j < n; ++j) rho = rho + r[j] * r[j];
      const double beta = rho / rho0;
      for (std::size_t j = 0; j < n; ++j) p[j] = r[j] + beta * p[j];
    }
    double sum = 0.0;
    for (std::size_t j = 0; j < n; ++j) {
      r[j] = times(j, z);
      const double d = x[j] - r[j];
      sum = sum + d * d;
    }
    return std::sqrt(sum);
  };
  const auto normalize = [&] {
    double xz = 0.0, zz = 0.0;
    for (std::size_t j = 0; j < n; ++j) {
      xz = xz + x[j] * z[j];
      zz = zz + z[j] * z[j];
    }
    const double scale = 1.0 / std::sqrt(zz);
    for (std::size_t j = 0; j < n; ++j) x[j] = scale * z[j];
    return xz;
  };

  conj_grad();
  normalize();
  std::fill(x.begin(), x.end(), 1.0);
  Result res;
  const auto start = Clock::now();
  double zeta = 0, rnorm = 0;
  for (int it = 1; it <= cp.niter; ++it) {
    rnorm = conj_grad();
    zeta = cp.shift + 1.0 / normalize();
    res.zeta_history.push_back(zeta);
  }
  finish(res, cp, zeta, rnorm, std::chrono::duration<double>(Clock::now() - start).count());
  res.nnz = a.nnz();
  res.model = inner_iteration_model(a);
  return res;
}

}  // namespace compas::kernels::cg

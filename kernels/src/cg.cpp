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

#include "cg_internal.hpp"
#include "cg_panels.hpp"
#include "cg_tree.hpp"
#include "compas/base/isa.hpp"
#include "compas/perf/region.hpp"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace compas::kernels::cg {

static_assert(kPanelColumns % kChunkRows == 0, "a panel is whole chunks");

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

namespace {
// Chunks per panel: the first `extra` panels have one more.
struct PanelChunks {
  std::int64_t base, extra;
};
PanelChunks panel_chunks(std::int64_t na) {
  const std::int64_t chunks = chunk_count(na), np = panel_count(na);
  return {chunks / np, chunks % np};
}
std::int64_t panel_first_chunk(std::int64_t na, std::int64_t j) {
  const PanelChunks pc = panel_chunks(na);
  return j * pc.base + std::min(j, pc.extra);
}
}  // namespace

std::pair<std::int64_t, std::int64_t> panel_columns(std::int64_t na, std::int64_t j) {
  if (j < 0 || j > panel_count(na))
    throw std::invalid_argument("cg: panel " + std::to_string(j) + " of " +
                                std::to_string(panel_count(na)));
  const auto col = [&](std::int64_t k) {
    return std::min(na, panel_first_chunk(na, k) * kChunkRows);
  };
  return {col(j), col(j + 1 <= panel_count(na) ? j + 1 : j)};
}

std::int64_t panel_of(std::int64_t na, std::int64_t col) {
  const PanelChunks pc = panel_chunks(na);
  const std::int64_t c = col / kChunkRows, wide = pc.extra * (pc.base + 1);
  return c < wide ? c / (pc.base + 1) : pc.extra + (c - wide) / pc.base;
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
  Layout lay;
  detail::PanelRange panels;  // this process's columns
  // Chunks of the vector rows [chunk_lo, chunk_hi) and of the product rows [prod_lo, prod_hi).
  std::int64_t chunk_lo = 0, chunk_hi = 0, prod_lo = 0, prod_hi = 0, nchunks = 0;
  // x, z, r, q: this process's vector rows (index 0 = row lay.vector_lo); p: all na columns.
  std::vector<double> x, z, r, q, p;
  std::vector<double> w;  // the product over this process's panels, product rows (grid layouts)
  // How the product adds its panels' sums (one step per panel) and the left siblings' values
  // that wait above its output: `stack_levels` arrays of the product rows.
  std::vector<detail::LeafStep> steps;
  std::vector<std::int64_t> panel_chunk;  // first chunk of each panel, and nchunks
  int stack_levels = 0;
  std::vector<double> stack;
  std::array<std::vector<double>, 2> partials;  // 2 values per chunk of the whole matrix

  // The bytes of this process's matrix as the solver lays it out (Panels; the split into
  // threads and their groups adds a few bytes per group).
  double layout_bytes = 0;

  bool avx2 = false;  // the product's AVX2 loop

  Impl(const ClassParams& c, const Csr& m, Exchange& e, const Layout& l)
      : cp(c), a(m), ex(e), lay(l), panels{l.panel_lo, l.panel_hi} {}

  // A thread's product rows are cut into up to kGroups groups of whole chunks, each with its own
  // panels (built by the thread that owns it, so its pages are that thread's). The product is
  // shared out dynamically: each thread takes its own groups in order from its counter, then the
  // groups the others on its socket have not started, from theirs; a thread whose core runs
  // slower (another job, a virtual machine's other guests) takes fewer. Which thread computes a
  // row does not change its sum, so the results stay bit for bit those of any P x T.
  static constexpr int kGroups = 8;
  struct Group {
    std::int64_t lo = 0, hi = 0;  // product rows, index 0 = a.row_lo
    detail::Panels panels;
  };
  // What one thread owns: vector chunks [c0, c1) (numbered over the whole matrix), which are the
  // local vector rows [lo, hi), and groups of product rows.
  struct Share {
    std::int64_t c0 = 0, c1 = 0;
    std::int64_t lo = 0, hi = 0;
    int socket = 0;             // the owner's socket
    unsigned parity = 0;        // which partials array the next reduction uses
    std::vector<Group> groups;  // product rows
  };
  struct alignas(64) Counter {
    std::atomic<int> next{0};  // the owner's next group not yet taken
  };
  std::vector<Share*> shares;           // every thread's, for the product
  std::unique_ptr<Counter[]> counters;  // one per thread

  // out[i] = product row i of A (this process's panels) times v, for every product row (v
  // indexed like p): each thread calls it; on return every row is done (team barrier).
  void times(threads::ThreadCtx& t, const double* v, double* out) {
    const int nt = t.threads(), me = t.thread();
    const std::size_t stride = static_cast<std::size_t>(a.rows());
    for (int k = 0; k < nt; ++k) {
      const int u = (me + k) % nt;
      const Share& o = *shares[static_cast<std::size_t>(u)];
      // Only groups of threads on my socket: their panels are in their owner's memory.
      if (o.socket != shares[static_cast<std::size_t>(me)]->socket) continue;
      const int count = static_cast<int>(o.groups.size());
      for (int g; (g = counters[u].next.fetch_add(1, std::memory_order_relaxed)) < count;) {
        const Group& gr = o.groups[static_cast<std::size_t>(g)];
        const std::size_t at = static_cast<std::size_t>(gr.lo);
        const detail::Panels::Sink sink{steps.data(), out + at,
                                        stack.empty() ? nullptr : stack.data() + at, stride};
        gr.panels.times(v, sink, avx2);
      }
    }
    t.barrier();
    // Nobody takes from this counter again before the next product, which comes after another
    // barrier of the whole team (a reduction or an exchange).
    counters[me].next.store(0, std::memory_order_relaxed);
  }

  // out (vector rows) = A p over every panel.
  void product(threads::ThreadCtx& t, std::vector<double>& out) {
    if (!lay.reduces_product) return times(t, p.data(), out.data());
    times(t, p.data(), w.data());
    ex.reduce_product(t, w, out);
  }

  std::int64_t chunk_end(std::int64_t c) const {  // local vector index past chunk c's last row
    return std::min(lay.vector_hi, (c + 1) * kChunkRows) - lay.vector_lo;
  }
  std::int64_t chunk_begin(std::int64_t c) const { return c * kChunkRows - lay.vector_lo; }

  // Sums over the whole job of the k values each chunk put in its slots: per panel in chunk
  // order, then the panels' in the layout's order.
  template <std::size_t K>
  std::array<double, K> reduce(threads::ThreadCtx& t, Share& s) {
    std::vector<double>& buf = partials[s.parity];
    const std::span<double> span(buf.data(), static_cast<std::size_t>(nchunks) * K);
    ex.assemble_partials(t, span, K);
    std::array<double, K> sum{};
    std::array<double, 64> by_panel{};  // a process's panels (more: `many`)
    std::vector<double> many;
    double* panel_sums = by_panel.data();
    if (panels.size() > static_cast<std::int64_t>(by_panel.size())) {
      many.resize(static_cast<std::size_t>(panels.size()));
      panel_sums = many.data();
    }
    for (std::size_t m = 0; m < K; ++m) {
      for (std::int64_t j = panels.lo; j < panels.hi; ++j) {
        double ps = 0.0;
        for (std::int64_t c = panel_chunk[j]; c < panel_chunk[j + 1]; ++c)
          ps += span[static_cast<std::size_t>(c) * K + m];
        panel_sums[j - panels.lo] = ps;
      }
      const std::span<const double> values(panel_sums, static_cast<std::size_t>(panels.size()));
      sum[m] = lay.sum_order == SumOrder::running ? detail::running_sum(values)
                                                  : detail::tree_sum(panels, values);
    }
    ex.combine_sums(t, sum);
    s.parity ^= 1u;
    return sum;
  }

  double conj_grad(threads::ThreadCtx& t, Share& s) {
    double* pv = p.data() + lay.vector_lo;  // this process's vector rows of p
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
      product(t, q);
      double* out = partials[s.parity].data();
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
    product(t, r);
    double* out = partials[s.parity].data();
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

  // This thread's vector chunks and its groups of product rows (their panels built here).
  void share_out(threads::ThreadCtx& t, Share& s) {
    s.socket = t.socket();
    const auto [b0, b1] = threads::block_range(static_cast<std::size_t>(chunk_hi - chunk_lo),
                                               t.threads(), t.thread());
    s.c0 = chunk_lo + static_cast<std::int64_t>(b0);
    s.c1 = chunk_lo + static_cast<std::int64_t>(b1);
    if (s.c1 > s.c0) {
      s.lo = chunk_begin(s.c0);
      s.hi = chunk_end(s.c1 - 1);
    }
    const auto [g0, g1] =
        threads::block_range(static_cast<std::size_t>(prod_hi - prod_lo), t.threads(), t.thread());
    const std::size_t chunks = g1 - g0;
    // One thread alone takes one group unless the panel tree keeps left siblings: then groups
    // keep each group's rows of them (and of the output) in the L2 while the panels sweep past.
    const bool split = t.threads() > 1 || stack_levels > 0;
    const std::size_t groups = std::min<std::size_t>(split ? kGroups : 1, chunks);
    s.groups.resize(groups);
    const auto row_of = [&](std::size_t chunk) {  // product row index of a chunk's start
      return std::min(a.row_hi, (prod_lo + static_cast<std::int64_t>(chunk)) * kChunkRows) -
             a.row_lo;
    };
    for (std::size_t g = 0; g < groups; ++g) {
      const auto [h0, h1] =
          threads::block_range(chunks, static_cast<int>(groups), static_cast<int>(g));
      Group& gr = s.groups[g];
      gr.lo = row_of(g0 + h0);
      gr.hi = row_of(g0 + h1);
      gr.panels.build(a, panels, gr.lo, gr.hi);
    }
  }

  Result run(threads::ThreadCtx& t, const std::function<void(threads::ThreadCtx&)>& before_timed) {
    Share s;
    share_out(t, s);
    if (t.thread() == 0) {
      shares.assign(static_cast<std::size_t>(t.threads()), nullptr);
      counters = std::make_unique<Counter[]>(static_cast<std::size_t>(t.threads()));
    }
    t.barrier();
    shares[static_cast<std::size_t>(t.thread())] = &s;
    t.barrier();

    // One untimed iteration (page faults, caches), then x back to ones: the timed part starts
    // from the same state.
    reset_x(s);
    conj_grad(t, s);
    normalize(t, s);
    reset_x(s);
    ex.synchronize(t);
    if (before_timed) before_timed(t);

    COMPAS_REGION(t, "solve");  // inclusive: the exchanges' regions are nested inside
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
    res.threads = t.threads();
    res.nnz = a.nnz();
    res.model = inner_iteration_model(a.n, a.rows(), a.nnz(), layout_bytes);
    return res;
  }
};

Layout rows_layout(const Csr& a, SumOrder order) {
  return {a.row_lo, a.row_hi, 0, panel_count(a.n), false, order};
}

void Exchange::reduce_product(threads::ThreadCtx&, std::span<double>, std::span<double>) {
  throw std::logic_error("cg: this exchange does not reduce products (a rows layout only)");
}

void Exchange::combine_sums(threads::ThreadCtx&, std::span<double>) {}

Solver::Solver(const ClassParams& cp, const Csr& a, Exchange& exchange, Product product)
    : Solver(cp, a, exchange, rows_layout(a), product) {}

namespace {

bool chunk_aligned(std::int64_t row, std::int64_t na) {
  return row % kChunkRows == 0 || row == na;  // the last block ends at na
}

void check_layout(const ClassParams& cp, const Csr& a, const Layout& l) {
  if (a.n != cp.na)
    throw std::invalid_argument("cg: matrix of order " + std::to_string(a.n) + " for class " +
                                std::string(1, cp.cls) + " (na " + std::to_string(cp.na) + ")");
  if (a.row_lo < 0 || a.row_hi > a.n || a.row_hi < a.row_lo || !chunk_aligned(a.row_lo, a.n) ||
      !chunk_aligned(a.row_hi, a.n) || a.rowstr.size() != static_cast<std::size_t>(a.rows()) + 1)
    throw std::invalid_argument("cg: rows [" + std::to_string(a.row_lo) + ", " +
                                std::to_string(a.row_hi) +
                                ") are not a block of whole chunks (use row_block)");
  const bool vector_ok = l.vector_lo >= 0 && l.vector_hi <= a.n && l.vector_lo <= l.vector_hi &&
                         chunk_aligned(l.vector_lo, a.n) && chunk_aligned(l.vector_hi, a.n);
  const bool same_rows = l.vector_lo == a.row_lo && l.vector_hi == a.row_hi;
  const bool panels_ok =
      l.panel_lo >= 0 && l.panel_hi <= panel_count(a.n) && l.panel_lo < l.panel_hi;
  if (!vector_ok || !panels_ok || (!l.reduces_product && !same_rows))
    throw std::invalid_argument("cg: a layout of vector rows [" + std::to_string(l.vector_lo) +
                                ", " + std::to_string(l.vector_hi) + ") and panels [" +
                                std::to_string(l.panel_lo) + ", " + std::to_string(l.panel_hi) +
                                ") for product rows [" + std::to_string(a.row_lo) + ", " +
                                std::to_string(a.row_hi) + ")");
  if (l.sum_order == SumOrder::running && (l.panel_lo != 0 || l.panel_hi != panel_count(a.n)))
    throw std::invalid_argument(
        "cg: the running sum order over panels [" + std::to_string(l.panel_lo) + ", " +
        std::to_string(l.panel_hi) + ") of " + std::to_string(panel_count(a.n)) +
        ": it needs every panel (the rows layout); a grid adds in the panel tree's order");
  if (l.sum_order == SumOrder::running && l.reduces_product)
    throw std::invalid_argument(
        "cg: the running sum order with a layout that reduces its product over processes (a "
        "grid's): that reduction adds in the panel tree's order");
}

}  // namespace

Solver::Solver(const ClassParams& cp, const Csr& a, Exchange& exchange, const Layout& layout,
               Product product)
    : impl_(std::make_unique<Impl>(cp, a, exchange, layout)) {
#if defined(__x86_64__)
  impl_->avx2 = product == Product::automatic && base::cpu_runs(base::Isa::avx2);
#else
  (void)product;
#endif
  check_layout(cp, a, layout);
  Impl& m = *impl_;
  m.nchunks = chunk_count(cp.na);
  m.chunk_lo = (layout.vector_lo + kChunkRows - 1) / kChunkRows;
  m.chunk_hi = (layout.vector_hi + kChunkRows - 1) / kChunkRows;
  m.prod_lo = (a.row_lo + kChunkRows - 1) / kChunkRows;
  m.prod_hi = (a.row_hi + kChunkRows - 1) / kChunkRows;
  const std::size_t rows = static_cast<std::size_t>(layout.vector_hi - layout.vector_lo);
  m.x.assign(rows, 1.0);
  m.z.assign(rows, 0.0);
  m.r.assign(rows, 0.0);
  m.q.assign(rows, 0.0);
  m.p.assign(static_cast<std::size_t>(cp.na), 0.0);
  if (layout.reduces_product) m.w.assign(static_cast<std::size_t>(a.rows()), 0.0);
  for (std::int64_t j = 0; j <= panel_count(cp.na); ++j)
    m.panel_chunk.push_back(panel_columns(cp.na, j).first / kChunkRows);
  m.panel_chunk.back() = m.nchunks;
  m.steps = layout.sum_order == SumOrder::running ? detail::running_steps(m.panels)
                                                  : detail::leaf_steps(m.panels);
  m.stack_levels = detail::stack_depth(m.steps);
  m.stack.assign(static_cast<std::size_t>(m.stack_levels) * static_cast<std::size_t>(a.rows()),
                 0.0);
  for (auto& buf : m.partials) buf.assign(static_cast<std::size_t>(m.nchunks) * 2, 0.0);
  m.layout_bytes = detail::Panels::layout_bytes(a, m.panels, 0, a.rows());
}

Solver::~Solver() = default;

Result Solver::run(threads::ThreadCtx& t,
                   const std::function<void(threads::ThreadCtx&)>& before_timed) {
  return impl_->run(t, before_timed);
}

std::span<const double> Solver::z() const {
  return impl_->z;
}

Result run(threads::Team& team, const ClassParams& cp, SumOrder order) {
  const Csr a = make_matrix(cp);
  TeamExchange exchange;
  Solver solver(cp, a, exchange, rows_layout(a, order));
  Result result;
  team.run([&](threads::ThreadCtx& t) {
    Result mine = solver.run(t);
    if (t.thread() == 0) result = std::move(mine);
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

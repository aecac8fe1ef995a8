// NAS CG's product A p on one thread's rows: the matrix stored by column panel in slices of 8
// rows (SELL-8), the panels' sums added in the order of the given steps: the panel tree's, or
// left to right (cg.hpp, "Reproducibility").
#pragma once

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "cg_tree.hpp"
#include "cg_internal.hpp"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace compas::kernels::cg::detail {

// One thread's rows of the matrix, column panel by column panel, in slices of 8 rows (SELL-8
// with sorting inside each 64-row chunk): for panel j, the rows of every chunk are ordered by
// their number of entries in that panel (stable, longest first) and taken 8 at a time; a slice
// stores its entries column-major (entry t of its 8 rows, then entry t + 1), each row padded
// to the slice's longest with zeros (value 0, the panel's first column). Column indices are
// 16-bit offsets into the panel (10 bytes an entry instead of 12). The 8 rows of a slice
// are summed side by side, so the loop runs once per slice instead of once per row and exits
// where the branch predictor expects it; the sort keeps the padding small (a few percent).
// Each row is still summed from 0 over its panel entries in the row's column order and then
// handed to the sum over panels (Sink), so the results are those of one row at a time (a padded
// zero product leaves a sum unchanged). Built by the thread that uses it (its pages are local to
// it).
struct Panels {
  static constexpr int kLanes = 8;
  static constexpr std::uint8_t kNoRow = 0xff;
  static constexpr std::size_t kAhead = 256;     // entries the product prefetches ahead
  std::int64_t rows = 0, count = 0, slices = 0;  // slices per panel: ceil(rows / 8)
  std::vector<std::int64_t> column0;             // first column of each panel
  std::vector<std::uint32_t> start;              // count * slices + 1: first entry of slice (j, g)
  std::vector<std::uint8_t> lane_row;  // count * slices * 8: lane's row in the slice's chunk
  std::vector<std::uint16_t> col;      // column - column0 of its panel
  std::vector<double> val;
  static_assert(kPanelColumns <= 65536, "panel offsets are 16 bits");

  // The layout's shape for local rows [first, last) (first a chunk boundary): slice starts,
  // lanes' rows, and len = entries of every (panel, row), panel-major. Returns the entries
  // stored.
  static std::uint64_t plan(const Csr& a, PanelRange panels, std::int64_t first, std::int64_t last,
                            std::vector<std::uint32_t>& len, std::vector<std::uint32_t>& start,
                            std::vector<std::uint8_t>& lane_row) {
    static_assert(kChunkRows % kLanes == 0 && kChunkRows <= kNoRow);
    const std::int64_t* rs = a.rowstr.data();
    const std::size_t nr = static_cast<std::size_t>(last - first),
                      np = static_cast<std::size_t>(panels.size()), ns = (nr + kLanes - 1) / kLanes;
    len.assign(np * nr, 0);
    for (std::size_t r = 0; r < nr; ++r)
      for (std::int64_t k = rs[first + static_cast<std::int64_t>(r)];
           k < rs[first + static_cast<std::int64_t>(r) + 1]; ++k)
        ++len[local_panel(a, a.colidx[k], panels) * nr + r];
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

  // The panel of column `col` within `panels` (a column outside is a caller's error).
  static std::size_t local_panel(const Csr& a, std::int32_t col, PanelRange panels) {
    const std::int64_t j = panel_of(a.n, col) - panels.lo;
    if (j < 0 || j >= panels.size())
      throw std::logic_error("cg: column " + std::to_string(col) + " outside the panels");
    return static_cast<std::size_t>(j);
  }

  // Bytes of the layout of local rows [first, last) (what the product streams).
  static double layout_bytes(const Csr& a, PanelRange panels, std::int64_t first,
                             std::int64_t last) {
    std::vector<std::uint32_t> len, start;
    std::vector<std::uint8_t> lane_row;
    const std::uint64_t at = plan(a, panels, first, last, len, start, lane_row);
    return 10.0 * static_cast<double>(at) + 4.0 * static_cast<double>(start.size()) +
           static_cast<double>(lane_row.size());
  }

  void build(const Csr& a, PanelRange panels, std::int64_t first, std::int64_t last) {
    rows = last - first;
    count = panels.size();
    column0.clear();
    for (std::int64_t j = panels.lo; j < panels.hi; ++j)
      column0.push_back(panel_columns(a.n, j).first);
    slices = (rows + kLanes - 1) / kLanes;
    const std::int64_t* rs = a.rowstr.data();
    const std::size_t nr = static_cast<std::size_t>(rows), np = static_cast<std::size_t>(count),
                      ns = static_cast<std::size_t>(slices);
    std::vector<std::uint32_t> len;
    const std::uint64_t at = plan(a, panels, first, last, len, start, lane_row);
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
        const std::size_t j = local_panel(a, a.colidx[k], panels);
        std::uint32_t& to = next[j * nr + r];
        col[to] = static_cast<std::uint16_t>(a.colidx[k] - column0[j]);
        val[to] = a.values[k];
        to += kLanes;
      }
  }

  // out[r] = local row r of A times v for the rows [0, rows), panel by panel, the panels'
  // sums added in the steps' order (`steps`, one per panel: slot 0 is out, slot s >= 1 the
  // waiting left siblings' values of stack level s - 1, at stack + (s - 1) * stride).
  struct Sink {
    const LeafStep* steps;
    double* out;
    double* stack;
    std::size_t stride;
  };
  // Panel j's step with its arrays resolved and its pops a constant: v = from[kPops - 1][r] +
  // (... + (from[0][r] + v)), then to[r] = v. Resolved once per panel and swept with a loop of
  // its own per pops count, so the per-row work is the adds alone (no test of the count).
  template <int kPops>
  struct Step {
    const double* from[kPops > 0 ? kPops : 1] = {};
    double* to = nullptr;
    Step(const Sink& sink, const LeafStep& s) {
      for (int k = 0; k < kPops; ++k) from[k] = slot(sink, s.from[static_cast<std::size_t>(k)]);
      to = slot(sink, s.store);
    }
    static double* slot(const Sink& sink, std::uint8_t s) {
      return s == 0 ? sink.out : sink.stack + (s - 1u) * sink.stride;
    }
    void put(std::size_t r, double v) const {
      for (int k = 0; k < kPops; ++k) v = from[k][r] + v;
      to[r] = v;
    }
  };
  // sweep(Step<pops>) for panel j's step.
  template <class Sweep, int kPops = 0>
  static void with_step(const Sink& sink, std::size_t j, Sweep&& sweep) {
    const LeafStep& s = sink.steps[j];
    if constexpr (kPops < LeafStep::kMaxDepth) {
      if (s.pops != kPops) return with_step<Sweep, kPops + 1>(sink, j, std::forward<Sweep>(sweep));
    } else if (s.pops != kPops) {
      throw std::logic_error("cg: a leaf step of " + std::to_string(s.pops) + " pops");
    }
    sweep(Step<kPops>(sink, s));
  }

  // Hands the 8 sums of slice g of panel j to the step, each to its row.
  template <class StepT>
  void put_slice(const StepT& step, std::size_t j, std::size_t g, const double* sum) const {
    const std::size_t ns = static_cast<std::size_t>(slices);
    const std::uint8_t* lr = lane_row.data() + (j * ns + g) * kLanes;
    const std::size_t o = g * kLanes / kChunkRows * kChunkRows;
    for (int i = 0; i < kLanes; ++i)
      if (lr[i] != kNoRow) step.put(o + lr[i], sum[i]);
  }

  void times(const double* v, const Sink& sink, bool avx2) const {
    for (std::size_t j = 0; j < static_cast<std::size_t>(count); ++j) {
      const double* vj = v + column0[j];
      with_step(sink, j, [&](const auto& step) {
#if defined(__x86_64__)
        if (avx2) return panel_avx2(vj, j, step);
#endif
        (void)avx2;
        panel_generic(vj, j, step);
      });
    }
  }

#if defined(__x86_64__)
  // The same sums with 4 lanes to a vector: the gathered values are paired by scalar loads into
  // 128-bit halves (what the gather instructions did no faster), the values loaded whole; each
  // lane multiplies and then adds (no fused multiply-add), so the bits are those of
  // panel_generic.
  template <class StepT>
  __attribute__((target("avx2"))) void panel_avx2(const double* vj, std::size_t j,
                                                  const StepT& step) const {
    const std::uint16_t* ci = col.data();
    const double* va = val.data();
    const std::size_t ns = static_cast<std::size_t>(slices);
    static_assert(kLanes == 8);
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
      put_slice(step, j, g, sum);
    }
  }
#endif

  template <class StepT>
  void panel_generic(const double* vj, std::size_t j, const StepT& step) const {
    const std::uint16_t* ci = col.data();
    const double* va = val.data();
    const std::size_t ns = static_cast<std::size_t>(slices);
    for (std::size_t g = 0; g < ns; ++g) {
      double sum[kLanes] = {};
      for (std::uint32_t k = start[j * ns + g], e = start[j * ns + g + 1]; k < e; k += kLanes) {
        // 2 KiB ahead in the values and 1 KiB in the offsets (the arrays are padded for it):
        // the hardware prefetcher alone leaves this loop 10% slower (class B, one thread).
        __builtin_prefetch(va + k + kAhead);
        __builtin_prefetch(ci + k + 2 * kAhead);
        for (int i = 0; i < kLanes; ++i) sum[i] = sum[i] + va[k + i] * vj[ci[k + i]];
      }
      put_slice(step, j, g, sum);
    }
  }
};

}  // namespace compas::kernels::cg::detail

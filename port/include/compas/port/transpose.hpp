// compas::transpose: a distributed transpose of a 2-D DistArray, what a port from MPI calls
// instead of packing blocks, MPI_Alltoall and unpacking them (PRK's transpose, FFTs, ADI sweeps):
//
//   compas::DistArray<double, 2> a(rt, n, m), b(rt, m, n);   // rows over the processes
//   compas::transpose(a, b);                                  // b(i, j) = a(j, i)
//   compas::transpose(a, b, compas::op::sum{});               // b(i, j) += a(j, i)
//
// a is R x C and b is C x R (global domains, any origin: b's rows are a's columns), both cut by
// rows over all the processes (Decomposition::rows, the default, or a {P, 1} grid); any halos.
// With an operator, b(i, j) = op(b(i, j), a(j, i)) for every owned element of b. With an update
// too, a's elements change once they are read, as PRK's transpose does (B += A^T, then A += 1):
//
//   compas::transpose(a, b, compas::op::sum{}, [](double& x) { x += 1.0; });
//
// update(x) runs once for every owned element x of a, after its value went into b: at one
// process in the same tiles (one sweep over a, not two), at several in one pass over this
// process's a after the closing meeting (fusing its own block measured slower there).
//
// How: each process fills its own rows of b, reading the columns of a that they need from every
// process in turn. Where that process's memory is mapped here (same host), the block is read in
// place, transposed on the fly in tiles, with no copy; otherwise its rows arrive by one-sided gets
// into a buffer first. The processes meet before (every a is written) and after (nobody writes a
// while another may still read it): two barriers. The tile loops run in an OpenMP parallel loop
// when the program is compiled with OpenMP (the caller's threads, as the Runtime pinned them).
//
// Funneled and collective, like the other collectives (collectives.hpp): the thread that made the
// Runtime, outside run() and outside parallel regions, every process the same call. Errors, the
// same on every process before anything moves: std::invalid_argument when the domains are not
// transposes of each other or an array is not cut by rows (naming both shapes), when a and b are
// one array; std::logic_error from another thread.
#pragma once

#include <algorithm>
#include <cstddef>
#include <type_traits>

#include "compas/port/dist_array.hpp"

namespace compas {

// The update that leaves a as it is (transpose's default).
struct no_update {
  template <class T>
  void operator()(T&) const {}
};

namespace detail {

// Rows `rows` x columns `cols` of a (global indices) at `data`, `stride` elements apart; `own`
// is true when the update is fused into this block (this process's own elements, in place, at
// one process).
struct TransposeBlock {
  std::byte* data;
  index stride;
  Range rows, cols;
  bool own = false;
};

// The untyped transpose: checks, meets, and hands `apply` every block of a this process needs
// (one per process), then meets again.
class TransposeCore {
 public:
  TransposeCore(DistBase& a, DistBase& b, std::size_t elem_bytes);
  using Apply = void (*)(void* ctx, const TransposeBlock& block);
  void run(Apply apply, void* ctx);

 private:
  DistBase* a_;
  DistBase* b_;
  std::size_t elem_;
};

// `each(b(i, j), a(j, i))` over the block, in tiles of 32 x 32 (each tile's reads of a, column by
// column, stay in the cache). Src is T or const T.
template <class T, class Src, class Each>
void transpose_tiles(const TransposeBlock& k, DistArray<T, 2>& b, Src* src, Each each) {
  constexpr index kTile = 32;
  const index rows = k.rows.size(), cols = k.cols.size(), stride = k.stride;
#ifdef _OPENMP  // (without OpenMP the loop is serial, and no unknown pragma is left to warn)
#pragma omp parallel for schedule(static)
#endif
  for (index i0 = 0; i0 < cols; i0 += kTile) {
    // The tile's bounds as values: std::min's reference into a temporary kept them in memory,
    // reloaded (and the temporary stored again) for every element.
    const index i1 = std::min(i0 + kTile, cols);
    for (index j0 = 0; j0 < rows; j0 += kTile) {
      const index j1 = std::min(j0 + kTile, rows);
      for (index i = i0; i < i1; ++i) {
        T* out = &b(k.cols.lo + i, k.rows.lo);
        Src* column = src + i;
        for (index j = j0; j < j1; ++j) each(out[j], column[j * stride]);
      }
    }
  }
}

// b(i, j) = op(b(i, j), a(j, i)) over the block, and update(a(j, i)) right after when the block
// is this process's own (only this process writes it, and nobody else reads it) and there is an
// update.
template <class T, class Op, class Update>
void transpose_block(const TransposeBlock& k, DistArray<T, 2>& b, Op& op, Update& update) {
  if constexpr (!std::is_same_v<Update, no_update>) {
    if (k.own) {
      transpose_tiles(k, b, reinterpret_cast<T*>(k.data), [&](T& to, T& from) {
        to = op(to, from);
        update(from);
      });
      return;
    }
  }
  transpose_tiles(k, b, reinterpret_cast<const T*>(k.data),
                  [&](T& to, const T& from) { to = op(to, from); });
}

// update(x) for every element of a this process owns, on the OpenMP team.
template <class T, class Update>
void update_all(DistArray<T, 2>& a, Update& update) {
  const index width = a.cols().size();
#ifdef _OPENMP
#pragma omp parallel for schedule(static)
#endif
  for (index i = a.rows().lo; i < a.rows().hi; ++i) {
    T* row = &a(i, a.cols().lo);  // contiguous: the loop vectorizes
    for (index j = 0; j < width; ++j) update(row[j]);
  }
}

}  // namespace detail

// The operator that keeps a's value: b = a^T.
struct replace {
  template <class T>
  T operator()(const T&, const T& from_a) const {
    return from_a;
  }
};

template <class T, class Op = replace, class Update = no_update>
void transpose(DistArray<T, 2>& a, DistArray<T, 2>& b, Op op = {}, Update update = {}) {
  detail::TransposeCore core(a, b, sizeof(T));
  struct Ctx {
    DistArray<T, 2>* b;
    Op* op;
    Update* update;
    bool fused;  // the update went into the tiles (one process: all of a)
  } ctx{&b, &op, &update, false};
  core.run(
      [](void* c, const detail::TransposeBlock& k) {
        auto* x = static_cast<Ctx*>(c);
        detail::transpose_block(k, *x->b, *x->op, *x->update);
        x->fused = x->fused || k.own;
      },
      &ctx);
  if constexpr (!std::is_same_v<Update, no_update>) {  // after the closing meeting: nobody reads a
    if (!ctx.fused) detail::update_all(a, update);
  }
}

}  // namespace compas

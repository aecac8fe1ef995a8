// compas::redistribute: one call that moves a whole 3-D level from one distribution to another,
// what a multigrid code does where a coarse level has fewer cells than the process grid: the
// residual gathered from every process onto a group (agglomeration), the coarse correction sent
// back to every process (redistribution):
//
//   compas::DistArray<double, 3> r(rt, dom, {.partition = p});           // every process
//   compas::Group few = compas::group_of(rt, rt.process() < 2 ? std::vector<int>{0, 1}
//                                                             : std::vector<int>{});
//   compas::DistArray<double, 3> r_few(few, dom), u_few = r_few.like();  // processes 0 and 1
//   compas::redistribute(r, r_few);   // agglomerate: every cell of r onto 0 and 1
//   ... coarser levels on `few`: r_few.coarsened(2), ...
//   compas::redistribute(u_few, u);   // redistribute: back onto every process
//
// Any two 3-D arrays of one domain and element type, over any partitions, on the job or on groups
// (either way round): every owned cell of `to` gets the value of that cell in `from`; halo cells
// of `to` are left as they were (exchange_halos() afterwards if a stencil needs them).
//
// A collective over the whole job, funneled: every process calls it, in the same order as its
// other collectives, holding cells of either array or of neither. Before anything moves the
// processes agree (detail::agree, two allreduces of 24 bytes) that they copy the same array into
// the same array; arrays that differ between processes, arrays of different domains and an
// array whose halo exchange is pending are one CollectiveError on every process naming them.
// Then one alltoallv over the job on counts every process knows (both partitions are known
// everywhere): each process sends the cells of its part of `from` lying in another's part of
// `to`, packed row by row, and unpacks what arrives; its own cells (in its parts of both) are
// copied row by row with no buffer, and at one process that copy is all there is. Memory: one
// send buffer of at most this process's part of `from` and one receive buffer of at most its
// part of `to`.
#pragma once

#include "compas/port/dist_array3.hpp"

namespace compas {

namespace detail {
// The untyped transfer (port/src/dist_redistribute3.cpp).
void redistribute3(Halo3& from, Halo3& to);
}  // namespace detail

template <class T>
void redistribute(DistArray<T, 3>& from, DistArray<T, 3>& to) {
  detail::redistribute3(detail::DistAccess3::halo(from), detail::DistAccess3::halo(to));
}

}  // namespace compas

// ProcessCollectives::reduce: a binomial tree rooted at the root, pipelined chunk by chunk over
// the channels of collectives_channel.hpp (see collectives.hpp).
#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "collectives_channel.hpp"
#include "collectives_ops.hpp"
#include "compas/comm/collectives.hpp"

namespace compas::comm {

using detail::binomial;
using detail::combine_into;
using detail::Kind;
using detail::type_code;

// Node v of the tree (v = rank - root mod P) combines its own `in` with its children's partials,
// chunk by chunk as they arrive, and sends the result to its parent; a leaf sends `in` itself.
template <class T>
void ProcessCollectives::Impl::tree_reduce(std::span<const T> in, T* out, Op op, int root) {
  const int v = (me - root + p) % p;
  int parent = -1;
  std::vector<int> children;
  binomial(v, p, parent, children);
  auto rank = [&](int u) { return (u + root) % p; };
  const auto* own = reinterpret_cast<const std::byte*>(in.data());
  const std::size_t bytes = in.size_bytes();
  if (children.empty()) {
    send_message(rank(parent), own, bytes);
    return;
  }
  if (!out) partial.resize(bytes);
  std::byte* acc = out ? reinterpret_cast<std::byte*>(out) : partial.data();
  for (std::uint64_t j = 0, nc = chunks(bytes); j < nc; ++j) {
    const std::size_t at = static_cast<std::size_t>(j) * payload;
    const std::size_t count = chunk_len(bytes, j) / sizeof(T);
    const std::byte* left = own;
    for (int c : children) {
      const std::byte* theirs = receive(rank(c), bytes, j);
      combine_into(reinterpret_cast<T*>(acc + at), reinterpret_cast<const T*>(left + at),
                   reinterpret_cast<const T*>(theirs), count, op);
      left = acc;
      release(rank(c));
    }
    if (parent >= 0) send(rank(parent), acc, bytes, j);
  }
}

template <class T>
void ProcessCollectives::reduce_impl(std::span<const T> in, std::span<T> out, Op op, int root) {
  static_assert(is_reducible_v<T>);
  Impl& m = *impl_;
  if (op != Op::sum && op != Op::min && op != Op::max && op != Op::prod)
    throw std::invalid_argument("reduce: operator " + std::to_string(static_cast<int>(op)) +
                                " is not allowed: sum, min, max or prod");
  if (root < 0 || root >= m.p)
    throw std::invalid_argument("reduce: root " + std::to_string(root) +
                                " is outside the group: ranks are 0.." + std::to_string(m.p - 1));
  const bool at_root = m.me == root;
  if (at_root && out.size() != in.size())
    throw std::invalid_argument("reduce: out holds " + std::to_string(out.size()) +
                                " elements at the root, in " + std::to_string(in.size()) +
                                ": the same length is needed");
  if (m.p == 1) {
    if (out.data() != in.data()) std::copy(in.begin(), in.end(), out.begin());
    return;
  }
  m.run([&] {
    m.begin(Kind::reduce, sizeof(T),
            static_cast<std::uint64_t>(op) | type_code<T>() << 8 |
                static_cast<std::uint64_t>(root) << 16);
    m.tree_reduce(in, at_root ? out.data() : nullptr, op, root);
  });
}

template void ProcessCollectives::reduce_impl<std::int32_t>(std::span<const std::int32_t>,
                                                            std::span<std::int32_t>, Op, int);
template void ProcessCollectives::reduce_impl<std::int64_t>(std::span<const std::int64_t>,
                                                            std::span<std::int64_t>, Op, int);
template void ProcessCollectives::reduce_impl<std::uint32_t>(std::span<const std::uint32_t>,
                                                             std::span<std::uint32_t>, Op, int);
template void ProcessCollectives::reduce_impl<std::uint64_t>(std::span<const std::uint64_t>,
                                                             std::span<std::uint64_t>, Op, int);
template void ProcessCollectives::reduce_impl<float>(std::span<const float>, std::span<float>, Op,
                                                     int);
template void ProcessCollectives::reduce_impl<double>(std::span<const double>, std::span<double>,
                                                      Op, int);

}  // namespace compas::comm

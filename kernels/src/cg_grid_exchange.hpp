// NAS CG's exchanges on a C x C process grid (cg.hpp, "Decomposition"), through one window per
// process:
//   reduce: [2][L][B] doubles  the partner's half of the rows at step s of the row reduction
//   gather: [2][B] doubles     the pieces of this process's vector rows, from the processes of
//                              the process row that holds them as product rows
//   sums:   [2][L][4] doubles  the partner's node sums at step s of a dot product's reduction
// (L = log2 C, B the largest block). Each is used alternately by parity, with its own signals: a
// process starts use j + 2 of one only after use j + 1 has heard from everyone it reads, and each
// of those puts for j + 1 only after it has read what it got for j.
#pragma once

#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "compas/comm/window.hpp"
#include "cg_internal.hpp"
#include "compas/runtime/runtime.hpp"

namespace compas::kernels::cg::detail {

class GridExchange final : public Exchange {
 public:
  static constexpr std::size_t kMaxSums = 4;

  GridExchange(Runtime& rt, std::int64_t na, Grid g);

  void assemble_vector(threads::ThreadCtx& t, std::span<double> p) override;
  void assemble_partials(threads::ThreadCtx& t, std::span<double> partials, std::size_t k) override;
  void synchronize(threads::ThreadCtx& t) override;
  void reduce_product(threads::ThreadCtx& t, std::span<double> w, std::span<double> out) override;
  void combine_sums(threads::ThreadCtx& t, std::span<double> values) override;

  // Bytes this process has put so far.
  double bytes_sent() const { return bytes_; }

 private:
  using Range = std::pair<std::size_t, std::size_t>;
  // Rows (local to block i) of pieces [q0, q1) of this process's product rows.
  Range piece_rows(int q0, int q1) const;
  std::size_t reduce_at(std::size_t parity, int step) const;
  std::size_t gather_at(std::size_t parity) const;
  std::size_t sums_at(std::size_t parity, int step) const;
  void gather(threads::ThreadCtx& t, std::span<double> w, std::span<double> out, Range piece,
              std::size_t parity, std::uint64_t rounds);

  Runtime& rt_;
  int c_, levels_, i_, j_;
  std::vector<Range> blocks_;             // rows of block k
  std::vector<std::size_t> piece_chunk_;  // chunk (local to block i) where piece q starts; C + 1
  std::size_t max_block_ = 0;
  comm::Window<double> win_;
  std::uint64_t reduce_calls_ = 0, sums_calls_ = 0;
  std::array<std::array<double, kMaxSums>, 2> result_{};
  double bytes_ = 0;
};

}  // namespace compas::kernels::cg::detail

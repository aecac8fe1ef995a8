// UpdateBatch's checks and count exchange (update_batch.hpp): everything not templated on T.
#include "compas/port/update_batch.hpp"

#include <atomic>
#include <stdexcept>
#include <string>

#include "compas/base/type_name.hpp"

namespace compas::detail {

namespace {

const char* op_name(comm::AtomicOp op) {
  switch (op) {
    case comm::AtomicOp::add:
      return "add";
    case comm::AtomicOp::bit_and:
      return "bit_and";
    case comm::AtomicOp::bit_or:
      return "bit_or";
    case comm::AtomicOp::bit_xor:
      return "bit_xor";
  }
  return "an unknown operator";
}

// What each process sends every other before the updates: what it flushes, and how many (at
// construction, its batch's number instead).
struct Head {
  std::uint64_t type = 0;
  std::uint64_t op = 0;
  std::uint64_t count = 0;
  std::uint64_t chunks = 0;
};

// The same text on every process (each has every process's head): "" when the batches agree.
std::string heads_verdict(const Processes& ps, const std::vector<Head>& heads,
                          const std::type_info& type) {
  for (std::size_t r = 1; r < heads.size(); ++r) {
    const std::string who = ps.name(0) + " and " + ps.name(static_cast<int>(r));
    if (heads[r].type != heads[0].type)
      return who + " have batches of different element types (of the same size; " +
             base::type_name(type) + " here): every process has an UpdateBatch<T> of one T";
    if (heads[r].op != heads[0].op)
      return ps.name(0) + " applies " + op_name(static_cast<comm::AtomicOp>(heads[0].op)) + ", " +
             ps.name(static_cast<int>(r)) + " " +
             op_name(static_cast<comm::AtomicOp>(heads[r].op)) +
             ": every process's batch has the same operator";
  }
  return "";
}

}  // namespace

int new_batch_thread() {
  static std::atomic<int> threads{0};
  return threads.fetch_add(1, std::memory_order_relaxed);
}

void check_batch_op(comm::AtomicOp op, bool integral, const std::type_info& type) {
  if (op == comm::AtomicOp::add) return;
  if (op == comm::AtomicOp::bit_xor || op == comm::AtomicOp::bit_or ||
      op == comm::AtomicOp::bit_and) {
    if (integral) return;
    throw std::invalid_argument(std::string("compas::UpdateBatch: operator ") + op_name(op) +
                                " on elements of type " + base::type_name(type) +
                                ": only add is allowed on a floating-point type");
  }
  throw std::invalid_argument("compas::UpdateBatch: operator " +
                              std::to_string(static_cast<int>(op)) +
                              " is not one of add, bit_xor, bit_or, bit_and");
}

std::uint64_t make_batch(const Processes& ps, std::uint64_t table, const std::type_info& type,
                         std::size_t elem, comm::AtomicOp op, index size) {
  ps.runtime().check_funneled("compas::UpdateBatch", kFunneled);
  agree(ps,
        {CollectiveCall::update_make, elem, static_cast<std::size_t>(size), -1, true, {}, table});
  const auto P = static_cast<std::size_t>(ps.processes());
  const std::uint64_t number = object_number(ObjectKind::update_batch, false);
  std::vector<Head> all(P);
  const Head mine{base::type_id(type), static_cast<std::uint64_t>(op), number};
  if (P == 1)
    all[0] = mine;
  else
    ps.collectives().allgather(std::span<const Head>(&mine, 1), std::span<Head>(all));
  std::string msg = heads_verdict(ps, all, type);
  for (std::size_t r = 1; r < P && msg.empty(); ++r)
    if (all[r].count != all[0].count)
      msg = ps.name(0) + " makes UpdateBatch #" + std::to_string(all[0].count) + ", " +
            ps.name(static_cast<int>(r)) + " UpdateBatch #" + std::to_string(all[r].count) +
            ": every process makes the same batches in the same order";
  if (!msg.empty())
    throw CollectiveError("compas::UpdateBatch::UpdateBatch" + ps.where() + ": " + msg,
                          ps.job_rank(0));
  return object_number(ObjectKind::update_batch, true);
}

FlushCounts flush_counts(const Processes& ps, std::uint64_t batch, const std::type_info& type,
                         std::size_t elem, comm::AtomicOp op, index size,
                         std::span<const std::size_t> send_counts,
                         std::span<const std::uint64_t> send_chunks) {
  agree(ps,
        {CollectiveCall::update_flush, elem, static_cast<std::size_t>(size), -1, true, {}, batch});
  const auto P = static_cast<std::size_t>(ps.processes());
  std::vector<Head> out(P), in(P);
  for (std::size_t r = 0; r < P; ++r)
    out[r] = {base::type_id(type), static_cast<std::uint64_t>(op), send_counts[r],
              send_chunks.empty() ? 0 : send_chunks[r]};
  const std::vector<std::size_t> ones(P, 1);
  exchange<Head>(ps, out, ones, in, ones);
  if (const std::string msg = heads_verdict(ps, in, type); !msg.empty())
    throw CollectiveError("compas::UpdateBatch::flush" + ps.where() + ": " + msg, ps.job_rank(0));
  FlushCounts counts{std::vector<std::size_t>(P), std::vector<std::uint64_t>(P)};
  for (std::size_t r = 0; r < P; ++r) {
    counts.updates[r] = in[r].count;
    counts.chunks[r] = in[r].chunks;
  }
  return counts;
}

}  // namespace compas::detail

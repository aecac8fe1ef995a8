// allreduce and exclusive_scan with a caller's operator (collectives.hpp): recursive doubling over
// the channels of collectives_channel.hpp, whole messages exchanged and then combined (a value
// may be of any size, so a chunk boundary may cut one).
//
// The operator is applied only as f(lower ranks' partial, higher ranks' partial), on partials of
// contiguous blocks of ranks: any associative f gives the rank-order result, and both partners of
// an exchange compute the same bits.
//
// When f throws, the schedule still runs to its end, so every process's channel counts stay in
// step: a process whose partial is missing sends its (stale) bytes with Header::op_failed set,
// and whoever receives such a message does not apply f to it and passes the mark on with its own
// partial. At the end a process whose result is missing throws.
//
// A peer whose chunk carries another element type or operator (Header::differ) is handled the
// same way: the schedule runs to its end with the pair marked, nobody applies f to the other's
// bytes, and every process the mark reached throws naming both calls, read from the two ranks'
// scratch windows (publish).
#include <algorithm>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <string>

#include "collectives_channel.hpp"
#include "compas/base/type_name.hpp"
#include "compas/comm/collectives.hpp"

namespace compas::comm {

namespace {

// What this process knows of failures of f in the call: its own exception, and the lowest rank
// known to have seen one (as Header::op_failed: rank + 1, 0 for none).
struct Failure {
  std::exception_ptr own;
  std::uint32_t rank1 = 0;
  void note(std::uint32_t r1) {
    if (r1 != 0 && (rank1 == 0 || r1 < rank1)) rank1 = r1;
  }
};

// out[i] = f(left[i], right[i]) for n values; false (noted in `failure`) when f threw.
bool apply(const detail::ErasedOp& op, const std::byte* left, const std::byte* right,
           std::byte* out, std::size_t n, Failure& failure, int me) {
  try {
    for (std::size_t i = 0, at = 0; i < n; ++i, at += op.size)
      op.apply(op.f, left + at, right + at, out + at);
    return true;
  } catch (...) {
    if (!failure.own) failure.own = std::current_exception();
    failure.note(static_cast<std::uint32_t>(me) + 1);
    return false;
  }
}

// The end of a call: rethrows f's exception where it threw, else throws when the result is missing.
void finish(const char* what, const Failure& failure, bool missing) {
  if (failure.own) std::rethrow_exception(failure.own);
  if (missing)
    throw std::runtime_error(std::string(what) + ": the operator threw on rank " +
                             std::to_string(failure.rank1 - 1) +
                             " (its exception is rethrown there), so this process has no result");
}

// Recursive doubling over detail::Doubling's pairing; `acc` (n values) becomes the result.
// Returns whether the result is missing (f threw somewhere it depends on).
bool allreduce_doubling(ProcessCollectives::Impl& m, std::byte* acc, std::size_t n,
                        const detail::ErasedOp& op, Failure& failure) {
  const std::size_t bytes = n * op.size;
  std::vector<std::byte>& in = m.user_in;
  in.resize(bytes);
  bool missing = false;
  auto mark = [&] { m.flag_out = missing ? failure.rank1 : 0; };
  // After a message from a peer arrived in `in`: acc = f(in, acc) or f(acc, in).
  auto absorb = [&](bool from_lower) {
    failure.note(m.flag_in);
    if (missing || m.flag_in != 0 || m.differ[0] != 0) {
      missing = true;
      return;
    }
    missing = from_lower ? !apply(op, in.data(), acc, acc, n, failure, m.me)
                         : !apply(op, acc, in.data(), acc, n, failure, m.me);
  };
  const detail::Doubling d(m.p);
  if (d.folds(m.me)) {
    m.send_message(m.me + 1, acc, bytes);
  } else {
    if (d.absorbs(m.me)) {
      m.receive_message(m.me - 1, in.data(), bytes);
      absorb(true);
    }
    const int v = d.vrank(m.me);
    for (int mask = 1; mask < d.p2; mask <<= 1) {
      const int vpartner = v ^ mask;
      mark();
      m.exchange(d.rank_of(vpartner), acc, in.data(), bytes);
      absorb(vpartner < v);
    }
  }
  if (d.absorbs(m.me)) {
    mark();
    m.send_message(m.me - 1, acc, bytes);
  } else if (d.folds(m.me)) {
    m.receive_message(m.me + 1, acc, bytes);
    failure.note(m.flag_in);
    missing = m.flag_in != 0;
  }
  return missing;
}

// Recursive doubling scan: in round `mask` a process exchanges its partial (the fold of its block
// of ranks so far) with rank ^ mask if that exists. A lower partner's partial covers the ranks
// just below this block: it goes in front of the prefix and of the partial; a higher one's goes
// behind the partial. Returns whether the prefix is missing; `have` says whether `out` was
// written (false on rank 0).
bool scan_doubling(ProcessCollectives::Impl& m, const std::byte* value, std::byte* out,
                   std::size_t n, const detail::ErasedOp& op, Failure& failure, bool& have) {
  const std::size_t bytes = n * op.size;
  std::vector<std::byte>&in = m.user_in, &partial = m.user_partial;
  in.resize(bytes);
  partial.resize(bytes);
  if (bytes) std::memcpy(partial.data(), value, bytes);
  bool partial_missing = false, prefix_missing = false;
  have = false;
  for (int mask = 1; mask < m.p; mask <<= 1) {
    const int partner = m.me ^ mask;
    if (partner >= m.p) continue;
    m.flag_out = partial_missing ? failure.rank1 : 0;
    m.exchange(partner, partial.data(), in.data(), bytes);
    failure.note(m.flag_in);
    const bool in_missing = m.flag_in != 0 || m.differ[0] != 0;
    partial_missing = partial_missing || in_missing;
    if (partner > m.me) {
      if (!partial_missing)
        partial_missing = !apply(op, partial.data(), in.data(), partial.data(), n, failure, m.me);
      continue;
    }
    prefix_missing = prefix_missing || in_missing;
    if (!prefix_missing) {
      if (!have) {
        if (bytes) std::memcpy(out, in.data(), bytes);
      } else {
        prefix_missing = !apply(op, in.data(), out, out, n, failure, m.me);
      }
    }
    have = true;
    if (!partial_missing)
      partial_missing = !apply(op, in.data(), partial.data(), partial.data(), n, failure, m.me);
  }
  return prefix_missing;
}

}  // namespace

void ProcessCollectives::Impl::publish(const detail::ErasedOp& op) {
  if (op.id == call_text_id) return;
  std::string text = base::type_name(*op.type) + " with " + base::type_name(*op.op);
  text.resize(std::min(text.size(), detail::kCallTextBytes - 1));
  std::memcpy(win->local() + call_text_offset(), text.c_str(), text.size() + 1);
  call_text_id = op.id;
}

std::string ProcessCollectives::Impl::call_text(int rank) {
  char text[detail::kCallTextBytes] = {};
  try {
    if (rank == me)
      std::memcpy(text, win->local() + call_text_offset(), sizeof text);
    else
      win->get(rank, call_text_offset(), text, sizeof text);
  } catch (const std::exception& e) {
    return std::string("a call whose types could not be read (") + e.what() + ")";
  }
  text[sizeof text - 1] = '\0';
  return text;
}

std::string ProcessCollectives::Impl::differ_message(const char* what) {
  const int a = static_cast<int>(differ[0]) - 1, b = static_cast<int>(differ[1]) - 1;
  return std::string(what) + " (call #" + std::to_string(seq) + "): rank " + std::to_string(a) +
         " passes " + call_text(a) + ", rank " + std::to_string(b) + " passes " + call_text(b) +
         ": every process must pass the same element type and operator";
}

void ProcessCollectives::allreduce_user(void* inout, std::size_t n, const detail::ErasedOp& op) {
  Impl& m = *impl_;
  if (m.p == 1) return;
  Failure failure;
  bool missing = false;
  m.run([&] {
    m.publish(op);
    m.begin(detail::Kind::allreduce_user, op.size, op.id);
    missing = allreduce_doubling(m, static_cast<std::byte*>(inout), n, op, failure);
    if (m.differ[0] != 0) throw std::invalid_argument(m.differ_message("allreduce"));
  });
  finish("allreduce", failure, missing);
}

void ProcessCollectives::exclusive_scan_user(const void* in, void* out, std::size_t n,
                                             const detail::ErasedOp& op) {
  Impl& m = *impl_;
  if (m.p == 1) return;
  Failure failure;
  bool missing = false, have = false;
  m.run([&] {
    m.publish(op);
    m.begin(detail::Kind::exclusive_scan_user, op.size, op.id);
    missing = scan_doubling(m, static_cast<const std::byte*>(in), static_cast<std::byte*>(out), n,
                            op, failure, have);
    if (m.differ[0] != 0) throw std::invalid_argument(m.differ_message("exclusive_scan"));
  });
  finish("exclusive_scan", failure, missing);
}

}  // namespace compas::comm

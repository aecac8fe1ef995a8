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
// Before any data moves, the processes agree on the call (agree_on_call): its kind, element size,
// number of elements and type ids, each word beside its complement, go through one allreduce
// (max) of 64 bytes, whose result tells every process alike whether all passed the same. If not,
// an allgather of each process's call as text follows and every process throws the same
// std::invalid_argument naming rank 0's call and the lowest rank whose call differs. A difference
// that changes the number of chunks can no longer leave a process waiting for chunks that never
// come, or one that never meets the differing pair returning a result. The cost when all agree:
// one recursive doubling of a single 64-byte chunk per call (ceil(log2 P) exchanges, two more
// steps beyond a power of two), against the same number of whole-vector exchanges of the call.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

#include "collectives_channel.hpp"
#include "compas/base/type_name.hpp"
#include "compas/comm/collectives.hpp"
#include "internals.hpp"

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
bool allreduce_doubling(CollectivesImpl& m, std::byte* acc, std::size_t n,
                        const detail::ErasedOp& op, Failure& failure) {
  const std::size_t bytes = n * op.size;
  std::vector<std::byte>& in = m.user_in;
  in.resize(bytes);
  bool missing = false;
  auto mark = [&] { m.flag_out = missing ? failure.rank1 : 0; };
  // After a message from a peer arrived in `in`: acc = f(in, acc) or f(acc, in).
  auto absorb = [&](bool from_lower) {
    failure.note(m.flag_in);
    if (missing || m.flag_in != 0) {
      missing = true;
      return;
    }
    missing = from_lower ? !apply(op, in.data(), acc, acc, n, failure, m.job(m.me))
                         : !apply(op, acc, in.data(), acc, n, failure, m.job(m.me));
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
bool scan_doubling(CollectivesImpl& m, const std::byte* value, std::byte* out, std::size_t n,
                   const detail::ErasedOp& op, Failure& failure, bool& have) {
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
    const bool in_missing = m.flag_in != 0;
    partial_missing = partial_missing || in_missing;
    if (partner > m.me) {
      if (!partial_missing)
        partial_missing =
            !apply(op, partial.data(), in.data(), partial.data(), n, failure, m.job(m.me));
      continue;
    }
    prefix_missing = prefix_missing || in_missing;
    if (!prefix_missing) {
      if (!have) {
        if (bytes) std::memcpy(out, in.data(), bytes);
      } else {
        prefix_missing = !apply(op, in.data(), out, out, n, failure, m.job(m.me));
      }
    }
    have = true;
    if (!partial_missing)
      partial_missing =
          !apply(op, in.data(), partial.data(), partial.data(), n, failure, m.job(m.me));
  }
  return prefix_missing;
}

// What every process must share of a call, and how it reads.
struct CallRecord {
  std::uint64_t words[4];  // kind, element size, number of elements, call_id
  char text[detail::kCallTextBytes];
};

CallRecord record_of(detail::Kind k, std::size_t n, const detail::ErasedOp& op) {
  CallRecord r{{static_cast<std::uint64_t>(k), op.size, n, op.id}, {}};
  std::string text = base::type_name(*op.type) + " with " + base::type_name(*op.op) + " on " +
                     std::to_string(n) + (n == 1 ? " element" : " elements");
  text.resize(std::min(text.size(), sizeof r.text - 1));
  std::memcpy(r.text, text.c_str(), text.size() + 1);
  return r;
}

const char* call_name(std::uint64_t kind) {
  return kind == static_cast<std::uint64_t>(detail::Kind::allreduce_user) ? "allreduce"
                                                                          : "exclusive_scan";
}

// The message every process throws: rank 0's call against the lowest rank whose call differs
// (group indices; named by their ranks in the Comm, `members`).
std::string difference(const std::vector<CallRecord>& all, std::uint64_t call,
                       const std::vector<int>& members) {
  std::size_t b = 1;
  while (b + 1 < all.size() && std::memcmp(all[b].words, all[0].words, sizeof all[0].words) == 0)
    ++b;
  const bool kinds = all[b].words[0] != all[0].words[0];
  auto says = [&](std::size_t r) {
    return "rank " + std::to_string(members[r]) + " passes " + all[r].text +
           (kinds ? std::string(" to ") + call_name(all[r].words[0]) : std::string());
  };
  return std::string(call_name(all[0].words[0])) + " (call #" + std::to_string(call) +
         "): " + says(0) + ", " + says(b) +
         ": every process must pass the same element type, operator and number of elements";
}

}  // namespace

void CollectivesImpl::agree_on_call(detail::Kind k, std::size_t n, const detail::ErasedOp& op) {
  const CallRecord mine = record_of(k, n, op);
  std::uint64_t v[8];  // each word, then its complement: the max of both is the max and the min
  for (std::size_t i = 0; i < 4; ++i) {
    v[2 * i] = mine.words[i];
    v[2 * i + 1] = ~mine.words[i];
  }
  max_words(v);
  bool same = true;
  for (std::size_t i = 0; i < 4; ++i) same = same && v[2 * i] == ~v[2 * i + 1];
  if (same) return;
  const std::uint64_t call = seq;
  begin(detail::Kind::allgather, sizeof(CallRecord), 0);
  std::vector<CallRecord> all(static_cast<std::size_t>(p));
  all[static_cast<std::size_t>(me)] = mine;
  std::vector<Part> out(all.size(), Part{reinterpret_cast<const std::byte*>(&mine), sizeof mine});
  std::vector<Sink> in(all.size());
  for (std::size_t r = 0; r < all.size(); ++r)
    in[r] = {reinterpret_cast<std::byte*>(&all[r]), sizeof(CallRecord)};
  all_pairs(out, in);
  throw MismatchError(difference(all, call, members));
}

void ProcessCollectives::allreduce_user(void* inout, std::size_t n, const detail::ErasedOp& op) {
  Impl& m = *impl_;
  if (m.p == 1) return;
  Failure failure;
  bool missing = false;
  m.run([&] {
    m.agree_on_call(detail::Kind::allreduce_user, n, op);
    m.begin(detail::Kind::allreduce_user, op.size, op.id);
    missing = allreduce_doubling(m, static_cast<std::byte*>(inout), n, op, failure);
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
    m.agree_on_call(detail::Kind::exclusive_scan_user, n, op);
    m.begin(detail::Kind::exclusive_scan_user, op.size, op.id);
    missing = scan_doubling(m, static_cast<const std::byte*>(in), static_cast<std::byte*>(out), n,
                            op, failure, have);
  });
  finish("exclusive_scan", failure, missing);
}

}  // namespace compas::comm

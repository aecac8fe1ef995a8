// Internals of the process collectives, for the sources that implement them: the chunk header, the
// per-peer channels (send, receive, release) and the one-collective-at-a-time guard. See
// collectives.hpp for the protocol.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "compas/comm/collectives.hpp"
#include "compas/comm/window.hpp"
#include "internals.hpp"
#include "owner_thread.hpp"

namespace compas::comm {

namespace detail {

enum class Kind : std::uint32_t {
  broadcast = 1,
  allreduce = 2,
  allgather = 3,
  alltoallv = 4,
  allreduce_user = 5,  // with a caller's operator
  exclusive_scan_user = 6,
  agree_user = 7,  // the processes' agreement on a call with a caller's operator
  barrier = 8,     // a group's barrier (the whole Comm's is Comm::barrier)
  reduce = 9,
};

// allreduce's algorithms and phases, carried in the header so that processes which chose
// differently (different sizes) are told apart from a plain size mismatch.
enum class Phase : std::uint64_t { doubling = 0, reduce_scatter = 1, gather = 2 };

struct Header {
  std::uint64_t seq;    // call number, the same on every process
  std::uint32_t kind;   // Kind
  std::uint32_t elem;   // element size in bytes
  std::uint64_t arg;    // broadcast: root; allreduce: op | type << 8 | phase << 16
  std::uint64_t total;  // bytes of the whole message
  std::uint64_t chunk;  // index of this chunk in the message
  std::uint32_t sender;
  std::uint32_t op_failed;  // with a caller's operator: 1 + a rank where it threw, whose missing
                            // result this message stands for (0: a valid value)
  std::uint32_t reserved[4];
};
static_assert(sizeof(Header) == ProcessCollectives::kHeaderBytes);

// Non-direct peers get header and payload in one put when the payload is this small (one
// operation instead of two; above it the extra copy costs more than the put saves).
constexpr std::size_t kStageMaxBytes = 16 * 1024;

// The pairing of recursive doubling for any P (MPICH's): with p2 the largest power of two <= P
// and rem = P - p2, the ranks below 2 * rem pair up, each even one folding its value into the odd
// one above it, so that p2 processes take part, numbered 0..p2-1 (virtual ranks) in rank order;
// the evens get the result back at the end. Virtual rank v stands for ranks {2v, 2v + 1} when
// v < rem, else for rank v + rem: consecutive virtual ranks cover consecutive blocks of ranks.
struct Doubling {
  int p2 = 1, rem = 0;
  explicit Doubling(int p) {
    while (p2 * 2 <= p) p2 *= 2;
    rem = p - p2;
  }
  bool folds(int rank) const { return rank < 2 * rem && rank % 2 == 0; }    // into rank + 1
  bool absorbs(int rank) const { return rank < 2 * rem && rank % 2 == 1; }  // rank - 1's value
  int vrank(int rank) const { return rank < 2 * rem ? (rank % 2 ? rank / 2 : -1) : rank - rem; }
  int rank_of(int v) const { return v < rem ? 2 * v + 1 : v + rem; }
};

// Bytes of the text naming a call with a caller's operator ("double with compas::op::sum on 3
// elements"), gathered from every process when their calls differ.
constexpr std::size_t kCallTextBytes = 256;

// Throws std::invalid_argument, the same on every process of `comm`, unless every process's
// `members` is a valid group (distinct ranks of the Comm, its own among them) and every member of
// a group passes the same list (collectives_group.cpp; a bootstrap allgather over the Comm).
void check_members(Comm& comm, const std::vector<int>& members);
// `hosts` (job ranks by host) as group indices of `members`, hosts without a member left out.
std::vector<std::vector<int>> group_hosts(const std::vector<std::vector<int>>& hosts,
                                          const std::vector<int>& members);

// What a header describes, for messages: "allreduce(sum, double) in its recursive doubling
// phase", ...
std::string describe(std::uint32_t kind, std::uint32_t elem, std::uint64_t arg);
// "3 elements (24 bytes)", or "N bytes" when `bytes` is not a whole number of elements.
std::string elements(std::uint64_t bytes, std::uint32_t elem);

}  // namespace detail

struct ProcessCollectives::Impl {
  Comm* comm = nullptr;
  int p = 1, me = 0;                    // the group's size and this process's index in it
  std::vector<int> members;             // job rank of every group index (0..P-1 for the whole Comm)
  bool whole = true;                    // the group is every process of the Comm
  std::vector<std::vector<int>> hosts;  // group indices by host
  std::size_t slot = 0, payload = 0, small_bytes = 0;
  std::unique_ptr<WindowBytes> win;
  std::vector<std::uint64_t> sent, received;  // chunks, cumulative, per peer
  std::vector<std::byte> stage, tmp;
  std::vector<std::byte> partial;  // reduce's, on processes with children other than the root
  std::vector<std::byte> user_in, user_partial;  // collectives_user_op.cpp's scratch

  // The call in progress.
  std::uint64_t seq = 0;
  std::uint32_t kind = 0, elem = 1;
  std::uint64_t arg = 0;
  // Header::op_failed of the chunks this process sends, and of the last chunk it received.
  std::uint32_t flag_out = 0, flag_in = 0;

  std::atomic<bool> busy{false};
  bool failed = false;
  std::string failure;

  // The job rank of group index g (window operations target it), and how messages name it.
  int job(int g) const { return members[static_cast<std::size_t>(g)]; }
  std::string who(int g) const { return "rank " + std::to_string(job(g)); }

  std::size_t data_signal(int sender) const { return static_cast<std::size_t>(sender); }
  std::size_t ack_signal(int receiver) const { return static_cast<std::size_t>(p + receiver); }
  // The slot chunk number `n` of the channel sender -> this process occupies at the receiver.
  std::size_t slot_offset(int sender, std::uint64_t n) const {
    return (static_cast<std::size_t>(sender) * kSlots + n % kSlots) * slot;
  }
  std::uint64_t chunks(std::size_t total) const {
    return total == 0 ? 1 : (total + payload - 1) / payload;
  }
  std::size_t chunk_len(std::size_t total, std::uint64_t j) const {
    const std::size_t at = static_cast<std::size_t>(j) * payload;
    return at >= total ? 0 : std::min(payload, total - at);
  }

  void begin(detail::Kind k, std::size_t elem_bytes, std::uint64_t a) {
    ++seq;
    kind = static_cast<std::uint32_t>(k);
    elem = static_cast<std::uint32_t>(elem_bytes);
    arg = a;
    flag_out = flag_in = 0;
  }
  // The constructors' common part: `group` lists job ranks in group order, this process among them.
  void setup(Comm& c, std::vector<int> group, const CollectivesOptions& o);
  std::string out_of_step(const detail::Header& h, int src);
  // "" for the whole Comm, else " in the group of ranks {0, 2, 4}" (collectives_group.cpp).
  std::string where() const;
  // collectives.cpp: v[i] becomes the largest v[i] of all processes (a collective call of its own,
  // Kind::agree_user, by recursive doubling).
  void max_words(std::span<std::uint64_t> v);
  // collectives_user_op.cpp: throws std::invalid_argument, on every process alike, unless every
  // process passes the same call (a max_words over its description, before any data moves).
  void agree_on_call(detail::Kind k, std::size_t n, const detail::ErasedOp& op);

  // Chunk j of the `total`-byte message at `data` to `dst`.
  void send(int dst, const std::byte* data, std::size_t total, std::uint64_t j) {
    const std::uint64_t n = sent[static_cast<std::size_t>(dst)];
    if (n >= kSlots) win->wait_until(ack_signal(dst), n - kSlots + 1, job(dst));
    detail::Header h{};
    h.seq = seq;
    h.kind = kind;
    h.elem = elem;
    h.arg = arg;
    h.total = total;
    h.chunk = j;
    h.sender = static_cast<std::uint32_t>(me);
    h.op_failed = flag_out;
    const std::size_t off = slot_offset(me, n);
    const std::size_t len = chunk_len(total, j);
    const std::byte* src = len ? data + static_cast<std::size_t>(j) * payload : nullptr;
    const int to = job(dst);
    if (!win->direct(to) && len <= detail::kStageMaxBytes) {
      std::memcpy(stage.data(), &h, sizeof h);
      if (len) std::memcpy(stage.data() + sizeof h, src, len);
      win->put_signal(to, off, stage.data(), sizeof h + len, data_signal(me));
    } else {
      win->put(to, off, &h, sizeof h);
      win->put_signal(to, off + sizeof h, src, len, data_signal(me));
    }
    sent[static_cast<std::size_t>(dst)] = n + 1;
  }

  // Waits for chunk j of a `total`-byte message from `src`; returns its payload in the slot,
  // valid until release(src).
  const std::byte* receive(int src, std::size_t total, std::uint64_t j) {
    const std::uint64_t n = received[static_cast<std::size_t>(src)];
    win->wait_until(data_signal(src), n + 1, job(src));
    const std::byte* at = win->local() + slot_offset(src, n);
    detail::Header h;
    std::memcpy(&h, at, sizeof h);
    if (h.seq != seq || h.kind != kind || h.elem != elem || h.arg != arg)
      throw MismatchError(out_of_step(h, src));
    if (h.total != total)
      throw MismatchError(detail::describe(kind, elem, arg) + " (call #" + std::to_string(seq) +
                          "): " + who(src) + " sends " + detail::elements(h.total, elem) + " to " +
                          who(me) + ", which expects " + detail::elements(total, elem) +
                          ": the sizes must agree on every process");
    if (h.chunk != j || h.sender != static_cast<std::uint32_t>(src))
      throw CommError("process collectives: chunk " + std::to_string(h.chunk) +
                          " from group index " + std::to_string(h.sender) +
                          " arrived where chunk " + std::to_string(j) + " from " + who(src) +
                          " was expected",
                      job(src));
    flag_in = h.op_failed;
    return at + sizeof h;
  }

  void release(int src) {
    std::atomic_thread_fence(std::memory_order_release);  // reads of the slot come first
    win->signal_add(job(src), ack_signal(me), 1);
    ++received[static_cast<std::size_t>(src)];
  }

  void send_message(int dst, const std::byte* data, std::size_t total) {
    for (std::uint64_t j = 0, nc = chunks(total); j < nc; ++j) send(dst, data, total, j);
  }
  void receive_message(int src, std::byte* data, std::size_t total) {
    for (std::uint64_t j = 0, nc = chunks(total); j < nc; ++j) {
      const std::byte* at = receive(src, total, j);
      if (const std::size_t len = chunk_len(total, j))
        std::memcpy(data + static_cast<std::size_t>(j) * payload, at, len);
      release(src);
    }
  }

  // The `total`-byte message at `out` goes to `peer` while its message of the same size arrives
  // into `in`, chunk by chunk.
  void exchange(int peer, const std::byte* out, std::byte* in, std::size_t total) {
    for (std::uint64_t j = 0, nc = chunks(total); j < nc; ++j) {
      send(peer, out, total, j);
      const std::byte* at = receive(peer, total, j);
      if (const std::size_t len = chunk_len(total, j))
        std::memcpy(in + static_cast<std::size_t>(j) * payload, at, len);
      release(peer);
    }
  }

  // Every process sends out[d] (bytes at a pointer) to every other d and receives in[s] from
  // every other s, all messages advancing one chunk per step. Entries for this process are
  // ignored.
  struct Part {
    const std::byte* data;
    std::size_t bytes;
  };
  struct Sink {
    std::byte* data;
    std::size_t bytes;
  };
  void all_pairs(const std::vector<Part>& out, const std::vector<Sink>& in) {
    std::uint64_t steps = 0;
    for (int r = 0; r < p; ++r) {
      if (r == me) continue;
      steps = std::max({steps, chunks(out[static_cast<std::size_t>(r)].bytes),
                        chunks(in[static_cast<std::size_t>(r)].bytes)});
    }
    for (std::uint64_t j = 0; j < steps; ++j) {
      for (int k = 1; k < p; ++k) {
        const int d = (me + k) % p;
        const Part& o = out[static_cast<std::size_t>(d)];
        if (j < chunks(o.bytes)) send(d, o.data, o.bytes, j);
      }
      for (int k = 1; k < p; ++k) {
        const int s = (me - k + p) % p;
        const Sink& i = in[static_cast<std::size_t>(s)];
        if (j >= chunks(i.bytes)) continue;
        const std::byte* at = receive(s, i.bytes, j);
        if (const std::size_t len = chunk_len(i.bytes, j))
          std::memcpy(i.data + static_cast<std::size_t>(j) * payload, at, len);
        release(s);
      }
    }
  }

  template <class T>
  void recursive_doubling(std::span<T> v, Op op);
  template <class T>
  void reduce_scatter_allgather(std::span<T> v, Op op);
  // reduce over a binomial tree rooted at `root`; `out` at the root, nullptr elsewhere.
  template <class T>
  void tree_reduce(std::span<const T> in, T* out, Op op, int root);

  // Runs one collective: one thread at a time, and none after a failure.
  template <class F>
  void run(F&& body) {
    detail::require_owner_thread(detail::Internals::comm(*comm), "comm::ProcessCollectives");
    if (busy.exchange(true, std::memory_order_acquire))
      throw std::logic_error(
          "process collectives: two threads of one process called collectives at the same time; "
          "they must be called by one thread at a time");
    if (failed) {
      busy.store(false, std::memory_order_release);
      throw UnusableError("process collectives are unusable after an earlier collective failed (" +
                          failure + ")");
    }
    try {
      body();
    } catch (const CommError& e) {
      // Say which collective was waiting (the Window layer knows only the signal).
      failed = true;
      failure = detail::describe(kind, elem, arg) + " (call #" + std::to_string(seq) + ")" +
                where() + ": " + e.what();
      busy.store(false, std::memory_order_release);
      throw CommError(failure, e.rank());
    } catch (const std::exception& e) {
      failed = true;
      failure = e.what();
      busy.store(false, std::memory_order_release);
      throw;
    } catch (...) {
      failed = true;
      failure = "unknown exception";
      busy.store(false, std::memory_order_release);
      throw;
    }
    busy.store(false, std::memory_order_release);
  }
};

}  // namespace compas::comm

// Process collectives: broadcast, allreduce, allgather and alltoallv among the P processes of a
// job, or of a group of them (the constructor taking `members`: P is then the group's size and
// every rank below a group index), built only on the public Window API (put, put_signal,
// signal_add, wait_until). The process barrier is Comm::barrier(); ProcessCollectives::barrier()
// forwards to it for the whole Comm.
//
// Transport: every pair of processes has a channel through a scratch window that the collectives
// own: each process holds, for every peer, kSlots slots of slot_bytes (a 64-byte header, then the
// payload). A message of any size (empty ones too) travels as one or more chunks of at most a
// slot's payload; a chunk is written into a free slot at the receiver with put_signal (data, then
// the receiver's signal for that sender), and the receiver, once it has consumed the chunk,
// raises the sender's acknowledgement signal for it. Both signals are cumulative counts of chunks
// (never reset), so a sender reuses a slot only after the receiver has finished with the chunk it
// held: a fast process's next call cannot overwrite data a slow one is still reading. Large
// messages are therefore pipelined through the slots, and the scratch memory does not grow with
// the message. Every header carries the call's number, kind, root / operator / element type and
// the message size: a process that receives from a peer in another collective, or disagreeing on
// a size, throws MismatchError naming both sides and both values instead of using wrong
// data (peers left waiting for it then time out). Every wait names the rank it waits for, so a
// dead or stuck peer ends in a CommError naming it and the collective (COMPAS_TIMEOUT).
// With a caller's operator the processes first agree on the call: its kind, element size,
// number of elements and ids of the element type and of the operator's type (base::type_id of
// their names: the same in every process of one program, nothing asked of the operator, lambdas
// included) go through one allreduce of 64 bytes before any data moves. Processes whose calls
// differ in any of these all throw the same MismatchError at once, naming rank 0's call
// and the lowest rank whose call differs with their element types, operators and counts, instead
// of each getting another answer or waiting for chunks that never come. That agreement is the
// cost of checking: one recursive doubling of a single chunk per call.
//
// Algorithms (P processes, n bytes):
//  - broadcast: a binomial tree, pipelined chunk by chunk. Topology-aware: host leaders (the root
//    on its host, the lowest rank on others) form a binomial tree first, then each host's
//    processes a binomial tree under their leader (the two-level scheme of the Grid paper, Table
//    2), so the message crosses between hosts exactly (hosts - 1) times.
//  - allreduce: recursive doubling when n <= allreduce_small_bytes (16 KiB), P = 2, or there
//    are fewer elements than processes (non-powers of two fold the extra processes into their
//    neighbours first); otherwise reduce-scatter (every process reduces one block of the vector,
//    combining the P contributions in rank order) followed by an allgather of the blocks. Either
//    way every process ends with bitwise identical results: operands are combined in the same
//    order everywhere.
//  - reduce: a binomial tree rooted at the root, pipelined chunk by chunk; every process but the
//    root sends one message (its partial), the root's combines straight into its out.
//  - allgather, alltoallv: every process sends its block(s) directly to every other, in rotated
//    order (round k: to rank + k), all messages advancing chunk by chunk together.
//  - allreduce and exclusive_scan with a caller's operator (any associative f on any trivially
//    copyable type): recursive doubling, ceil(log2 P) rounds of one exchange (the allreduce adds
//    one step before and one after for the processes beyond the largest power of two, folded into
//    their neighbours as above); every message is the whole vector. The combining rule is the one
//    thing a caller's operator needs: every partial covers a contiguous block of ranks, and two
//    partials are always combined as f(lower ranks' partial, higher ranks' partial).
//
// Threading: a ProcessCollectives object may be used by one thread at a time per process (the same
// calls in the same order on every process, like MPI collectives); a second thread calling in
// while one is inside a collective gets std::logic_error. After a collective failed (timeout,
// dead peer, mismatch), the object refuses further calls with CommError: the channel counts are
// no longer consistent between processes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

#include "compas/comm/ucx.hpp"

namespace compas::comm {

// Processes whose calls of one collective differ (the call, the element type, the operator, the
// number of elements), found by the collective itself: the processes that see it throw it naming
// both sides (with a caller's operator every process, at once). A std::invalid_argument; the C
// API's COMPAS_ERR_COLLECTIVE, as runtime's CollectiveError.
class MismatchError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// A collective refused because an earlier one of the same ProcessCollectives failed on this
// process (a mismatch, a dead peer, a timeout): from then on every call throws it, naming that
// failure. A CommError; the C API's COMPAS_ERR_STATE (the job's collectives are unusable, this
// call's arguments and the peers may be fine).
class UnusableError : public CommError {
 public:
  using CommError::CommError;
};

// Reduction operators of allreduce. Integer sums and products wrap (two's complement); min and
// max keep the first operand when the two compare equal (as std::min / std::max).
enum class Op { sum, min, max, prod };
const char* to_string(Op op);

// The element types allreduce is instantiated for.
template <class T>
inline constexpr bool is_reducible_v =
    std::is_same_v<T, std::int32_t> || std::is_same_v<T, std::int64_t> ||
    std::is_same_v<T, std::uint32_t> || std::is_same_v<T, std::uint64_t> ||
    std::is_same_v<T, float> || std::is_same_v<T, double>;

struct CollectivesOptions {
  // Bytes of one channel slot (header included); 0 chooses from the job size: about 4 MiB of
  // scratch in all, slots between 4 KiB and 256 KiB. Otherwise at least 128, rounded down to a
  // multiple of 64.
  std::size_t slot_bytes = 0;
  // allreduce uses recursive doubling up to this many bytes, reduce-scatter + allgather above.
  std::size_t allreduce_small_bytes = 16 * 1024;
  // Ranks grouped by host for the topology-aware broadcast; empty means comm.hosts(). Must be a
  // partition of 0..P-1 (the same on every process); tests use it to simulate several hosts.
  std::vector<std::vector<int>> hosts;
};

// Where one process sits in a broadcast tree: the rank it receives from (-1 for the root) and the
// ranks it forwards to, in sending order (other hosts first, larger subtrees first).
struct BroadcastTree {
  int parent = -1;
  std::vector<int> children;
};
// The two-level tree broadcast() uses; `hosts` as CollectivesOptions::hosts (not empty).
BroadcastTree broadcast_tree(const std::vector<std::vector<int>>& hosts, int root, int rank);

namespace detail {
// A caller's operator on values of `size` bytes, type-erased for collectives_user_op.cpp:
// apply(f, left, right, out) sets *out = f(*left, *right); out may be left or right. `id` tells
// the element type and the operator's type apart (call_id), `type` and `op` name them.
struct ErasedOp {
  std::size_t size;
  void* f;
  void (*apply)(void* f, const void* left, const void* right, void* out);
  std::uint64_t id;
  const std::type_info* type;
  const std::type_info* op;
};
// What every chunk of a call with a caller's operator carries: 32 bits of the element type's
// base::type_id above 32 bits of the operator type's.
std::uint64_t call_id(const std::type_info& type, const std::type_info& op);
template <class T, class F>
ErasedOp erase_op(F& f) {
  static const std::uint64_t id = call_id(typeid(T), typeid(F));
  return {sizeof(T),
          &f,
          [](void* fp, const void* left, const void* right, void* out) {
            T a, b;
            std::memcpy(&a, left, sizeof(T));
            std::memcpy(&b, right, sizeof(T));
            const T c = (*static_cast<F*>(fp))(std::as_const(a), std::as_const(b));
            std::memcpy(out, &c, sizeof(T));
          },
          id,
          &typeid(T),
          &typeid(F)};
}
}  // namespace detail

// An associative operator (T, T) -> T for the allreduce and exclusive_scan that take one.
template <class F, class T>
concept OperatorOn = std::is_trivially_copyable_v<T> && std::is_default_constructible_v<T> &&
    std::is_invocable_r_v<T, F&, const T&, const T&>;

class ProcessCollectives {
 public:
  // Collective: allocates the scratch window (P * kSlots * slot_bytes bytes per process).
  // Objects are made and destroyed in the same order on every process of the Comm.
  // Throws std::invalid_argument for bad options.
  explicit ProcessCollectives(Comm& comm, CollectivesOptions options = {});
  // Over a group of the Comm's processes: `members` lists their ranks in the Comm, in group order
  // (this process among them). Collective over the whole Comm (the window is): every process
  // constructs one, each passing its own group's members (a group of one is allowed). Inside,
  // ranks, roots, counts and tree positions are group indices 0..members.size()-1; error messages
  // name ranks in the Comm. Every process's list is checked at construction (one bootstrap
  // allgather): ranks outside the Comm, repeated, or a list without this process, and members of
  // one group whose lists differ, make every process throw the same std::invalid_argument naming
  // the processes and their lists. options.hosts, if given, is in ranks of the Comm.
  ProcessCollectives(Comm& comm, std::vector<int> members, CollectivesOptions options = {});
  ~ProcessCollectives();  // collective (the scratch window's destruction is)
  ProcessCollectives(const ProcessCollectives&) = delete;
  ProcessCollectives& operator=(const ProcessCollectives&) = delete;

  static constexpr std::size_t kSlots = 2;  // per peer: a chunk in flight while one is consumed
  static constexpr std::size_t kHeaderBytes = 64;

  Comm& comm();
  int rank() const;                         // this process's index in the group
  int size() const;                         // processes of the group
  const std::vector<int>& members() const;  // their ranks in the Comm, in group order
  std::size_t slot_bytes() const;
  const std::vector<std::vector<int>>& hosts() const;  // group indices by host

  // The whole Comm's: Comm::barrier(). A group's: a recursive doubling of empty messages.
  void barrier();

  // `data` of the root goes to `data` of every process; sizes must agree.
  template <class T>
  void broadcast(std::span<T> data, int root) {
    static_assert(std::is_trivially_copyable_v<T>, "broadcast needs a trivially copyable T");
    broadcast_bytes(data.data(), data.size_bytes(), root, sizeof(T));
  }

  // Element-wise reduction of every process's `inout`; the result replaces it everywhere.
  template <class T>
  void allreduce(std::span<T> inout, Op op) {
    static_assert(is_reducible_v<T>,
                  "allreduce takes int32_t, int64_t, uint32_t, uint64_t, float or double");
    allreduce_impl(inout, op);
  }
  template <class T>
  T allreduce(T value, Op op) {
    allreduce(std::span<T>(&value, 1), op);
    return value;
  }

  // Element-wise reduction of every process's `in` into `out` of process `root` (MPI_Reduce): a
  // binomial tree rooted at `root`, each chunk combined as it arrives, at the root straight into
  // `out` (out may be in). Leaves send `in` itself; the other non-roots combine in a buffer the
  // object keeps between calls. `out` is not used elsewhere (it may be empty); at the root it
  // holds in.size() elements. The operands are grouped by the tree (for floating point the bits
  // depend on P and the root). Sizes and roots must agree (checked as allreduce's).
  template <class T>
  void reduce(std::span<const T> in, std::span<T> out, Op op, int root) {
    static_assert(is_reducible_v<T>,
                  "reduce takes int32_t, int64_t, uint32_t, uint64_t, float or double");
    reduce_impl(in, out, op, root);
  }

  // Element by element over every process's `inout` with a caller's associative operator f (any
  // trivially copyable T; the sizes must agree), the result replacing it everywhere. f is applied
  // as f(lower ranks' partial, higher ranks' partial), so the result is the rank-order fold
  // x0 f x1 f ... f x(P-1) for every associative f, commutative or not. The grouping, a tree of
  // ceil(log2 P) levels (for P > 3 not the left fold), depends on P only, so a floating-point f
  // gives the same bits on every process and in every run with the same P.
  // When f throws, the exchanges still complete (the object stays usable): the processes where it
  // threw rethrow its exception, every other one throws std::runtime_error naming such a rank.
  template <class T, class F>
  requires OperatorOn<F, T>
  void allreduce(std::span<T> inout, F f) {
    allreduce_user(inout.data(), inout.size(), detail::erase_op<T>(f));
  }
  template <class T, class F>
  requires OperatorOn<F, T> T allreduce(T value, F f) {
    allreduce(std::span<T>(&value, 1), f);
    return value;
  }

  // Exclusive prefix with a caller's associative operator: out[i] = f over in[i] of ranks
  // 0..rank-1 in rank order, in ceil(log2 P) rounds; partials of blocks of ranks, lower ranks
  // always on the left, grouped by P and the rank only (the same bits in every run). `out` is not
  // written on rank 0 (the one-value form returns `identity` there, without applying f to it);
  // `out` may be `in`. Exceptions in f as in allreduce, except that only the processes whose result
  // needed a step where f threw throw.
  template <class T, class F>
  requires OperatorOn<F, T>
  void exclusive_scan(std::span<const T> in, std::span<T> out, F f) {
    if (in.size() != out.size())
      throw std::invalid_argument("exclusive_scan: " + std::to_string(in.size()) + " values in, " +
                                  std::to_string(out.size()) + " out: the same length is needed");
    exclusive_scan_user(in.data(), out.data(), in.size(), detail::erase_op<T>(f));
  }
  // The one-value form: `identity` (before the operator, as in every scan of compas) on rank 0.
  template <class T, class F>
  requires OperatorOn<F, T> T exclusive_scan(const T& value,
                                             const std::type_identity_t<T>& identity, F f) {
    T out = identity;
    exclusive_scan(std::span<const T>(&value, 1), std::span<T>(&out, 1), f);
    return out;
  }
  // Deprecated (one release): the operator before the identity.
  template <class T, class F>
  requires OperatorOn<F, T>
  [[deprecated("exclusive_scan(value, identity, f): the identity comes first")]] T exclusive_scan(
      const T& value, F f, const T& identity) {
    return exclusive_scan(value, identity, f);
  }

  // all[r * mine.size() + i] = mine[i] of rank r; all.size() must be P * mine.size(), and
  // mine.size() the same on every process.
  template <class T>
  void allgather(std::span<const T> mine, std::span<T> all) {
    static_assert(std::is_trivially_copyable_v<T>, "allgather needs a trivially copyable T");
    allgather_bytes(mine.data(), mine.size(), all.data(), all.size(), sizeof(T));
  }

  // send_counts[r] elements go to rank r, taken from `send` at the prefix sum of the counts
  // before r; recv_counts[r] elements come from rank r, stored likewise in `recv`. Both count
  // arrays have P entries; send / recv must hold at least the sum of their counts (elements
  // beyond it are neither read nor written). recv_counts[r] here must equal send_counts[me] at r.
  template <class T>
  void alltoallv(std::span<const T> send, std::span<const std::size_t> send_counts,
                 std::span<T> recv, std::span<const std::size_t> recv_counts) {
    static_assert(std::is_trivially_copyable_v<T>, "alltoallv needs a trivially copyable T");
    alltoallv_bytes(send.data(), send.size(), send_counts, recv.data(), recv.size(), recv_counts,
                    sizeof(T));
  }

 private:
  friend struct detail::Internals;
  struct Impl;  // comm/src (collectives_channel.hpp)
  template <class T>
  void allreduce_impl(std::span<T> inout, Op op);  // instantiated in collectives.cpp
  template <class T>
  void reduce_impl(std::span<const T> in, std::span<T> out, Op op, int root);  // likewise
  void allreduce_user(void* inout, std::size_t n, const detail::ErasedOp& op);
  void exclusive_scan_user(const void* in, void* out, std::size_t n, const detail::ErasedOp& op);
  void broadcast_bytes(void* data, std::size_t bytes, int root, std::size_t elem);
  void allgather_bytes(const void* mine, std::size_t n, void* all, std::size_t all_n,
                       std::size_t elem);
  void alltoallv_bytes(const void* send, std::size_t send_n,
                       std::span<const std::size_t> send_counts, void* recv, std::size_t recv_n,
                       std::span<const std::size_t> recv_counts, std::size_t elem);

  std::unique_ptr<Impl> impl_;
};

}  // namespace compas::comm

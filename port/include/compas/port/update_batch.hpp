// An update batch on a 1-D DistArray: (global index, value) updates added by any thread of any
// process, bucketed per owning process and applied by the owners, with buffers of a bounded size
// however many updates come between two flushes: a bucket that fills goes one-sided to its
// owner's inbox while the threads add, what is left is traded at flush() as PRK's MPI
// RandomAccess trades its buckets (MPI_Alltoall and MPI_Alltoallv), and flush() returns with
// every update in place (what a port writes instead of one atomic per update, or a GatherPlan
// made for every batch). An OpenMP loop adds all it has and flushes once:
//
//   compas::DistArray<std::uint64_t> table(rt, n);
//   compas::UpdateBatch<std::uint64_t> batch(table, compas::comm::AtomicOp::bit_xor);
//   #pragma omp parallel for
//   for (...) batch.add(j, v);   // table[j] ^= v by the flush, wherever j lives
//   batch.flush();               // collective: every update is in place on return
//
// In a loop of many adds per thread, `const auto add = batch.adder();` (made by the adding thread,
// inside the parallel region) then `add(j, v)` does the same with the batch's constants held in
// the handle (registers) rather than read from the batch after every update.
//
// add() checks the index (std::out_of_range naming it and the table's range) and appends to a
// bucket of the owner; from any threads at once (an OpenMP team of any size, Runtime::run's
// threads, the program's own): each adding thread has its own buckets, found through a
// thread_local number (batch_slots.hpp) and made at its first add.
//
// Bounded buffers (a job of several processes): a thread's bucket for one owner holds at most
// kBucket updates. The add that fills it sends it on (batch_inbox.hpp): to another process, with
// one put_signal into a slot of that owner's inbox (a window made with the batch: kInboxChunks
// slots of kBucket updates per source process, so P * kInboxChunks * kBucket * sizeof(Entry)
// bytes per process, 256 KiB at P = 2 for 8-byte T), or, when this process owns it, applied to
// the block at once (under a lock). Each process applies what arrived in its inbox whenever one
// of its threads sends a bucket, while one waits for a free slot at another process (add() then
// waits: it applies this process's own arrivals meanwhile, so processes sending to each other
// never wait for each other, at any P x T, oversubscribed included; comm::CommError naming the
// owner after COMPAS_TIMEOUT seconds without room), and during flush(): while flush() waits for
// the other processes a helper thread applies arrivals, so a process still adding is never left
// waiting for one that already flushes. So: a process that has stopped adding calls flush() next,
// with no other collective between its adds and the flush (such a collective could wait for a
// process that waits for room in this one's inbox: the job fails after COMPAS_TIMEOUT). The
// block receives updates between two flushes, under the batch's lock: the program neither reads
// nor writes its block while a batch on it holds updates (the table's values are defined after
// flush(), not between).
//
// Making a batch and flush() are collectives, funneled like those of collectives.hpp: the thread
// that made the Runtime, outside OpenMP parallel regions, every process the same calls in the
// same order. Making one checks that every process makes it on the same table with the same
// operator; batches are numbered in the order they were made (number()). flush() checks the calls
// (processes flushing different batches, or one flushing while another makes another collective:
// the same CollectiveError on every process, naming both processes and both calls, before any
// update the batch holds moves; the batch keeps them, and those already sent to inboxes are
// applied there), exchanges the counts (P per process: the updates held, and the buckets sent to
// each inbox), applies every bucket sent to this process's inbox (waiting for those in flight),
// then trades the held updates (one alltoallv); every owner applies what it received and its own
// updates to its block with plain operations (no atomics: one thread at a time), the held ones in
// source rank order, each process's from its threads in order of their OpenMP thread numbers
// (threads outside OpenMP regions after, in the order they first added). Buckets sent early are
// applied in the order they arrive: for add on a floating-point T, the result's last bits may
// then differ from run to run (they do not when no bucket filled: at most kBucket - 1 updates per
// thread and owner between two flushes). Updates a process makes to its own block move no
// message. A job of one process makes no inbox. When omp_get_max_threads() was over 1 when the
// batch was made (a team adds at once), its block is cut into at most kSlices slices of one
// power-of-two size, a thread's buckets are per slice, and the add that fills one applies it to
// its slice under that slice's lock, with plain operations: no atomic per update (an atomic
// read-modify-write waits for its cache line before the next begins; kBucket plain ones overlap
// their misses), and the threads rarely meet at a lock. Otherwise the thread that made the batch
// applies its updates at add() (plain operations), while other threads' updates wait in their
// buckets, unbounded, for the flush.
//
// Operators: add on any arithmetic T; bit_xor, bit_or, bit_and on integral T (std::invalid_argument
// at construction otherwise). The batch keeps its buffers between flushes (no allocation once
// they have grown). It refers to the table: keep it alive and in place. Destroying a batch of a
// job of several processes is collective, as its inbox window's destruction is.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <type_traits>
#include <typeinfo>
#include <vector>

#include "compas/comm/window.hpp"
#include "compas/port/batch_inbox.hpp"
#include "compas/port/batch_slots.hpp"
#include "compas/port/dist_array.hpp"
#include "compas/runtime/collectives.hpp"
#include "compas/runtime/range.hpp"

namespace compas {

namespace detail {

// std::invalid_argument when `op` is not allowed on elements of `type` (integral or not).
void check_batch_op(comm::AtomicOp op, bool integral, const std::type_info& type);
// Checks that every process makes the same batch (on table DistArray #table, of one element type
// and operator; CollectiveError otherwise) and returns its number (ObjectKind::update_batch).
std::uint64_t make_batch(const Processes& ps, std::uint64_t table, const std::type_info& type,
                         std::size_t elem, comm::AtomicOp op, index size);
// What a process learns of every other at a flush: the updates it sends here at the flush, and
// the full buckets it has sent into this process's inbox since the batch was made.
struct FlushCounts {
  std::vector<std::size_t> updates;
  std::vector<std::uint64_t> chunks;
};
// Checks every process's flush (the same call on the same batch, element type and size, operator
// and table size: CollectiveError otherwise) and exchanges the counts (send_counts[r] the updates
// and send_chunks[r] the chunks this process sends rank r; empty chunks: none).
FlushCounts flush_counts(const Processes& ps, std::uint64_t batch, const std::type_info& type,
                         std::size_t elem, comm::AtomicOp op, index size,
                         std::span<const std::size_t> send_counts,
                         std::span<const std::uint64_t> send_chunks);

// One adding thread's updates for one owner (UpdateBatch's Entry): store[0, next), room up to
// end.
template <class Entry>
struct BatchBucket {
  std::vector<Entry> store;
  Entry* next = nullptr;
  Entry* end = nullptr;
  std::size_t size() const { return static_cast<std::size_t>(next - store.data()); }
  std::span<const Entry> held() const { return {store.data(), size()}; }
  void clear() { next = store.data(); }
  void grow(std::size_t room) {
    const std::size_t n = size();
    store.resize(room);
    next = store.data() + n;
    end = store.data() + room;
  }
};

}  // namespace detail

template <class T>
class UpdateBatch {
  static_assert(std::is_arithmetic_v<T>, "UpdateBatch needs an arithmetic T");

 public:
  // One update on the wire: its offset in the owner's block, and the value.
  struct Entry {
    std::uint64_t at;
    T value;
  };
  // The updates an adding thread holds for one owner before it sends them to the owner's inbox (a
  // job of several processes), and the slots of that size an inbox has for each other process.
  static constexpr std::size_t kBucket = 1024;
  static constexpr std::size_t kInboxChunks = 8;
  // The most slices of a job of one process whose team adds at once (each of kBucket entries or
  // more): 8 MiB of 8-byte entries in 64 slices of 128 KiB, so that a bucket's updates fall on
  // few pages (bench/README.md, prk.sh: the figures of 16 and 64).
  static constexpr int kSlices = 64;
  using Bucket = detail::BatchBucket<Entry>;
  // One adding thread's buckets, by owning process.
  struct Slot {
    std::vector<Bucket> to;
  };

  // Collective (funneled, like flush()): every process makes the same batches in the same order,
  // on the same table, with the same T and operator.
  explicit UpdateBatch(DistArray<T>& table, comm::AtomicOp op = comm::AtomicOp::bit_xor)
      : table_(&table), op_(op), P_(static_cast<std::size_t>(table.runtime().processes())) {
    detail::check_batch_op(op, std::is_integral_v<T>, typeid(T));
    number_ =
        detail::make_batch(table.runtime(), table.number(), typeid(T), sizeof(T), op, table.size());
    maker_ = detail::batch_thread();
    const index n = table.size(), P = static_cast<index>(P_);
    first_ = table.domain().lo;
    size_ = static_cast<std::uint64_t>(n);
    base_ = n / P;
    extra_ = n % P;
    parts_ = P_;
    if (P_ == 1 && detail::batch_threads() > 1)
      slice(n);
    else if (!table.partition().is_block())
      shift_ = -2;  // a user's partition: its owner lookup
    else if (extra_ == 0 && base_ > 0 && (base_ & (base_ - 1)) == 0)
      while ((index{1} << shift_) < base_) ++shift_;
    else
      shift_ = -1;
    for (index r = 0; r < P; ++r) lo_.push_back(table.partition().part(static_cast<int>(r)).lo);
    lo_.resize(parts_, first_);  // slices: offsets in the one block
    if (P_ > 1) {
      inbox_ = std::make_unique<detail::BatchInbox>(table.runtime().comm(), kBucket * sizeof(Entry),
                                                    kInboxChunks);
    }
    own_ = &slot();
  }
  // One batch is one object of every process's collectives: not copied (moved, it keeps its
  // number).
  UpdateBatch(const UpdateBatch&) = delete;
  UpdateBatch& operator=(const UpdateBatch&) = delete;
  UpdateBatch(UpdateBatch&&) noexcept = default;
  UpdateBatch& operator=(UpdateBatch&&) noexcept = default;

  // The batch's number in the errors of its collectives ("UpdateBatch #2"): batches are numbered
  // 1, 2, ... in the order the processes made them, the same on every process.
  std::uint64_t number() const { return number_; }

  // table[i] op= value by the next flush(); i in table.domain(). O(1): an append, and every kBucket
  // appends to one owner a put of the bucket (or its application here) and this process's
  // arrivals applied.
  void add(index i, T value) {
    const index off = i - first_;
    if (static_cast<std::uint64_t>(off) >= size_) [[unlikely]]
      detail::index_outside("UpdateBatch::add", i, domain());
    const bool maker = detail::batch_thread() == maker_;
    if (T* data = at_once(maker)) return apply_one(data[off], value, op_);
    bucket(maker ? *own_ : slot(), i, off, value);
  }

  // One thread's handle on the batch: adder(i, v) is add(i, v), with what add() reads of the batch
  // held in the handle, so that a loop of adds keeps it in registers instead of reading the batch
  // again after every update. Made by the thread that adds through it (inside the parallel
  // region: once per block of adds); valid until the next flush() or swap of the table.
  class Adder {
   public:
    void operator()(index i, T value) const {
      const index off = i - first_;
      if (static_cast<std::uint64_t>(off) >= size_) [[unlikely]]
        detail::index_outside("UpdateBatch::add", i, batch_->domain());
      if (data_ != nullptr) return apply_one(data_[off], value, op_);
      batch_->bucket(*slot_, i, off, value);
    }

   private:
    friend class UpdateBatch;
    Adder(UpdateBatch* b, T* data, Slot* slot)
        : batch_(b), data_(data), first_(b->first_), size_(b->size_), op_(b->op_), slot_(slot) {}
    UpdateBatch* batch_;
    T* data_;  // the table's block when updates apply at once (one process), else nullptr
    index first_;
    std::uint64_t size_;
    comm::AtomicOp op_;
    Slot* slot_;  // the adding thread's buckets when data_ is nullptr
  };

  Adder adder() {
    T* data = at_once(detail::batch_thread() == maker_);
    return Adder(this, data, data ? nullptr : &slot());
  }

  // Collective: every process's updates applied at their owners; the batch is empty after.
  void flush() {
    Processes ps(table_->runtime());
    ps.runtime().check_funneled("compas::UpdateBatch::flush", detail::kFunneled);
    const auto me = static_cast<std::size_t>(ps.process());
    count(me);  // first checked (nothing is lost when refused), then packed
    const std::vector<std::uint64_t> chunks =
        inbox_ ? inbox_->sent() : std::vector<std::uint64_t>{};
    std::optional<detail::Drainer> helper;  // applies arrivals while the others come
    if (inbox_) helper.emplace([this] { try_drain(); });
    const detail::FlushCounts in =
        detail::flush_counts(ps, number_, typeid(T), sizeof(T), op_, table_->size(),
                             std::span<const std::size_t>(counts_), chunks);
    if (helper) helper->finish();
    if (inbox_) inbox_->drain([this](const std::byte* c) { apply_chunk(c); }, in.chunks);
    pack(me);
    const std::vector<std::size_t>& recv_counts = in.updates;
    std::size_t total = 0;
    for (std::size_t c : recv_counts) total += c;
    recv_.resize(total);
    const std::size_t first = P_ == 1 ? 0 : me, last = P_ == 1 ? parts_ : me + 1;
    for (Slot* s : slots_->ordered())
      for (std::size_t r = first; r < last; ++r) {  // this process's (its slices at P = 1)
        apply(s->to[r].held());
        s->to[r].clear();
      }
    detail::exchange<Entry>(ps, send_, counts_, recv_, recv_counts);
    apply(recv_);
  }

  // The updates this process holds for the next flush (added since the last one, bucketed, not yet
  // sent to an inbox): less than kBucket per adding thread and owner in a job of several
  // processes, and per adding thread and slice in a job of one process whose team adds at once. A
  // job of one process whose batch was made for one thread holds the updates of the threads other
  // than the one that made it.
  std::size_t pending() const {
    std::size_t n = 0;
    for (Slot* s : slots_->ordered())
      for (const auto& b : s->to) n += b.size();
    return n;
  }

 private:
  Range domain() const { return table_->domain(); }
  // The process holding offset `off` of the domain (DistArray's block split): a shift when the
  // blocks are of one power-of-two size, else a division; on a user's partition its lookup.
  std::size_t owner(index off) const {
    if (shift_ >= 0) return static_cast<std::size_t>(off >> shift_);
    if (shift_ == -2) return static_cast<std::size_t>(table_->owner(first_ + off));
    const index wide = extra_ * (base_ + 1);
    return static_cast<std::size_t>(off < wide ? off / (base_ + 1) : extra_ + (off - wide) / base_);
  }

  // counts_ := how many updates this process holds for each other process (0 for `me`).
  void count(std::size_t me) {
    counts_.assign(P_, 0);
    for (Slot* s : slots_->ordered())
      for (std::size_t r = 0; r < P_; ++r)
        if (r != me) counts_[r] += s->to[r].size();
  }

  // send_ := the updates for other processes in rank order (counts_ of each), moved out; each
  // process's from every thread in slot order.
  void pack(std::size_t me) {
    send_.clear();
    for (std::size_t r = 0; r < P_; ++r) {
      if (r == me) continue;
      for (Slot* s : slots_->ordered()) {
        auto& b = s->to[r];
        send_.insert(send_.end(), b.held().begin(), b.held().end());
        b.clear();
      }
    }
  }

  // Whether the block is cut into slices (a job of one process whose team adds at once).
  bool sliced() const { return slice_locks_ != nullptr; }
  // The table's block when the calling thread's adds apply at once (this process owns every
  // index, the block is not sliced and the thread made the batch), else nullptr.
  T* at_once(bool maker) const {
    return P_ == 1 && maker && !sliced() ? table_->local().data() : nullptr;
  }

  // Cuts a block of n entries into parts_ <= kSlices slices of 2^shift_ >= kBucket entries, one
  // lock each.
  void slice(index n) {
    shift_ = 0;
    while ((index{kSlices} << shift_) < n || (index{1} << shift_) < index{kBucket}) ++shift_;
    parts_ = n > 0 ? static_cast<std::size_t>(((n - 1) >> shift_) + 1) : 1;
    slice_locks_ = std::make_unique<SliceLock[]>(parts_);
  }

  // The calling thread's buckets (made at its first add; room for a full bucket each).
  Slot& slot() {
    return slots_->mine([this] {
      auto s = std::make_unique<Slot>();
      s->to.resize(parts_);
      for (Bucket& b : s->to) b.grow(inbox_ || sliced() ? kBucket : 64);
      return s;
    });
  }

  // Update `i` (offset `off` in the domain) into slot s's bucket for its owner; a full bucket is
  // sent on.
  void bucket(Slot& s, index i, index off, T value) {
    const std::size_t r = owner(off);
    Bucket& b = s.to[r];
    *b.next++ = {static_cast<std::uint64_t>(i - lo_[r]), value};
    if (b.next == b.end) [[unlikely]]
      spill(r, b);
  }

  // A full bucket. In a job of several processes: into its owner's inbox, or applied here when
  // this process owns it; either way this process then applies what arrived in its own inbox. In
  // a job of one process: applied to its slice under the slice's lock; a batch made for one
  // thread gives another thread's bucket twice the room.
  [[gnu::noinline]] void spill(std::size_t r, Bucket& b) {
    if (sliced()) {
      std::lock_guard lock(slice_locks_[r].mu);
      apply(b.held());
      return b.clear();
    }
    if (!inbox_) return b.grow(2 * b.store.size());
    if (r == static_cast<std::size_t>(table_->runtime().process())) {
      std::lock_guard lock(*table_lock_);
      apply(b.held());
    } else {
      inbox_->send(static_cast<int>(r), b.store.data(), [this] { try_drain(); });
    }
    b.clear();
    try_drain();
  }

  // Applies the chunks arrived in this process's inbox, unless another thread is at it.
  void try_drain() {
    std::unique_lock lock(*table_lock_, std::try_to_lock);
    if (lock.owns_lock()) inbox_->drain([this](const std::byte* c) { apply_chunk(c); });
  }

  void apply_chunk(const std::byte* chunk) {
    T* x = table_->local().data();
    for (std::size_t k = 0; k < kBucket; ++k) {
      Entry e;
      std::memcpy(&e, chunk + k * sizeof(Entry), sizeof(Entry));
      apply_one(x[e.at], e.value, op_);
    }
  }

  static void apply_one(T& x, T value, comm::AtomicOp op) {
    switch (op) {
      case comm::AtomicOp::add:
        x += value;
        break;
      case comm::AtomicOp::bit_xor:
        if constexpr (std::is_integral_v<T>) x ^= value;
        break;
      case comm::AtomicOp::bit_or:
        if constexpr (std::is_integral_v<T>) x |= value;
        break;
      case comm::AtomicOp::bit_and:
        if constexpr (std::is_integral_v<T>) x &= value;
        break;
    }
  }

  void apply(std::span<const Entry> updates) {
    T* x = table_->local().data();
    for (const Entry& e : updates) apply_one(x[e.at], e.value, op_);
  }

  DistArray<T>* table_;
  std::uint64_t number_ = 0;  // UpdateBatch #number_
  comm::AtomicOp op_;
  std::size_t P_;
  int maker_ = 0;               // the batch number (batch_thread()) of the thread that made it
  Slot* own_ = nullptr;         // its slot (found without the lookup)
  index first_ = 0;             // the table's first global index
  std::uint64_t size_ = 0;      // the table's size
  index base_ = 0, extra_ = 0;  // the block split: n / P, n % P
  int shift_ = 0;          // log2(base_) when every block has base_ = 2^k entries, -2 on a user's
                           // partition, else -1
  std::vector<index> lo_;  // every process's first global index (every slice's: the block's)
  std::size_t parts_ = 1;  // the buckets of a slot: one per process, or per slice
  // One lock per slice, on its own cache line (nullptr: the block is not cut).
  struct alignas(64) SliceLock {
    std::mutex mu;
  };
  std::unique_ptr<SliceLock[]> slice_locks_;
  std::unique_ptr<detail::ThreadSlots<Slot>> slots_ =
      std::make_unique<detail::ThreadSlots<Slot>>();  // every adding thread's buckets
  std::vector<Entry> send_, recv_;                    // kept between flushes
  std::vector<std::size_t> counts_;                   // send counts of the last flush
  std::unique_ptr<detail::BatchInbox> inbox_;         // full buckets from the other processes
  std::unique_ptr<std::mutex> table_lock_ =
      std::make_unique<std::mutex>();  // whoever applies updates to the block before the flush
};

}  // namespace compas

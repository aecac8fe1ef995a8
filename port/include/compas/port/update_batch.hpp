// An update batch on a 1-D DistArray: (global index, value) updates added by any process, bucketed
// per owning process, and applied by the owners at flush(), as PRK's MPI RandomAccess trades its
// buckets with MPI_Alltoall and MPI_Alltoallv (what a port writes instead of one atomic per
// update, or a GatherPlan made for every batch).
//
//   compas::DistArray<std::uint64_t> table(rt, n);
//   compas::UpdateBatch<std::uint64_t> batch(table, compas::comm::AtomicOp::bit_xor);
//   for (...) batch.add(j, v);   // table[j] ^= v at flush, wherever j lives
//   batch.flush();               // collective: every update is in place on return
//
// In a loop of many adds per thread, `const auto add = batch.adder();` (made by the adding thread,
// inside the parallel region) then `add(j, v)` does the same with the batch's constants held in
// the handle (registers) rather than read from the batch after every update.
//
// add() checks the index (std::out_of_range naming it and the table's range) and appends to a
// bucket of the owner; from any threads at once (an OpenMP team of any size, Runtime::run's
// threads, the program's own): each adding thread has its own buckets, found through a
// thread_local number (batch_slots.hpp) and made at its first add. At flush a process sends its
// threads' updates in order of their OpenMP thread numbers (threads outside OpenMP regions after,
// in the order they first added). Making a batch and flush() are collectives, funneled like those
// of collectives.hpp: the thread that made the Runtime, outside OpenMP parallel regions, every
// process the same calls in the same order. Making one checks that every process makes it on the
// same table with the same operator; batches are numbered in the order they were made (number()).
// flush() checks the calls (processes flushing different batches, or one flushing while another
// makes another collective: the same CollectiveError on every process, naming both processes and
// both calls, before any update moves; the batch keeps them), exchanges the counts (P per process)
// and then the updates (one alltoallv); every owner applies what it received and its own updates
// to its block with plain operations (no atomics: the calling thread applies them), in source
// rank order. Updates a process makes to its own block move no message. A job of one process
// applies every update at add() instead (atomically when omp_get_max_threads() was over 1 when
// the batch was made, as an OpenMP code would, from any thread then; plain operations otherwise,
// by the thread that made the batch, while other threads' updates wait in their buckets for the
// flush): a team's threads share the work. Either way the table's values are defined after
// flush(), not between.
//
// Operators: add on any arithmetic T; bit_xor, bit_or, bit_and on integral T (std::invalid_argument
// at construction otherwise). The batch keeps its buffers between flushes (no allocation once
// they have grown). It refers to the table: keep it alive and in place.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <type_traits>
#include <typeinfo>
#include <vector>

#include "compas/comm/window.hpp"
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
// Checks every process's flush (the same call on the same batch, element type and size, operator
// and table size: CollectiveError otherwise) and exchanges the counts: returns recv_counts[r],
// the updates rank r sends here.
std::vector<std::size_t> flush_counts(const Processes& ps, std::uint64_t batch,
                                      const std::type_info& type, std::size_t elem,
                                      comm::AtomicOp op, index size,
                                      std::span<const std::size_t> send_counts);

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
  // One adding thread's buckets, by owning process.
  struct Slot {
    std::vector<std::vector<Entry>> to;
  };

  // Collective (funneled, like flush()): every process makes the same batches in the same order,
  // on the same table, with the same T and operator.
  explicit UpdateBatch(DistArray<T>& table, comm::AtomicOp op = comm::AtomicOp::bit_xor)
      : table_(&table), op_(op), P_(static_cast<std::size_t>(table.runtime().processes())) {
    detail::check_batch_op(op, std::is_integral_v<T>, typeid(T));
    number_ =
        detail::make_batch(table.runtime(), table.number(), typeid(T), sizeof(T), op, table.size());
    atomic_ = detail::batch_threads() > 1;
    maker_ = detail::batch_thread();
    own_ = &slot();
    const index n = table.size(), P = static_cast<index>(P_);
    first_ = table.domain().lo;
    size_ = static_cast<std::uint64_t>(n);
    base_ = n / P;
    extra_ = n % P;
    if (!table.partition().is_block())
      shift_ = -2;  // a user's partition: its owner lookup
    else if (extra_ == 0 && base_ > 0 && (base_ & (base_ - 1)) == 0)
      while ((index{1} << shift_) < base_) ++shift_;
    else
      shift_ = -1;
    for (index r = 0; r < P; ++r) lo_.push_back(table.partition().part(static_cast<int>(r)).lo);
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

  // table[i] op= value at the next flush(); i in table.domain().
  void add(index i, T value) {
    const index off = i - first_;
    if (static_cast<std::uint64_t>(off) >= size_) [[unlikely]]
      detail::index_outside("UpdateBatch::add", i, domain());
    const bool maker = detail::batch_thread() == maker_;
    if (P_ == 1 && (maker || atomic_))  // this process owns every index: at once
      return apply_at(table_->local().data()[off], value, op_, atomic_);
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
      if (data_ != nullptr) return apply_at(data_[off], value, op_, atomic_);
      batch_->bucket(*slot_, i, off, value);
    }

   private:
    friend class UpdateBatch;
    Adder(UpdateBatch* b, T* data, bool atomic, Slot* slot)
        : batch_(b),
          data_(data),
          first_(b->first_),
          size_(b->size_),
          op_(b->op_),
          atomic_(atomic),
          slot_(slot) {}
    UpdateBatch* batch_;
    T* data_;  // the table's block when updates apply at once (one process), else nullptr
    index first_;
    std::uint64_t size_;
    comm::AtomicOp op_;
    bool atomic_;
    Slot* slot_;  // the making thread's buckets, else nullptr
  };

  Adder adder() {
    if (P_ == 1 && applies_here()) return Adder(this, table_->local().data(), atomic_, nullptr);
    return Adder(this, nullptr, false, &slot());
  }

  // Collective: every process's updates applied at their owners; the batch is empty after.
  void flush() {
    Processes ps(table_->runtime());
    ps.runtime().check_funneled("compas::UpdateBatch::flush", detail::kFunneled);
    const auto me = static_cast<std::size_t>(ps.process());
    count(me);  // first checked (nothing is lost when refused), then packed
    const std::vector<std::size_t> recv_counts =
        detail::flush_counts(ps, number_, typeid(T), sizeof(T), op_, table_->size(),
                             std::span<const std::size_t>(counts_));
    pack(me);
    std::size_t total = 0;
    for (std::size_t c : recv_counts) total += c;
    recv_.resize(total);
    for (Slot* s : slots_->ordered()) {
      apply(s->to[me]);
      s->to[me].clear();
    }
    detail::exchange<Entry>(ps, send_, counts_, recv_, recv_counts);
    apply(recv_);
  }

  // The updates this process holds for the next flush (added since the last one, bucketed). A job
  // of one process holds none (it applies every update at add()), but those of threads other than
  // the one that made a batch for one thread.
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
        send_.insert(send_.end(), b.begin(), b.end());
        b.clear();
      }
    }
  }

  // Whether this thread applies its updates at once in a job of one process: any thread when the
  // batch applies them atomically, else the thread that made it only (the others' go into their
  // buckets until flush(), so that no plain update meets another thread's).
  bool applies_here() const { return atomic_ || detail::batch_thread() == maker_; }

  // The calling thread's buckets (made at its first add).
  Slot& slot() {
    return slots_->mine([this] {
      auto s = std::make_unique<Slot>();
      s->to.resize(P_);
      return s;
    });
  }

  // Update `i` (offset `off` in the domain) into slot s's bucket for its owner.
  void bucket(Slot& s, index i, index off, T value) {
    const std::size_t r = owner(off);
    s.to[r].push_back({static_cast<std::uint64_t>(i - lo_[r]), value});
  }

  // x op= value: atomically when a team's threads update at once, plain otherwise.
  static void apply_at(T& x, T value, comm::AtomicOp op, bool atomic) {
    if (!atomic) return apply_one(x, value, op);
    std::atomic_ref<T> a(x);
    switch (op) {
      case comm::AtomicOp::add:
        a.fetch_add(value, std::memory_order_relaxed);
        break;
      case comm::AtomicOp::bit_xor:
        if constexpr (std::is_integral_v<T>) a.fetch_xor(value, std::memory_order_relaxed);
        break;
      case comm::AtomicOp::bit_or:
        if constexpr (std::is_integral_v<T>) a.fetch_or(value, std::memory_order_relaxed);
        break;
      case comm::AtomicOp::bit_and:
        if constexpr (std::is_integral_v<T>) a.fetch_and(value, std::memory_order_relaxed);
        break;
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
  bool atomic_ = false;         // one process: updates applied atomically (a team adds at once)
  int maker_ = 0;               // the batch number (batch_thread()) of the thread that made it
  Slot* own_ = nullptr;         // its slot (found without the lookup)
  index first_ = 0;             // the table's first global index
  std::uint64_t size_ = 0;      // the table's size
  index base_ = 0, extra_ = 0;  // the block split: n / P, n % P
  int shift_ = 0;          // log2(base_) when every block has base_ = 2^k entries, -2 on a user's
                           // partition, else -1
  std::vector<index> lo_;  // every process's first global index
  std::unique_ptr<detail::ThreadSlots<Slot>> slots_ =
      std::make_unique<detail::ThreadSlots<Slot>>();  // every adding thread's buckets
  std::vector<Entry> send_, recv_;                    // kept between flushes
  std::vector<std::size_t> counts_;                   // send counts of the last flush
};

}  // namespace compas

// The untyped machinery behind DistArray<T, 3> (dist_array3.hpp): agreement on the array, the
// process grid, the geometry of this process's part, its window, and the exchange with up to 26
// neighbours (faces, edges, corners).
//
// Window layout: the field (planes x rows x pitch of the largest part, with halos; `lead`
// elements first so that every row's first owned element starts a 64-byte line; with
// Layout::contiguous this part's box packed in it), then for each
// of the 26 directions two receive areas (by exchange parity) sized for the largest block that
// can arrive from there. Signal word s counts the exchanges whose block from direction s arrived.
#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "compas/base/type_name.hpp"
#include "compas/port/dist_array3.hpp"
#include "compas/threads/team.hpp"
#include "dist_agree.hpp"
#include "dist_grid3.hpp"
#include "dist_members3.hpp"
#include "dist_partition3.hpp"
#include "exchange_steps.hpp"

namespace compas::detail {

namespace {

constexpr int kDirs = 26;
constexpr index kStaggers = 8;

// Direction s: (dz, dy, dx) in {-1, 0, 1}^3 without (0, 0, 0), in lexicographic order, so the
// opposite direction of s is 25 - s.
std::array<int, 3> step(int s) {
  const int idx = s < 13 ? s : s + 1;
  return {idx / 9 - 1, idx / 3 % 3 - 1, idx % 3 - 1};
}
constexpr int opposite(int s) {
  return kDirs - 1 - s;
}

template <class T>
std::string triple(const std::array<T, 3>& v, const char* sep) {
  std::string t = std::to_string(v[0]);
  t += sep;
  t += std::to_string(v[1]);
  t += sep;
  t += std::to_string(v[2]);
  return t;
}

std::string describe(const DistShape3& s) {
  const DistOptions3& o = s.options;
  std::string d = "3-D ";
  d += range_text(s.domain.planes);
  d += " x ";
  d += range_text(s.domain.rows);
  d += " x ";
  d += range_text(s.domain.cols);
  if (o.grid != std::array<int, 3>{0, 0, 0}) {
    d += " over a process grid ";
    d += triple(o.grid, " x ");
  }
  if (!o.partition.empty()) {
    d += " split at ";
    d += partition_text(o.partition);
  }
  d += " of ";
  d += std::to_string(s.elem_bytes);
  d += "-byte elements";
  if (s.elem_type) {
    d += " (";
    d += base::type_name(*s.elem_type);
    d += ")";
  }
  d += ", halo ";
  d += triple(o.halo, ", ");
  d += ", periodic ";
  d += triple(std::array<int, 3>{o.periodic[0], o.periodic[1], o.periodic[2]}, "");
  if (o.fill == comm::Fill::none) d += ", unfilled";
  if (o.layout == Layout::contiguous) d += ", contiguous";
  return d;
}

index checked_mul(index a, index b) {
  index out = 0;
  if (__builtin_mul_overflow(a, b, &out))
    throw std::length_error("DistArray<T, 3>: the part does not fit in memory");
  return out;
}

}  // namespace

struct Halo3::Impl {
  Runtime* rt = nullptr;
  Group* group = nullptr;     // nullptr: the whole job
  std::vector<int> members;   // job ranks in grid order
  int rank = -1;              // this process's place among them; -1: not a member
  std::vector<int> place_of;  // by job rank: its place among the members, or -1
  DistShape3 shape;
  Partition3 part;  // resolved: the one given, or the block split
  std::array<int, 3> g{}, pos{};
  Range3 owned;
  std::array<index, 3> n{}, nmax{}, h{};
  index pitch = 0, plane = 0, lead = 0;
  std::byte* origin = nullptr;
  int nb[kDirs] = {};
  index box[kDirs] = {}, box_at[kDirs][2] = {};
  std::unique_ptr<comm::WindowBytes> win;
  std::vector<std::byte> pack[kDirs];
  comm::Request sent[kDirs];
  std::uint64_t number = 0;  // DistArray #number (ObjectKind::dist_array)
  std::uint64_t epoch = 0;
  bool pending = false;

  // A block of the field in local coordinates (0 = the first halo cell of each dimension).
  struct Box {
    std::array<index, 3> lo, n;
  };

  std::size_t bytes(index elements) const {
    return static_cast<std::size_t>(elements) * shape.elem_bytes;
  }
  std::byte* at(index i, index j, index k) const {
    return origin + bytes(i * plane + j * pitch + k);
  }
  bool exchanges(int s) const { return nb[s] >= 0 && box[s] > 0; }

  void place();    // grid, position, owned part, neighbours
  void resolve();  // the partition, checked
  // The processes an exchange agrees over (exchange_steps.hpp): the job, or the group's members
  // (std::logic_error on a process outside the group).
  Processes processes() const;
  void layout();  // pitch, plane, receive areas, window, origin
  int neighbour(const std::array<int, 3>& d) const;
  // What goes towards direction s (an edge of the owned cells), and where what comes from it goes.
  Box edge(int s) const;
  Box halo_from(int s) const;
  // f(cell, packed, n) for each row of block b (n elements) and its place in `packed`.
  template <class F>
  void rows_of(const Box& b, std::byte* packed, F f) const;
  void send(int s, const Box& b);  // block b, packed, to the neighbour towards s
  // f(s, inbox) for each direction's block of this epoch as it arrives, then every send complete.
  template <class F>
  void arrivals(F f);
  void post();
  void finish();  // every halo in place, every send complete
  // The reverse: every halo block back to its owner, added there into the edge it images.
  void post_halos();
  void add_arrivals(AddFn add);
};

void Halo3::Impl::place() {
  place_of.assign(static_cast<std::size_t>(rt->processes()), -1);
  for (std::size_t i = 0; i < members.size(); ++i)
    place_of[static_cast<std::size_t>(members[i])] = static_cast<int>(i);
  rank = place_of[static_cast<std::size_t>(rt->process())];
  resolve();
  g = part.grid();
  for (int d = 0; d < 3; ++d) {
    nmax[d] = largest_part(part, d);
    h[d] = shape.options.halo[d];
  }
  std::fill(std::begin(nb), std::end(nb), -1);
  if (rank < 0) {  // no cells: an empty part at the domain's first corner
    const Range3& dom = shape.domain;
    owned = {
        {dom.planes.lo, dom.planes.lo}, {dom.rows.lo, dom.rows.lo}, {dom.cols.lo, dom.cols.lo}};
    return;
  }
  pos = {rank / (g[1] * g[2]), rank / g[2] % g[1], rank % g[2]};
  owned = part.part(pos);
  for (int d = 0; d < 3; ++d) n[d] = owned.dim(d).size();
  for (int s = 0; s < kDirs; ++s) nb[s] = neighbour(step(s));
}

// After agree_on_array(): the same shape everywhere, so the same CollectiveError on every process
// (as Halo::Impl::validate for 1-D and 2-D arrays).
void Halo3::Impl::resolve() {
  static const char* const kName[3] = {"planes", "rows", "columns"};
  const std::string what = std::string("DistArray<T, 3> (") + describe(shape) + "): ";
  const int p = static_cast<int>(members.size());
  for (int d = 0; d < 3; ++d)
    if (shape.options.halo[d] < 0)
      throw CollectiveError(what + "halo " + std::to_string(shape.options.halo[d]) + " of the " +
                            kName[d] + ": 0 or more is allowed");
  if (shape.options.partition.empty()) {
    const std::array<int, 3> grid = choose_grid3(p, shape.options.grid);
    for (int d = 0; d < 3; ++d)
      if (shape.domain.dim(d).size() < grid[d])
        throw CollectiveError(what + std::to_string(shape.domain.dim(d).size()) + " " + kName[d] +
                              " over " + std::to_string(grid[d]) +
                              " processes leave some process without any: at least one each");
    part = block_partition(shape.domain, p, grid);
  } else {
    const std::string problem =
        partition_problem(shape.options.partition, shape.domain, p, shape.options.grid);
    if (!problem.empty()) throw CollectiveError(what + problem);
    part = shape.options.partition;
  }
  for (int d = 0; d < 3; ++d) {
    const index width = shape.options.halo[d], smallest = smallest_part(part, d);
    const bool neighbours = part.grid()[d] > 1 || shape.options.periodic[d];
    if (neighbours && width > smallest)
      throw CollectiveError(what + "halo " + std::to_string(width) + " of the " + kName[d] +
                            " is wider than the smallest part (" + std::to_string(smallest) + " " +
                            kName[d] + ")");
  }
}

Processes Halo3::Impl::processes() const {
  if (!group) return Processes(*rt);
  if (rank < 0)
    throw std::logic_error("DistArray<T, 3> #" + std::to_string(number) +
                           " lives on the group of processes " + members_text(members) +
                           ": process " + std::to_string(rt->process()) +
                           " is not a member and takes no part in its halo exchanges (only the "
                           "members call them)");
  return Processes(*group);
}

int Halo3::Impl::neighbour(const std::array<int, 3>& d) const {
  std::array<int, 3> q{};
  for (int k = 0; k < 3; ++k) {
    q[k] = pos[k] + d[k];
    if (q[k] < 0 || q[k] >= g[k]) {
      if (!shape.options.periodic[k]) return -1;
      q[k] = (q[k] + g[k]) % g[k];
    }
  }
  return members[static_cast<std::size_t>((q[0] * g[1] + q[1]) * g[2] + q[2])];
}

Halo3::Impl::Box Halo3::Impl::edge(int s) const {
  const auto d = step(s);
  Box b{};
  for (int k = 0; k < 3; ++k) {
    b.lo[k] = d[k] > 0 ? n[k] : h[k];  // owned cells start at h; the last h of them at n
    b.n[k] = d[k] == 0 ? n[k] : h[k];
  }
  return b;
}

Halo3::Impl::Box Halo3::Impl::halo_from(int s) const {
  const auto d = step(s);
  Box b{};
  for (int k = 0; k < 3; ++k) {
    b.lo[k] = d[k] < 0 ? 0 : d[k] > 0 ? h[k] + n[k] : h[k];
    b.n[k] = d[k] == 0 ? n[k] : h[k];
  }
  return b;
}

void Halo3::Impl::layout() {
  if (rank < 0) {  // the window is job-wide: a process outside the group makes one without data
    win = std::make_unique<comm::WindowBytes>(rt->comm(), 0, kDirs, shape.options.fill);
    origin = win->local();
    return;
  }
  const index line = 64 % shape.elem_bytes == 0 ? static_cast<index>(64 / shape.elem_bytes) : 1;
  // The window's layout is the same everywhere (the largest part's padded planes); every block is
  // packed to be sent, so Layout::contiguous may lay this part's own box in it packed.
  const index room = (nmax[2] + 2 * h[2] + line - 1) / line * line;
  const index room_plane = checked_mul(nmax[1] + 2 * h[1], room);
  const bool packed = shape.options.layout == Layout::contiguous;
  pitch = packed ? n[2] + 2 * h[2] : room;
  plane = packed ? (n[1] + 2 * h[1]) * pitch : room_plane;
  index end = line * (1 + 4 * kStaggers) + checked_mul(nmax[0] + 2 * h[0], room_plane);
  for (int s = 0; s < kDirs; ++s) {
    const auto d = step(s);
    box[s] = 1;
    for (int k = 0; k < 3; ++k) box[s] = checked_mul(box[s], d[k] == 0 ? nmax[k] : h[k]);
    for (int parity = 0; parity < 2; ++parity) {
      box_at[s][parity] = end;
      end += box[s];
    }
  }
  win = std::make_unique<comm::WindowBytes>(
      rt->comm(),
      comm::detail::checked_bytes(static_cast<std::size_t>(end), shape.elem_bytes,
                                  "DistArray<T, 3>"),
      kDirs, shape.options.fill);
  std::byte* const base = win->local();
  const auto first_owned = reinterpret_cast<std::uintptr_t>(base) + bytes(h[2]);
  const auto line_bytes = static_cast<std::uintptr_t>(line) * shape.elem_bytes;
  lead =
      static_cast<index>((line_bytes - first_owned % line_bytes) % line_bytes / shape.elem_bytes);
  static std::atomic<unsigned> made{0};  // staggered starts: see dist_halo.cpp (4K aliasing)
  lead += static_cast<index>(made.fetch_add(1) % kStaggers) * 4 * line;
  origin = base + bytes(lead);
  for (int s = 0; s < kDirs; ++s)
    if (exchanges(s)) pack[s].resize(bytes(box[s]));
}

template <class F>
void Halo3::Impl::rows_of(const Box& b, std::byte* packed, F f) const {
  const std::size_t row = bytes(b.n[2]);
  for (index i = 0; i < b.n[0]; ++i)
    for (index j = 0; j < b.n[1]; ++j)
      f(at(b.lo[0] + i, b.lo[1] + j, b.lo[2]),
        packed + row * static_cast<std::size_t>(i * b.n[1] + j), static_cast<std::size_t>(b.n[2]));
}

void Halo3::Impl::send(int s, const Box& b) {
  std::byte* out = pack[s].data();
  rows_of(b, out, [&](std::byte* cell, std::byte* p, std::size_t n) {
    std::memcpy(p, cell, bytes(static_cast<index>(n)));
  });
  const int to = opposite(s);  // the neighbour receives it from the opposite direction
  sent[s] = win->put_signal_nb(nb[s], bytes(box_at[to][epoch % 2]), out,
                               bytes(b.n[0] * b.n[1] * b.n[2]), static_cast<std::size_t>(to));
}

template <class F>
void Halo3::Impl::arrivals(F f) {
  const std::uint64_t parity = epoch % 2;
  for (int s = 0; s < kDirs; ++s) {
    if (!exchanges(s)) continue;
    win->wait_until(static_cast<std::size_t>(s), epoch, nb[s]);
    f(s, win->local() + bytes(box_at[s][parity]));
  }
  for (auto& r : sent) r.wait();
}

void Halo3::Impl::post() {
  for (int s = 0; s < kDirs; ++s)
    if (exchanges(s)) send(s, edge(s));
}

void Halo3::Impl::finish() {
  arrivals([&](int s, std::byte* in) {
    rows_of(halo_from(s), in, [&](std::byte* cell, std::byte* p, std::size_t n) {
      std::memcpy(cell, p, bytes(static_cast<index>(n)));
    });
  });
}

// What arrives from direction s is the neighbour's halo towards us: it images our edge towards s.
void Halo3::Impl::post_halos() {
  for (int s = 0; s < kDirs; ++s)
    if (exchanges(s)) send(s, halo_from(s));
}

void Halo3::Impl::add_arrivals(AddFn add) {
  arrivals([&](int s, std::byte* in) { rows_of(edge(s), in, add); });
}

Halo3::Halo3(Runtime& rt, Group* group, const DistShape3& shape) : impl_(std::make_unique<Impl>()) {
  rt.check_funneled("DistArray<T, 3> (a collective)",
                    "make arrays before run(), or between runs, from the thread that made the "
                    "Runtime");
  Impl& m = *impl_;
  m.rt = &rt;
  m.group = group;
  m.shape = shape;
  // First: an array that differs must fail alike everywhere, not hang.
  m.number = agree_on_array(rt, describe(shape) + (group ? " on a group" : ""));
  if (group) {
    m.members = agree_on_members(rt, group->members());
  } else {
    for (int r = 0; r < rt.processes(); ++r) m.members.push_back(r);
  }
  m.place();
  m.layout();
}

// As Halo's: a pending exchange is completed first.
Halo3::~Halo3() {
  if (!impl_ || !impl_->pending) return;
  try {
    finish();
  } catch (...) {
  }
}

bool Halo3::pending() const {
  return impl_->pending;
}

Range3 Halo3::owned() const {
  return impl_->owned;
}
std::array<int, 3> Halo3::grid() const {
  return impl_->g;
}
index Halo3::pitch() const {
  return impl_->pitch;
}
index Halo3::plane() const {
  return impl_->plane;
}
std::byte* Halo3::origin() {
  return impl_->origin;
}
std::uint64_t Halo3::number() const {
  return impl_->number;
}
const Partition3& Halo3::partition() const {
  return impl_->part;
}
bool Halo3::member() const {
  return impl_->rank >= 0;
}
const std::vector<int>& Halo3::members() const {
  return impl_->members;
}
Range3 Halo3::part_of(int job_rank) const {
  const Impl& m = *impl_;
  const int r = m.place_of.at(static_cast<std::size_t>(job_rank));
  if (r < 0) return {};
  return m.part.part({r / (m.g[1] * m.g[2]), r / m.g[2] % m.g[1], r % m.g[2]});
}
Runtime& Halo3::runtime() const {
  return *impl_->rt;
}
const DistShape3& Halo3::shape() const {
  return impl_->shape;
}

void Halo3::begin() {
  begin_exchange_steps(*impl_, "DistArray<T, 3>");
}

void Halo3::finish() {
  finish_exchange_steps(*impl_);
}

void Halo3::exchange() {
  begin();
  finish();
}

bool Halo3::test() {
  return test_exchange_steps(*impl_);
}

void Halo3::accumulate(AddFn add) {
  accumulate_steps(*impl_, "DistArray<T, 3>", add);
}

void Halo3::accumulate_funneled(AddFn add) {
  check_funneled("DistArray<T, 3>::accumulate_halos()");
  accumulate(add);
}

bool Halo3::in_place() const {
  return impl_->rank >= 0 && impl_->members.size() == 1;
}

// As begin_exchange_steps, nothing posted and no epoch: the copies follow (copy_share).
void Halo3::begin_in_place() {
  Impl& m = *impl_;
  if (m.pending)
    throw std::logic_error(
        "DistArray<T, 3>: begin_exchange() while an exchange of the array is pending: wait() "
        "first");
  // One process: checked without a message. The epoch stays: it counts the exchanges through the
  // window (the signals), and this one sends no block.
  agree_on_step(m, CollectiveCall::halo_exchange);
}

std::size_t Halo3::in_place_bytes() const {
  const Impl& m = *impl_;
  index cells = 0;
  for (int s = 0; s < kDirs; ++s)
    if (m.exchanges(s)) cells += m.box[s];
  return m.bytes(cells);
}

namespace {

// Rows [lo, hi) of a pair of blocks n1 rows to a plane (row r: plane r / n1, row r % n1), the
// rows `pitch` bytes apart, the planes `plane` bytes: to[r] = from[r] and, with `two`, to_o[r] =
// from_o[r], each by copy(to, from). A tight loop per plane (its pointers stepped, nothing
// recomputed), so that many rows' loads are in flight at once.
template <class Copy>
void copy_rows(std::size_t lo, std::size_t hi, index n1, std::size_t pitch, std::size_t plane,
               std::array<std::byte*, 2> to, std::array<const std::byte*, 2> from, bool one,
               bool two, Copy copy) {
  const auto rows = static_cast<std::size_t>(n1);
  std::size_t r = lo;
  while (r < hi) {
    const std::size_t i = r / rows, j = r % rows, end = std::min(hi, (i + 1) * rows);
    const std::size_t at = i * plane + j * pitch;
    std::byte *t = to[0] + at, *t2 = to[1] + at;
    const std::byte *f = from[0] + at, *f2 = from[1] + at;
    if (one && two)
      for (std::size_t k = r; k < end; ++k, t += pitch, f += pitch, t2 += pitch, f2 += pitch) {
        copy(t, f);
        copy(t2, f2);
      }
    else if (one)
      for (std::size_t k = r; k < end; ++k, t += pitch, f += pitch) copy(t, f);
    else
      for (std::size_t k = r; k < end; ++k, t2 += pitch, f2 += pitch) copy(t2, f2);
    r = end;
  }
}

}  // namespace

// The halo from direction s is the edge towards the opposite direction (this process is its own
// neighbour on every side). A direction and its opposite go together, row by row (their blocks
// have one shape here, and a column face's two rows share their cache lines); each pair's rows
// are split in `parts` near-equal shares. Rows of one element of 8 or 4 bytes (a column face) as
// fixed-size copies the compiler inlines.
void Halo3::copy_share(int part, int parts) {
  const Impl& m = *impl_;
  for (int s = 0; s < kDirs / 2; ++s) {
    const int o = opposite(s);
    const bool one = m.exchanges(s), two = m.exchanges(o);
    if (!one && !two) continue;
    const Impl::Box to = m.halo_from(s), from = m.edge(o), to_o = m.halo_from(o),
                    from_o = m.edge(s);
    const auto [lo, hi] =
        threads::block_range(static_cast<std::size_t>(to.n[0] * to.n[1]), parts, part);
    const std::array<std::byte*, 2> t{m.at(to.lo[0], to.lo[1], to.lo[2]),
                                      m.at(to_o.lo[0], to_o.lo[1], to_o.lo[2])};
    const std::array<const std::byte*, 2> f{m.at(from.lo[0], from.lo[1], from.lo[2]),
                                            m.at(from_o.lo[0], from_o.lo[1], from_o.lo[2])};
    const std::size_t row = m.bytes(to.n[2]), pitch = m.bytes(m.pitch), plane = m.bytes(m.plane);
    const auto rows = [&](auto copy) {
      copy_rows(lo, hi, to.n[1], pitch, plane, t, f, one, two, copy);
    };
    if (row == 8)
      rows([](std::byte* a, const std::byte* b) { std::memcpy(a, b, 8); });
    else if (row == 4)
      rows([](std::byte* a, const std::byte* b) { std::memcpy(a, b, 4); });
    else
      rows([row](std::byte* a, const std::byte* b) { std::memcpy(a, b, row); });
  }
}

void Halo3::check_funneled(const char* call) const {
  impl_->rt->check_funneled(call,
                            "inside Runtime::run every thread of the team calls the (t) form");
}

void Halo3::exchange_funneled() {
  check_funneled("DistArray<T, 3>::exchange_halos()");
  exchange();
}

}  // namespace compas::detail

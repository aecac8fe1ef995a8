// The untyped machinery behind DistArray: agreement on the shape, the geometry of one process's
// part (a 2-D block; a 1-D array is one row), its window, and the halo exchange.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "compas/base/type_name.hpp"
#include "compas/port/dist_array.hpp"
#include "dist_agree.hpp"
#include "exchange_steps.hpp"

namespace compas::detail {

namespace {

constexpr index kStaggers = 8;  // arrays' starts cycle through 8 offsets of 4 lines

// The eight sides of a 2-D part (a 1-D part uses west and east only), as offsets in the process
// grid. Signal word s of an array's window counts the exchanges whose data came from side s.
enum Side : std::size_t {
  kWest,
  kEast,
  kNorth,
  kSouth,
  kNorthWest,
  kNorthEast,
  kSouthWest,
  kSouthEast,
  kSides
};
constexpr int kRowStep[kSides] = {0, 0, -1, 1, -1, -1, 1, 1};
constexpr int kColStep[kSides] = {-1, 1, 0, 0, -1, 1, -1, 1};
// What arrives from side s was sent towards the opposite side by that neighbour.
constexpr Side kOpposite[kSides] = {kEast,      kWest,      kSouth,     kNorth,
                                    kSouthEast, kSouthWest, kNorthEast, kNorthWest};

std::string describe(const DistShape& s) {
  std::string d = s.dims == 1 ? "1-D " : "2-D ";
  if (s.dims == 2) {
    d += range_text(s.rows);
    d += " x ";
  }
  d += range_text(s.cols);
  if (s.dims == 2)
    d += s.decomposition == Decomposition::grid ? " over a process grid" : " by rows";
  if (s.grid.rows != 0 || s.grid.cols != 0)
    d += " of " + std::to_string(s.grid.rows) + " x " + std::to_string(s.grid.cols);
  d += " of ";
  d += std::to_string(s.elem_bytes);
  d += "-byte elements";
  if (s.elem_type) d += " (" + base::type_name(*s.elem_type) + ")";
  d += ", halo ";
  d += std::to_string(s.halo);
  if (s.periodic) d += ", periodic";
  if (s.fill == comm::Fill::none) d += ", unfilled";
  if (s.layout == Layout::contiguous) d += ", contiguous";
  if (!s.starts.empty()) {
    d += ", split at";
    for (index v : s.starts) {
      d += ' ';  // not " " + ...: GCC 12's -Wrestrict misfires on that here
      d += std::to_string(v);
    }
  }
  return d;
}

index mul(index a, index b, const char* what) {
  index out = 0;
  if (__builtin_mul_overflow(a, b, &out))
    throw std::length_error(std::string("DistArray: ") + what + " does not fit in memory");
  return out;
}

index add(index a, index b, const char* what) {
  index out = 0;
  if (__builtin_add_overflow(a, b, &out))
    throw std::length_error(std::string("DistArray: ") + what + " does not fit in memory");
  return out;
}

index ceil_div(index a, index b) {
  return (a + b - 1) / b;
}

// The process grid a 2-D array over Decomposition::grid asked for (DistOptions::grid), with this
// process's place in it. Throws std::invalid_argument (alike on every process) for sides that do
// not multiply to P.
Runtime::Grid choose_grid(const Runtime& rt, const DistShape& s) {
  const int p = rt.processes(), me = rt.process();
  int rows = s.grid.rows, cols = s.grid.cols;
  if (rows == 0 && cols == 0) return rt.process_grid();
  const std::string asked = "DistArray: process grid " + std::to_string(rows) + " x " +
                            std::to_string(cols) + " for " + std::to_string(p) + " processes";
  if (s.dims != 2 || s.decomposition != Decomposition::grid)
    throw std::invalid_argument(asked + ": a grid is for 2-D arrays over Decomposition::grid");
  if (rows < 0 || cols < 0)
    throw std::invalid_argument(asked + ": sides are 0 (compas chooses) or more");
  if (rows == 0) rows = p % cols == 0 ? p / cols : 0;
  if (cols == 0) cols = p % rows == 0 ? p / rows : 0;
  if (rows == 0 || cols == 0 || static_cast<long>(rows) * cols != p)
    throw std::invalid_argument(asked + ": the sides must multiply to the " + std::to_string(p) +
                                " processes");
  return {rows, cols, me / cols, me % cols};
}

}  // namespace

struct Halo::Impl {
  Runtime* rt = nullptr;
  DistShape shape;
  int grid_rows = 1, grid_cols = 1, my_row = 0, my_col = 0;
  Range2 owned;
  index rows = 0, cols = 0;          // owned sizes
  index rows_max = 0, cols_max = 0;  // the largest part's: the window is the same everywhere
  index hr = 0, hc = 0;              // halo depth of rows (above, below) and columns
  index pitch = 0, lead = 0;         // elements per local row; before the first halo column
  index field = 0;                   // elements of the field region (with room for any lead)
  int nb[kSides] = {-1, -1, -1, -1, -1, -1, -1, -1};  // the neighbour on each side, or -1
  index box[kSides] = {};                             // elements of one receive area from each side
  index box_at[kSides][2] = {};  // its element offset in the window, by exchange parity
  std::unique_ptr<comm::WindowBytes> win;
  std::byte* origin = nullptr;
  std::vector<std::uint64_t> origin_bytes;  // every process's origin - its window's start
  std::uint64_t number = 0;                 // DistArray #number (ObjectKind::dist_array)
  std::uint64_t epoch = 0;
  bool pending = false;  // begun, not finished
  std::vector<std::byte> pack[kSides];
  comm::Request sent[kSides];

  std::size_t bytes(index elements) const {
    return static_cast<std::size_t>(elements) * shape.elem_bytes;
  }
  std::byte* at(index r, index c) { return origin + bytes(r * pitch + c); }
  std::byte* inbox(std::size_t side, std::uint64_t parity) {
    return win->local() + bytes(box_at[side][parity]);
  }
  bool exchanges(std::size_t side) const { return nb[side] >= 0 && box[side] > 0; }
  // Part c of the columns (1-D: process c's part): the block split, or the user's split points.
  Range col_part(int c) const {
    if (shape.starts.empty()) return block_of(shape.cols, grid_cols, c);
    return {shape.starts[static_cast<std::size_t>(c)],
            shape.starts[static_cast<std::size_t>(c) + 1]};
  }
  index smallest_cols() const;
  index largest_cols() const;
  int neighbour(int drow, int dcol) const;
  void validate() const;
  index layout_boxes(index room);
  // The block of owned cells side s needs (rows x cols from local (r0, c0)), and where the block
  // that arrives from side s goes in the halo.
  struct Block {
    index r0, c0, rows, cols;
  };
  Block edge(std::size_t side) const;
  Block halo_of(std::size_t side) const;
  void post();    // every side's edge on its way
  void finish();  // every side's halo in place, every send complete
  // The reverse: every halo block back to its owner, added there into the edge it mirrors.
  void post_halos();
  void add_arrivals(AddFn add);
  void send_block(std::size_t side, const Block& b);
};

int Halo::Impl::neighbour(int drow, int dcol) const {
  int r = my_row + drow, c = my_col + dcol;
  if (r < 0 || r >= grid_rows || c < 0 || c >= grid_cols) {
    if (!shape.periodic) return -1;
    r = (r + grid_rows) % grid_rows;
    c = (c + grid_cols) % grid_cols;
  }
  return r * grid_cols + c;
}

// After agree_on_array(): the same shape everywhere, so the same error on every process.
void Halo::Impl::validate() const {
  const DistShape& s = shape;
  const std::string what = "DistArray (" + describe(s) + "): ";
  if (s.elem_bytes == 0) throw CollectiveError(what + "elements of 0 bytes");
  if (s.halo < 0)
    throw CollectiveError(what + "halo " + std::to_string(s.halo) +
                          " is not allowed: 0 or more cells");
  auto check_dim = [&](const Range& d, int parts, const std::string& name, bool exchanged) {
    std::string msg = what;
    if (d.hi < d.lo) {
      msg += name + " [" + std::to_string(d.lo) + ", " + std::to_string(d.hi);
      msg += ") is not a range: lo > hi";
      throw CollectiveError(msg);
    }
    if (d.size() < parts) {
      msg += std::to_string(d.size()) + " " + name + " over " + std::to_string(parts);
      msg += " processes leave some process without any: at least one each";
      throw CollectiveError(msg);
    }
    const index smallest = &d == &s.cols ? smallest_cols() : d.size() / parts;
    if (exchanged && s.halo > smallest) {
      msg += "halo " + std::to_string(s.halo) + " is wider than the smallest part (";
      msg += std::to_string(smallest) + " " + name + "): at most " + std::to_string(smallest);
      throw CollectiveError(msg);
    }
  };
  check_dim(s.cols, grid_cols, s.dims == 1 ? "elements" : "columns", grid_cols > 1 || s.periodic);
  if (s.dims == 2) check_dim(s.rows, grid_rows, "rows", grid_rows > 1 || s.periodic);
}

Halo::Halo(Runtime& rt, const DistShape& shape) : impl_(std::make_unique<Impl>()) {
  rt.check_funneled("DistArray", "make arrays before run(), or between runs");
  Impl& m = *impl_;
  m.rt = &rt;
  m.shape = shape;
  if (shape.dims != 1 && shape.dims != 2)
    throw std::invalid_argument("DistArray: " + std::to_string(shape.dims) +
                                " dimensions are not allowed: 1 or 2");
  if (shape.dims == 1) m.shape.rows = Range{0, 1};
  // First: a shape that differs must fail alike everywhere, not hang.
  m.number = agree_on_array(rt, describe(m.shape));

  const int p = rt.processes(), me = rt.process();
  // A grid asked for where none is used is refused (choose_grid says why).
  if (shape.decomposition != Decomposition::grid || shape.dims != 2) (void)choose_grid(rt, m.shape);
  if (shape.dims == 1) {
    m.grid_cols = p;
    m.my_col = me;
  } else if (shape.decomposition == Decomposition::rows) {
    m.grid_rows = p;
    m.my_row = me;
  } else {
    const Runtime::Grid g = choose_grid(rt, m.shape);
    m.grid_rows = g.rows;
    m.grid_cols = g.cols;
    m.my_row = g.row;
    m.my_col = g.col;
  }
  m.validate();

  const DistShape& s = m.shape;
  m.owned = {block_of(s.rows, m.grid_rows, m.my_row), m.col_part(m.my_col)};
  m.rows = m.owned.rows.size();
  m.cols = m.owned.cols.size();
  m.rows_max = ceil_div(s.rows.size(), m.grid_rows);
  m.cols_max = m.largest_cols();
  m.hr = s.dims == 2 ? s.halo : 0;
  m.hc = s.halo;
  for (std::size_t side = 0; side < kSides; ++side)
    if (s.dims == 2 || kRowStep[side] == 0)
      m.nb[side] = m.neighbour(kRowStep[side], kColStep[side]);

  // Rows of whole 64-byte lines (when the element divides a line); `lead` is chosen below so the
  // first owned element of every row starts a line. The window's layout is the same everywhere
  // (`room` per row); Layout::contiguous packs this part's rows into it (its own pitch).
  const index line = 64 % s.elem_bytes == 0 ? static_cast<index>(64 / s.elem_bytes) : 1;
  const index width = add(m.cols_max, 2 * m.hc, "a row");
  const index room = add(width, line - 1, "a row") / line * line;  // whole lines
  m.pitch = s.layout == Layout::contiguous ? m.cols + 2 * m.hc : room;
  // Room before the field for the alignment and a stagger of up to kStaggers * 4 lines.
  m.field = add(line * (1 + 4 * kStaggers),
                mul(add(m.rows_max, 2 * m.hr, "the rows"), room, "the field"), "field");
  const index total = m.layout_boxes(room);
  m.win = std::make_unique<comm::WindowBytes>(
      rt.comm(),
      comm::detail::checked_bytes(static_cast<std::size_t>(total), s.elem_bytes, "DistArray"),
      kSides, s.fill);
  std::byte* const base = m.win->local();
  const auto first_owned = reinterpret_cast<std::uintptr_t>(base) + m.bytes(m.hc);
  const auto line_bytes = static_cast<std::uintptr_t>(line) * s.elem_bytes;
  m.lead = static_cast<index>((line_bytes - first_owned % line_bytes) % line_bytes / s.elem_bytes);
  // Windows start on pages, so two arrays would otherwise have the same address bits below 4 KiB
  // at the same index: a sweep loading one and storing the other then stalls on false store-to-
  // load dependencies (4K aliasing). Arrays made one after another start 4 lines (256 bytes)
  // apart instead, as the two copies of Laplace's field did in one window before.
  static std::atomic<unsigned> made{0};
  m.lead += static_cast<index>(made.fetch_add(1) % kStaggers) * 4 * line;
  m.origin = base + m.bytes(m.lead);
  m.origin_bytes.assign(static_cast<std::size_t>(rt.processes()), m.bytes(m.lead));
  if (rt.processes() > 1) {
    const std::uint64_t mine = m.bytes(m.lead);
    rt.collectives().allgather(std::span<const std::uint64_t>(&mine, 1),
                               std::span<std::uint64_t>(m.origin_bytes));
  }
  for (std::size_t side : {kWest, kEast, kNorthWest, kNorthEast, kSouthWest, kSouthEast})
    if (m.exchanges(side)) m.pack[side].resize(m.bytes(m.box[side]));
}

// The receive areas after the field: from west and east hc columns of the largest part's rows,
// from north and south hr rows of a whole row's `room` (sent as they lie in the field: a north
// or south neighbour has this part's columns, so its pitch), from the corners hr x hc; each
// twice, by exchange parity. Returns the window's size in elements.
index Halo::Impl::layout_boxes(index room) {
  const index cols_box = mul(hc, rows_max, "the column halos");
  const index rows_box = mul(hr, room, "the row halos");
  const index corner_box = mul(hr, hc, "the corner halos");
  index end = field;
  for (std::size_t side = 0; side < kSides; ++side) {
    box[side] = kRowStep[side] == 0 ? cols_box : kColStep[side] == 0 ? rows_box : corner_box;
    for (int parity = 0; parity < 2; ++parity) {
      box_at[side][parity] = end;
      end = add(end, box[side], "the halos");
    }
  }
  return end;
}

// A pending exchange is completed first (its neighbours' blocks may still be arriving), and its
// HaloExchange then finds nothing to do (Exchanger's destructor). An error completing it (a dead
// neighbour) is left to the job's other waits: a destructor does not throw.
Halo::~Halo() {
  if (!impl_ || !impl_->pending) return;
  try {
    finish();
  } catch (...) {
  }
}

void throw_assigned_while_pending() {
  throw std::logic_error(
      "DistArray: assigned to while an exchange of the array is pending: wait() first (the "
      "array's halo machinery would go while the exchange still uses it)");
}

bool Halo::pending() const {
  return impl_->pending;
}

Range2 Halo::owned() const {
  return impl_->owned;
}
ProcessGrid Halo::grid() const {
  return {impl_->grid_rows, impl_->grid_cols};
}
index Halo::halo_rows() const {
  return impl_->hr;
}
index Halo::halo_cols() const {
  return impl_->hc;
}
index Halo::pitch() const {
  return impl_->pitch;
}
std::byte* Halo::origin() {
  return impl_->origin;
}
std::uint64_t Halo::number() const {
  return impl_->number;
}

Range2 Halo::part_of(int rank) const {
  const Impl& m = *impl_;
  if (rank < 0 || rank >= m.rt->processes())
    throw std::out_of_range("DistArray: process " + std::to_string(rank) +
                            " is outside the job: 0.." + std::to_string(m.rt->processes() - 1));
  return {block_of(m.shape.rows, m.grid_rows, rank / m.grid_cols), m.col_part(rank % m.grid_cols)};
}

index Halo::Impl::smallest_cols() const {
  index n = col_part(0).size();
  for (int c = 1; c < grid_cols; ++c) n = std::min(n, col_part(c).size());
  return n;
}

index Halo::Impl::largest_cols() const {
  index n = 0;
  for (int c = 0; c < grid_cols; ++c) n = std::max(n, col_part(c).size());
  return n;
}

std::size_t Halo::origin_bytes(int rank) const {
  (void)part_of(rank);  // checks the rank
  return impl_->origin_bytes[static_cast<std::size_t>(rank)];
}

comm::WindowBytes& Halo::window() {
  return *impl_->win;
}

Halo::Impl::Block Halo::Impl::edge(std::size_t side) const {
  const index r0 = kRowStep[side] > 0 ? rows : hr, c0 = kColStep[side] > 0 ? cols : hc;
  return {r0, c0, kRowStep[side] == 0 ? rows : hr, kColStep[side] == 0 ? cols : hc};
}

Halo::Impl::Block Halo::Impl::halo_of(std::size_t side) const {
  const int dr = kRowStep[side], dc = kColStep[side];
  return {dr < 0   ? 0
          : dr > 0 ? hr + rows
                   : hr,
          dc < 0   ? 0
          : dc > 0 ? hc + cols
                   : hc,
          dr == 0 ? rows : hr, dc == 0 ? cols : hc};
}

// Block b of this part to the neighbour on `side`, into its receive area for the opposite side:
// north and south blocks (whole rows) as they lie in the field, the others packed.
void Halo::Impl::send_block(std::size_t side, const Block& b) {
  const std::size_t to = kOpposite[side];  // where it lands at the neighbour
  const std::size_t at_bytes = bytes(box_at[to][epoch % 2]);
  if (kColStep[side] == 0) {
    const std::size_t len = bytes((b.rows - 1) * pitch + b.cols);
    sent[side] = win->put_signal_nb(nb[side], at_bytes, at(b.r0, b.c0), len, to);
    return;
  }
  std::byte* out = pack[side].data();
  for (index r = 0; r < b.rows; ++r)
    std::memcpy(out + bytes(r * b.cols), at(b.r0 + r, b.c0), bytes(b.cols));
  sent[side] = win->put_signal_nb(nb[side], at_bytes, out, bytes(b.rows * b.cols), to);
}

void Halo::Impl::post() {
  for (std::size_t side = 0; side < kSides; ++side)
    if (exchanges(side)) send_block(side, edge(side));
}

void Halo::Impl::post_halos() {
  for (std::size_t side = 0; side < kSides; ++side)
    if (exchanges(side)) send_block(side, halo_of(side));
}

void Halo::Impl::add_arrivals(AddFn add) {
  const std::uint64_t parity = epoch % 2;
  for (std::size_t side = 0; side < kSides; ++side) {
    if (!exchanges(side)) continue;
    win->wait_until(side, epoch, nb[side]);
    const Block e = edge(side);  // the neighbour's halo on our side mirrors this edge
    const std::byte* in = inbox(side, parity);
    const index stride = kColStep[side] == 0 ? pitch : e.cols;
    for (index r = 0; r < e.rows; ++r)
      add(at(e.r0 + r, e.c0), in + bytes(r * stride), static_cast<std::size_t>(e.cols));
  }
  for (auto& r : sent) r.wait();
}

void Halo::Impl::finish() {
  const std::uint64_t parity = epoch % 2;
  for (std::size_t side = 0; side < kSides; ++side) {
    if (!exchanges(side)) continue;
    win->wait_until(side, epoch, nb[side]);
    const Block h = halo_of(side);
    const std::byte* in = inbox(side, parity);
    const index stride = kColStep[side] == 0 ? pitch : h.cols;  // rows arrive as they lay
    for (index r = 0; r < h.rows; ++r)
      std::memcpy(at(h.r0 + r, h.c0), in + bytes(r * stride), bytes(h.cols));
  }
  for (auto& r : sent) r.wait();
}

void Halo::begin() {
  begin_exchange_steps(*impl_, "DistArray");
}

void Halo::finish() {
  finish_exchange_steps(*impl_);
}

void Halo::exchange() {
  begin();
  finish();
}

bool Halo::test() {
  return test_exchange_steps(*impl_);
}

void Halo::accumulate(AddFn add) {
  accumulate_steps(*impl_, "DistArray", add);
}

void Halo::accumulate_funneled(AddFn add) {
  check_funneled("DistArray::accumulate_halos()");
  accumulate(add);
}

void Halo::check_funneled(const char* call) const {
  impl_->rt->check_funneled(call,
                            "inside Runtime::run every thread of the team calls the (t) form");
}

void Halo::exchange_funneled() {
  check_funneled("DistArray::exchange_halos()");
  exchange();
}

}  // namespace compas::detail

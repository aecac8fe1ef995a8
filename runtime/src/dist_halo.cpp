// The untyped machinery behind DistArray: agreement on the shape, the geometry of one process's
// part (a 2-D block; a 1-D array is one row), its window, and the halo exchange.
#include <atomic>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "compas/base/type_name.hpp"
#include "compas/runtime/dist_array.hpp"

namespace compas::detail {

namespace {

constexpr index kStaggers = 8;  // arrays' starts cycle through 8 offsets of 4 lines

// Signal words of an array's window: which side the data came from.
enum : std::size_t { kFromWest = 0, kFromEast = 1, kFromNorth = 2, kFromSouth = 3, kSignals = 4 };

std::string range_text(Range r) {
  std::string t = "[";
  t += std::to_string(r.lo);
  t += ", ";
  t += std::to_string(r.hi);
  t += ")";
  return t;
}

std::string describe(const DistShape& s) {
  std::string d = s.dims == 1 ? "1-D " : "2-D ";
  if (s.dims == 2) {
    d += range_text(s.rows);
    d += " x ";
  }
  d += range_text(s.cols);
  if (s.dims == 2)
    d += s.decomposition == Decomposition::grid ? " over a process grid" : " by rows";
  d += " of ";
  d += std::to_string(s.elem_bytes);
  d += "-byte elements";
  if (s.elem_type) d += " (" + base::type_name(*s.elem_type) + ")";
  d += ", halo ";
  d += std::to_string(s.halo);
  if (s.periodic) d += ", periodic";
  if (s.fill == comm::Fill::none) d += ", unfilled";
  return d;
}

// Every process must have made the same array: the same text from every rank. Throws the same
// error on every process (each sees every description).
void agree(Runtime& rt, const DistShape& s) {
  const std::string mine = describe(s);
  if (rt.processes() == 1) return;
  const auto all = rt.bootstrap().allgather(mine);
  for (std::size_t r = 1; r < all.size(); ++r)
    if (all[r] != all[0])
      throw CollectiveError("DistArray: the processes made different arrays: rank 0 a " + all[0] +
                            ", rank " + std::to_string(r) + " a " + all[r] +
                            " (every process creates the same arrays in the same order)");
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
  index col_box = 0, row_box = 0;    // elements of one receive area for columns / rows
  int west = -1, east = -1, north = -1, south = -1;
  std::unique_ptr<comm::WindowBytes> win;
  std::byte* origin = nullptr;
  std::uint64_t epoch = 0;
  std::vector<std::byte> pack_west, pack_east;

  std::size_t bytes(index elements) const {
    return static_cast<std::size_t>(elements) * shape.elem_bytes;
  }
  // Element offsets in the window of the receive areas, by side and exchange parity.
  index col_inbox(std::size_t side, std::uint64_t parity) const {
    return field + static_cast<index>(parity * 2 + side) * col_box;
  }
  index row_inbox(std::size_t side, std::uint64_t parity) const {
    return field + 4 * col_box + static_cast<index>(parity * 2 + side - kFromNorth) * row_box;
  }
  std::byte* at(index r, index c) { return origin + bytes(r * pitch + c); }
  int neighbour(int drow, int dcol) const;
  void validate() const;
  void exchange_cols(std::uint64_t parity);
  void exchange_rows(std::uint64_t parity);
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

// After agree(): the same shape everywhere, so the same error on every process.
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
    const index smallest = d.size() / parts;
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
  agree(rt, m.shape);  // first: a shape that differs must fail alike everywhere, not hang

  const int p = rt.processes(), me = rt.process();
  if (shape.dims == 1) {
    m.grid_cols = p;
    m.my_col = me;
  } else if (shape.decomposition == Decomposition::rows) {
    m.grid_rows = p;
    m.my_row = me;
  } else {
    const Runtime::Grid g = rt.process_grid();
    m.grid_rows = g.rows;
    m.grid_cols = g.cols;
    m.my_row = g.row;
    m.my_col = g.col;
  }
  m.validate();

  const DistShape& s = m.shape;
  m.owned = {split(s.rows, m.grid_rows, m.my_row), split(s.cols, m.grid_cols, m.my_col)};
  m.rows = m.owned.rows.size();
  m.cols = m.owned.cols.size();
  m.rows_max = ceil_div(s.rows.size(), m.grid_rows);
  m.cols_max = ceil_div(s.cols.size(), m.grid_cols);
  m.hr = s.dims == 2 ? s.halo : 0;
  m.hc = s.halo;
  m.west = m.neighbour(0, -1);
  m.east = m.neighbour(0, 1);
  m.north = s.dims == 2 ? m.neighbour(-1, 0) : -1;
  m.south = s.dims == 2 ? m.neighbour(1, 0) : -1;

  // Rows of whole 64-byte lines (when the element divides a line); `lead` is chosen below so the
  // first owned element of every row starts a line.
  const index line = 64 % s.elem_bytes == 0 ? static_cast<index>(64 / s.elem_bytes) : 1;
  const index width = add(m.cols_max, 2 * m.hc, "a row");
  m.pitch = ceil_div(add(width, line - 1, "a row"), line) * line;
  // Room before the field for the alignment and a stagger of up to kStaggers * 4 lines.
  m.field = add(line * (1 + 4 * kStaggers),
                mul(add(m.rows_max, 2 * m.hr, "the rows"), m.pitch, "the field"), "field");
  m.col_box = mul(m.hc, m.rows_max, "the column halos");
  m.row_box = mul(m.hr, m.pitch, "the row halos");
  const index total = add(m.field, mul(4, add(m.col_box, m.row_box, "halos"), "halos"), "array");
  m.win = std::make_unique<comm::WindowBytes>(
      rt.comm(),
      comm::detail::checked_bytes(static_cast<std::size_t>(total), s.elem_bytes, "DistArray"),
      kSignals, s.fill);
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
  m.pack_west.resize(m.bytes(m.col_box));
  m.pack_east.resize(m.bytes(m.col_box));
}

Halo::~Halo() = default;

Range2 Halo::owned() const {
  return impl_->owned;
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

void Halo::Impl::exchange_cols(std::uint64_t parity) {
  const std::size_t n = bytes(hc);
  auto pack = [&](std::vector<std::byte>& out, index c0) {
    for (index r = 0; r < rows; ++r) std::memcpy(out.data() + bytes(r * hc), at(hr + r, c0), n);
  };
  auto unpack = [&](std::size_t side, index c0) {
    const std::byte* in = win->local() + bytes(col_inbox(side, parity));
    for (index r = 0; r < rows; ++r) std::memcpy(at(hr + r, c0), in + bytes(r * hc), n);
  };
  const std::size_t len = bytes(rows * hc);
  comm::Request to_west, to_east;
  if (west >= 0) {
    pack(pack_west, hc);
    to_west = win->put_signal_nb(west, bytes(col_inbox(kFromEast, parity)), pack_west.data(), len,
                                 kFromEast);
  }
  if (east >= 0) {
    pack(pack_east, cols);
    to_east = win->put_signal_nb(east, bytes(col_inbox(kFromWest, parity)), pack_east.data(), len,
                                 kFromWest);
  }
  if (west >= 0) {
    win->wait_until(kFromWest, epoch, west);
    unpack(kFromWest, 0);
  }
  if (east >= 0) {
    win->wait_until(kFromEast, epoch, east);
    unpack(kFromEast, hc + cols);
  }
  to_west.wait();
  to_east.wait();
}

void Halo::Impl::exchange_rows(std::uint64_t parity) {
  // hr whole rows, halo columns included (filled by exchange_cols just before: the corners).
  const std::size_t len = bytes((hr - 1) * pitch + cols + 2 * hc);
  comm::Request to_north, to_south;
  if (north >= 0)
    to_north =
        win->put_signal_nb(north, bytes(row_inbox(kFromSouth, parity)), at(hr, 0), len, kFromSouth);
  if (south >= 0)
    to_south = win->put_signal_nb(south, bytes(row_inbox(kFromNorth, parity)), at(rows, 0), len,
                                  kFromNorth);
  if (north >= 0) {
    win->wait_until(kFromNorth, epoch, north);
    std::memcpy(at(0, 0), win->local() + bytes(row_inbox(kFromNorth, parity)), len);
  }
  if (south >= 0) {
    win->wait_until(kFromSouth, epoch, south);
    std::memcpy(at(hr + rows, 0), win->local() + bytes(row_inbox(kFromSouth, parity)), len);
  }
  to_north.wait();
  to_south.wait();
}

void Halo::exchange() {
  Impl& m = *impl_;
  ++m.epoch;
  const std::uint64_t parity = m.epoch % 2;
  if (m.hc > 0 && (m.west >= 0 || m.east >= 0)) m.exchange_cols(parity);
  if (m.hr > 0 && (m.north >= 0 || m.south >= 0)) m.exchange_rows(parity);
}

void Halo::exchange_funneled() {
  impl_->rt->check_funneled("DistArray::exchange_halos()",
                            "inside Runtime::run every thread of the team calls exchange_halos(t)");
  exchange();
}

}  // namespace compas::detail

// copy_offsets: same-host put, put_signal and get between ranks 0 and 1 at every pair of source
// and destination offsets into a page, for sizes from 4 KiB to 4 MiB. Run under a launcher:
//
//   compas-run -n 2 -t 1 copy_offsets [--min-size 4KiB] [--max-size 4MiB] [--repeats 9]
//                                     [--ops put,get,put_signal]
//
// A copy whose destination sits a little past its source modulo 4096 (4K aliasing), or whose
// destination is misaligned where the source is not, can be far slower than the same copy at
// other offsets on some CPUs, in the C library's memcpy ("rep movsb"). The user's buffers can land
// anywhere, so every offset pair is timed: the source buffer (rank 0's own for put and put_signal,
// rank 1's window for get) and the destination each start at one of kOffsets bytes past a page
// boundary. One sample is rank 0's time for blocking operations of one size at one pair, about
// 1 MiB of them (at least one): at most a few hundred microseconds, so that few samples share a
// time slice with other work on the machine. Every pair is sampled in turn, and the whole round
// `--repeats` times, so that a drift of the machine's load touches every pair alike. A pair's
// figure is its fastest sample: other work only adds time, and what an offset costs the copy
// itself it costs in every sample. Per op and size, rank 0 prints the best and the worst pair,
// their ratio and the pair (0, 0) (fastest and median sample), as a Markdown table row; `check`
// is "ok" when the worst is at most 2x the best. Timing decides nothing: the exit status is 0
// unless an argument or the job fails.
#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "compas/base/size.hpp"
#include "compas/base/statistics.hpp"
#include "compas/comm/comm.hpp"
#include "compas/comm/window.hpp"

namespace {

using Clock = std::chrono::steady_clock;
namespace comm = compas::comm;
namespace base = compas::base;

constexpr std::size_t kPage = 4096;
// Bytes past a page boundary: aligned, 16 and 64 bytes in, half a page in, 16 bytes before the next
// page and 16 bytes into it. Their differences give (destination - source) mod 4096 of 0, +-16,
// +-32, +-48, +-64, 2032..2064 and more.
constexpr std::size_t kOffsets[] = {0, 16, 64, 2048, kPage - 16, kPage + 16};
constexpr std::size_t kSlack = 2 * kPage;  // room past the largest offset

struct Args {
  std::size_t min_size = 4 << 10;
  std::size_t max_size = 4 << 20;
  int repeats = 9;
  std::vector<std::string> ops = {"put", "get", "put_signal"};
};

Args parse_args(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(flag + " needs a value");
      return argv[++i];
    };
    if (flag == "--min-size") {
      a.min_size = base::parse_size(value(), base::SizeSyntax::bytes, "--min-size");
    } else if (flag == "--max-size") {
      a.max_size = base::parse_size(value(), base::SizeSyntax::bytes, "--max-size");
    } else if (flag == "--repeats") {
      const std::string v = value();
      a.repeats = std::atoi(v.c_str());
      if (a.repeats < 1) throw std::invalid_argument("--repeats '" + v + "': at least 1");
    } else if (flag == "--ops") {
      a.ops.clear();
      std::stringstream in(value());
      for (std::string op; std::getline(in, op, ',');) {
        if (op != "put" && op != "get" && op != "put_signal")
          throw std::invalid_argument("--ops: '" + op + "' is not put, get or put_signal");
        a.ops.push_back(op);
      }
    } else {
      throw std::invalid_argument("unknown argument '" + flag + "'");
    }
  }
  if (a.min_size > a.max_size || a.max_size > (std::size_t{1} << 30))
    throw std::invalid_argument("--min-size must be at most --max-size, and that at most 1 GiB");
  return a;
}

// 4, 8, 16, 32, 64 KiB, 96 KiB, 128, 192, 256 KiB, 512 KiB, ... within [min, max]: powers of two,
// and 1.5x between 64 and 256 KiB, where the C library's copy changed speed by offset.
std::vector<std::size_t> sizes_of(const Args& a) {
  std::vector<std::size_t> sizes;
  for (std::size_t n = a.min_size; n <= a.max_size; n *= 2) {
    sizes.push_back(n);
    const std::size_t between = n + n / 2;
    if (n >= (64 << 10) && n < (256 << 10) && between <= a.max_size) sizes.push_back(between);
  }
  return sizes;
}

struct Pair {
  std::size_t src = 0, dst = 0;
};

struct Timed {
  Pair pair;
  double us = 0;         // the fastest repeat
  double median_us = 0;  // the median of the repeats
};

// A page-aligned buffer of `bytes`.
struct PageBuffer {
  explicit PageBuffer(std::size_t bytes)
      : p(static_cast<std::byte*>(std::aligned_alloc(kPage, (bytes + kPage - 1) / kPage * kPage))) {
    if (!p) throw std::bad_alloc();
    for (std::size_t i = 0; i < bytes; ++i) p[i] = static_cast<std::byte>(i * 13 + 5);
  }
  ~PageBuffer() { std::free(p); }
  PageBuffer(const PageBuffer&) = delete;
  PageBuffer& operator=(const PageBuffer&) = delete;
  std::byte* p;
};

class Sweep {
 public:
  Sweep(comm::Comm& c, const Args& a)
      : c_(c),
        a_(a),
        w_(c, a.max_size + kSlack, 1),
        src_(a.max_size + kSlack),
        dst_(a.max_size + kSlack) {
    // The window offset that puts the peer's bytes on a page boundary (its mapping here when
    // reached by load/store; a window's base otherwise).
    if (c_.rank() == 0 && w_.direct(1)) {
      const auto at = reinterpret_cast<std::uintptr_t>(w_.peer_data(1));
      window_shift_ = (kPage - at % kPage) % kPage;
    }
    for (std::size_t s : kOffsets)
      for (std::size_t d : kOffsets) pairs_.push_back({s, d});
  }

  bool direct() { return w_.direct(1); }

  // Every pair at one size, best and worst first, then the pair (0, 0). Collective.
  std::vector<Timed> measure(const std::string& op, std::size_t n) {
    c_.barrier();
    std::vector<Timed> out;
    if (c_.rank() == 0) {
      const int iters = static_cast<int>(std::max<std::size_t>(1, (std::size_t{1} << 20) / n));
      std::vector<std::vector<double>> us(pairs_.size());
      for (int r = 0; r < a_.repeats + 1; ++r)  // the first round warms up
        for (std::size_t k = 0; k < pairs_.size(); ++k) {
          const double t = time(op, n, pairs_[k], iters);
          if (r > 0) us[k].push_back(t);
        }
      for (std::size_t k = 0; k < pairs_.size(); ++k) {
        const auto s = base::spread(us[k]);
        out.push_back({pairs_[k], s.min, s.median});
      }
    }
    c_.barrier();
    return out;
  }

 private:
  // Microseconds per operation over `iters` blocking operations.
  double time(const std::string& op, std::size_t n, Pair pr, int iters) {
    const std::size_t at = window_shift_;
    const auto start = Clock::now();
    if (op == "put") {
      for (int i = 0; i < iters; ++i) w_.put(1, at + pr.dst, src_.p + pr.src, n);
    } else if (op == "put_signal") {
      for (int i = 0; i < iters; ++i) w_.put_signal(1, at + pr.dst, src_.p + pr.src, n, 0);
    } else {
      for (int i = 0; i < iters; ++i) w_.get(1, at + pr.src, dst_.p + pr.dst, n);
    }
    c_.flush(1);
    return std::chrono::duration<double, std::micro>(Clock::now() - start).count() / iters;
  }

  comm::Comm& c_;
  const Args& a_;
  comm::WindowBytes w_;
  PageBuffer src_, dst_;
  std::size_t window_shift_ = 0;
  std::vector<Pair> pairs_;
};

std::string pair_text(Pair p) {
  return fmt::format("({}, {})", p.src, p.dst);
}

void print_row(const std::string& op, std::size_t n, const std::vector<Timed>& t) {
  const auto [lo, hi] = std::minmax_element(
      t.begin(), t.end(), [](const Timed& x, const Timed& y) { return x.us < y.us; });
  const double ratio = hi->us / lo->us;
  fmt::print("| {} | {} | {:.3g} {} | {:.3g} {} | {:.2f} | {:.3g} / {:.3g} | {} |\n", op,
             base::format_size(n), lo->us, pair_text(lo->pair), hi->us, pair_text(hi->pair), ratio,
             t.front().us, t.front().median_us, ratio <= 2.0 ? "ok" : "SLOW");
  std::fflush(stdout);
}

int run(int argc, char** argv) {
  const Args a = parse_args(argc, argv);
  auto boot = comm::Bootstrap::from_environment();
  if (boot->size() < 2)
    throw std::invalid_argument("copy_offsets needs 2 processes: compas-run -n 2 copy_offsets");
  comm::Comm c(*boot);
  Sweep sweep(c, a);
  const bool leader = c.rank() == 0;
  if (leader) {
    fmt::print(
        "copy_offsets: ranks 0 and 1, same-host load/store: {}; {} offset pairs "
        "(source, destination: bytes past a page boundary), fastest of {} samples\n",
        sweep.direct() ? "yes" : "no", std::size(kOffsets) * std::size(kOffsets), a.repeats);
    fmt::print(
        "| op | size | best us (pair) | worst us (pair) | worst / best | (0, 0) us, fastest / "
        "median | check |\n|---|---|---|---|---|---|---|\n");
  }
  for (const std::string& op : a.ops)
    for (std::size_t n : sizes_of(a)) {
      const auto t = sweep.measure(op, n);
      if (leader) print_row(op, n, t);
    }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "copy_offsets: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "copy_offsets: %s\n", e.what());
    return 1;
  }
}

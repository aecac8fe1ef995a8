// compas membw's table: total and per-thread bandwidth against threads, with COMPaS 1998's
// figures beside them (Tables 1 and 2).
#include <fmt/core.h>

#include <algorithm>
#include <iterator>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "cmd_membw_args.hpp"

namespace compas::app {

namespace {

// COMPaS 1998: one node, four 200 MHz Pentium Pro on a 450GX bus (Solaris 2.5.1), MB/s.
constexpr double kPaperRead = 203.5, kPaperWrite = 97.9, kPaperCopy = 70.5;  // Table 1
struct PaperBcopy {
  int threads;
  double per_thread, total;
};
constexpr PaperBcopy kPaperBcopy[] = {
    {1, 71.31, 71.31}, {2, 37.06, 74.12}, {3, 24.75, 74.25}, {4, 18.56, 74.24}};  // Table 2

}  // namespace

void print_membw_table(const probes::MembwOptions& o, const probes::MembwResult& res,
                       const std::vector<std::string>& kernel_names) {
  std::map<std::pair<probes::MembwKernel, int>, const probes::MembwRecord*> cell;
  for (const auto& r : res.records) cell[{r.kernel, r.threads}] = &r;
  fmt::print(
      "memory bandwidth, GB/s (1e9 B/s): working set {} ({} B; all arrays, all threads), "
      "bind {}, median of {} repeats\n",
      base::format_size(o.size_bytes), o.size_bytes, o.bind.to_string(), o.repeats);
  fmt::print(
      "bytes counted as STREAM and likwid-bench count them: read + written, no write-allocate\n\n");
  fmt::print("{:>8}", "");
  for (const auto& name : kernel_names) fmt::print(" | {:^17}", name);
  fmt::print(" | {:^17}\n", "'98 bcopy, MB/s");
  fmt::print("{:>8}", "threads");
  for (std::size_t i = 0; i <= kernel_names.size(); ++i)
    fmt::print(" | {:>8} {:>8}", "total", "/thread");
  fmt::print("\n");
  for (int t : res.threads) {
    fmt::print("{:>8}", t);
    for (auto k : o.kernels) {
      const auto* r = cell.at({k, t});
      fmt::print(" | {:>8.2f} {:>8.2f}", r->bandwidth_gbs, r->per_thread_gbs);
    }
    const auto* p = std::find_if(std::begin(kPaperBcopy), std::end(kPaperBcopy),
                                 [&](const PaperBcopy& b) { return b.threads == t; });
    if (p != std::end(kPaperBcopy))
      fmt::print(" | {:>8.2f} {:>8.2f}", p->total, p->per_thread);
    else
      fmt::print(" | {:>8} {:>8}", "-", "-");
    fmt::print("\n");
  }
  // The paper's single-thread figures under the matching columns.
  fmt::print("{:>8}", "'98 MB/s");
  for (auto k : o.kernels) {
    const double v = k == probes::MembwKernel::load    ? kPaperRead
                     : k == probes::MembwKernel::store ? kPaperWrite
                     : k == probes::MembwKernel::copy  ? kPaperCopy
                                                       : 0;
    if (v > 0)
      fmt::print(" | {:>8.1f} {:>8}", v, "");
    else
      fmt::print(" | {:>8} {:>8}", "-", "");
  }
  fmt::print(" | {:>8} {:>8}\n", "", "");
  fmt::print(
      "'98: COMPaS 1998, one node of four 200 MHz Pentium Pro, in MB/s (Table 1: read, write, "
      "copy with one thread; Table 2: bcopy with 1-4 threads)\n\n");
}

}  // namespace compas::app

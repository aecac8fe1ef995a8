// cg_product: NAS CG's product A p alone (kernels/src/cg_panels.hpp), the panels' sums added in
// two orders, side by side on one thread:
//
//   tree     the panel tree (cg_tree.hpp), a grid's order (and rows' with SumOrder::tree), with
//            the groups of rows one thread takes when the tree keeps stack arrays (8), as
//            cg::Solver runs it
//   running  left to right over the panels (cd::running_steps: no stack arrays, one group), the
//            rows layout's default order
//
// The rows are those process 0 of --parts processes holds (row_block), the vector all na
// columns. The two run in alternating pairs (--pairs, default 60), so that both see the same
// machine; it prints the median time of each and the median of the per-pair ratios running /
// tree (the tree's speed relative to the running sum: below 1 is what the tree costs). A whole
// `compas run cg` on a shared machine moves by 10% and more between runs, far more than the
// product's own differences; this isolates them. Exit 1 if the two orders' products differ by
// more than rounding (1e-12 of the largest entry). Usage: cg_product [--class B] [--parts 2]
// [--pairs 60]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "../src/cg_internal.hpp"
#include "../src/cg_panels.hpp"
#include "../src/cg_tree.hpp"
#include "compas/threads/team.hpp"

namespace {

namespace cg = compas::kernels::cg;
namespace cd = compas::kernels::cg::detail;
using Clock = std::chrono::steady_clock;

struct Args {
  char cls = 'B';
  int parts = 2, pairs = 60;
};

[[noreturn]] void usage(const std::string& what) {
  std::fprintf(stderr,
               "cg_product: %s\nusage: cg_product [--class S|W|A|B|C|T] [--parts P >= 1] "
               "[--pairs N >= 1]\n",
               what.c_str());
  std::exit(2);
}

int positive(const char* flag, const char* v) {
  char* end = nullptr;
  const long n = std::strtol(v, &end, 10);
  if (*v == '\0' || *end != '\0' || n < 1 || n > 1000000)
    usage(std::string(flag) + " '" + v + "': a whole number from 1 to 1000000");
  return static_cast<int>(n);
}

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string f = argv[i];
    if (i + 1 >= argc) usage(f + ": needs a value");
    const char* v = argv[++i];
    if (f == "--class") {
      if (std::strlen(v) != 1) usage(std::string("--class '") + v + "': one of S W A B C T");
      a.cls = v[0];
    } else if (f == "--parts") {
      a.parts = positive("--parts", v);
    } else if (f == "--pairs") {
      a.pairs = positive("--pairs", v);
    } else {
      usage("unknown flag '" + f + "'");
    }
  }
  return a;
}

// A thread's rows cut into `groups` groups of whole chunks, each with its panels.
struct Grouped {
  std::vector<std::pair<std::int64_t, cd::Panels>> groups;  // (first row, panels)
  Grouped(const cg::Csr& a, cd::PanelRange panels, int count) {
    // As cg::Solver cuts a thread's rows (share_out): blocks of whole chunks.
    const std::int64_t rows = a.rows(), chunks = (rows + cg::kChunkRows - 1) / cg::kChunkRows;
    for (int g = 0; g < count; ++g) {
      const auto [c0, c1] =
          compas::threads::block_range(static_cast<std::size_t>(chunks), count, g);
      const std::int64_t r0 = std::min(rows, static_cast<std::int64_t>(c0) * cg::kChunkRows);
      const std::int64_t r1 = std::min(rows, static_cast<std::int64_t>(c1) * cg::kChunkRows);
      groups.emplace_back(r0, cd::Panels{});
      groups.back().second.build(a, panels, r0, r1);
    }
  }
  void times(const double* v, const std::vector<cd::LeafStep>& steps, double* out, double* stack,
             std::size_t stride) const {
    for (const auto& [r0, p] : groups) {
      const std::size_t at = static_cast<std::size_t>(r0);
      p.times(v, {steps.data(), out + at, stack ? stack + at : nullptr, stride}, true);
    }
  }
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const Args args = parse(argc, argv);
  cg::ClassParams cp;
  try {
    cp = cg::params(args.cls);
  } catch (const std::exception& e) {
    usage(e.what());
  }
  if (args.parts > cg::chunk_count(cp.na))
    usage("--parts '" + std::to_string(args.parts) + "': class " + std::string(1, cp.cls) +
          " has " + std::to_string(cg::chunk_count(cp.na)) +
          " row chunks, at most that many parts");
  const auto [lo, hi] = cg::row_block(cp.na, args.parts, 0);
  const cg::Csr a = cg::make_matrix(cp, lo, hi);
  const std::size_t rows = static_cast<std::size_t>(a.rows());
  const cd::PanelRange all{0, cg::panel_count(cp.na)};

  const std::vector<cd::LeafStep> tree = cd::leaf_steps(all);
  const int levels = cd::stack_depth(tree);
  const std::vector<cd::LeafStep> running = cd::running_steps(all);

  const Grouped tree_groups(a, all, levels > 0 ? 8 : 1), running_groups(a, all, 1);
  std::vector<double> v(static_cast<std::size_t>(cp.na)), out_tree(rows), out_running(rows);
  std::vector<double> stack(static_cast<std::size_t>(levels) * rows);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = 1.0 / static_cast<double>(1 + i % 97);

  std::vector<double> t_tree, t_running, ratio;
  for (int k = 0; k < args.pairs; ++k) {
    double dt = 0, dr = 0;
    for (int half = 0; half < 2; ++half) {  // which goes first alternates
      const bool tree_now = (half == 0) == (k % 2 == 0);
      const auto s = Clock::now();
      if (tree_now)
        tree_groups.times(v.data(), tree, out_tree.data(), stack.empty() ? nullptr : stack.data(),
                          rows);
      else
        running_groups.times(v.data(), running, out_running.data(), nullptr, rows);
      (tree_now ? dt : dr) = std::chrono::duration<double>(Clock::now() - s).count();
    }
    t_tree.push_back(dt);
    t_running.push_back(dr);
    ratio.push_back(dr / dt);
  }
  double diff = 0, largest = 0;  // relative to the largest entry (a row's sum may cancel to 0)
  for (std::size_t i = 0; i < rows; ++i) {
    diff = std::max(diff, std::fabs(out_tree[i] - out_running[i]));
    largest = std::max(largest, std::fabs(out_running[i]));
  }
  const double worst = largest > 0 ? diff / largest : diff;
  std::printf(
      "cg_product: class %c, rows [%lld, %lld) of %lld (process 0 of %d), %lld panels, "
      "%d stack levels, %d pairs\n",
      cp.cls, static_cast<long long>(lo), static_cast<long long>(hi), static_cast<long long>(cp.na),
      args.parts, static_cast<long long>(all.size()), levels, args.pairs);
  std::printf("  tree     %.3f ms (median)\n  running  %.3f ms (median)\n", median(t_tree) * 1e3,
              median(t_running) * 1e3);
  std::printf("  tree speed / running: %.3f (median of per-pair ratios)\n", median(ratio));
  std::printf("  largest difference of the two products, relative to the largest entry: %.2e\n",
              worst);
  if (!(worst <= 1e-12)) {
    std::fprintf(stderr, "cg_product: the two orders' products differ beyond rounding\n");
    return 1;
  }
  return 0;
}

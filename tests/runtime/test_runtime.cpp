// compas::Runtime: hybrid collectives against serial references, partitioning, options. Every
// rank of a compas-run job runs this program (P x T from the CTest variant); alone it is P = 1.
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <bit>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "../../runtime/src/binding_report.hpp"
#include "../common/doubling.hpp"
#include "../common/job_main.hpp"
#include "../common/word.hpp"
#include "compas/compas.hpp"

namespace {

// A 2x2 integer matrix product: associative, not commutative, so any reordering of operands
// changes the result (wrapping arithmetic keeps it exact).
struct Mat {
  std::uint64_t a = 1, b = 0, c = 0, d = 1;
  bool operator==(const Mat&) const = default;
};
struct matmul {
  Mat operator()(const Mat& x, const Mat& y) const {
    return {x.a * y.a + x.b * y.c, x.a * y.b + x.b * y.d, x.c * y.a + x.d * y.c,
            x.c * y.b + x.d * y.d};
  }
};
Mat operand(int g) {  // distinct for every global thread
  const auto u = static_cast<std::uint64_t>(g);
  return {u + 2, 1, u * 3 + 1, u + 5};
}

int global_threads() {
  return rt().processes() * rt().threads();
}

// A string of up to 24 characters with concatenation: associative, not commutative.
using Word = compas::testing::Word<24>;
using concat = compas::testing::Concat<24>;
Word word(const std::string& text) {
  return compas::testing::word<24>(text);
}
Word letter(int g) {  // one per global thread (or process)
  return word(std::string(1, static_cast<char>('a' + g)));
}
std::string letters(int from, int to) {  // letter(g) for g in [from, to)
  std::string s;
  for (int g = from; g < to; ++g) s += letter(g).str();
  return s;
}

// Values whose sum depends on the grouping: for P = 4 and 5, T = 1 and 2, the doubling grouping
// of the process totals differs from their left fold.
double dvalue(int node, int thread) {
  static constexpr double kBase[] = {0.5, 0.5, 1e16, -1e16, 3.0};
  return kBase[node % 5] + 0.25 * (node + 1) * thread;
}
std::uint64_t bits(double d) {
  return std::bit_cast<std::uint64_t>(d);
}
const auto add = [](double a, double b) { return a + b; };
// What the hybrid reductions compute from dvalue with T threads per process: each process's
// values in thread order, then the process totals grouped as comm's recursive doubling.
double dreference(int nodes, int threads) {
  std::vector<double> totals;
  for (int p = 0; p < nodes; ++p) {
    double mine = dvalue(p, 0);
    for (int t = 1; t < threads; ++t) mine += dvalue(p, t);
    totals.push_back(mine);
  }
  return compas::test::doubling_allreduce(totals, add);
}

TEST(Runtime, ShapeMatchesTheLauncher) {
  const char* size = std::getenv("COMPAS_SIZE");
  EXPECT_EQ(rt().processes(), size ? std::atoi(size) : 1);
  const char* t = std::getenv("COMPAS_THREADS");
  if (t) {
    EXPECT_EQ(rt().threads(), std::atoi(t));
  }
  EXPECT_EQ(rt().team().threads(), rt().threads());
  // Every thread runs inside the cores the launcher gave this process.
  if (const char* cpus = std::getenv("COMPAS_CPUS")) {
    const auto allowed = compas::threads::parse_cpu_list(cpus);
    const std::set<int> ok(allowed.begin(), allowed.end());
    for (const auto& cpus_of_thread : rt().team().binding())
      for (int c : cpus_of_thread) EXPECT_TRUE(ok.count(c)) << "cpu " << c << " not in " << cpus;
  }
}

TEST(Runtime, AllreduceOverEveryThreadOfEveryProcess) {
  const int g = global_threads();
  std::vector<long> sums(static_cast<std::size_t>(rt().threads()));
  std::vector<Mat> prods(static_cast<std::size_t>(rt().threads()));
  std::vector<double> maxes(static_cast<std::size_t>(rt().threads()));
  rt().run([&](compas::ThreadCtx& t) {
    const auto i = static_cast<std::size_t>(t.thread());
    sums[i] = rt().allreduce(t, static_cast<long>(t.global_id() + 1), compas::op::sum{});
    prods[i] = rt().allreduce(t, operand(t.global_id()), matmul{});
    maxes[i] = rt().allreduce(t, 0.5 * t.global_id(), compas::op::max{});
  });
  Mat want;
  for (int k = 0; k < g; ++k) want = matmul{}(want, operand(k));
  for (int i = 0; i < rt().threads(); ++i) {
    EXPECT_EQ(sums[static_cast<std::size_t>(i)], static_cast<long>(g) * (g + 1) / 2);
    EXPECT_TRUE(prods[static_cast<std::size_t>(i)] == want) << "thread " << i;
    EXPECT_EQ(maxes[static_cast<std::size_t>(i)], 0.5 * (g - 1));
  }
}

// Every thread of every process gets the same bits, those of the documented grouping; the
// job's P x T tells the grouping from a left fold from P = 4 on.
TEST(Runtime, AllreduceOfDoublesHasTheDocumentedBitsEverywhere) {
  std::vector<double> got(static_cast<std::size_t>(rt().threads()));
  rt().run([&](compas::ThreadCtx& t) {
    got[static_cast<std::size_t>(t.thread())] =
        rt().allreduce(t, dvalue(t.process(), t.thread()), add);
  });
  const double want = dreference(rt().processes(), rt().threads());
  for (int i = 0; i < rt().threads(); ++i)
    EXPECT_EQ(bits(got[static_cast<std::size_t>(i)]), bits(want)) << "thread " << i;
  const std::uint64_t mine = bits(got[0]);
  EXPECT_EQ(rt().allreduce(mine, compas::op::max{}), rt().allreduce(mine, compas::op::min{}))
      << "processes differ";
}

TEST(Runtime, ConcatenationInProcessThenThreadOrder) {
  const int g = global_threads();
  std::vector<Word> all(static_cast<std::size_t>(rt().threads()));
  std::vector<Word> before(static_cast<std::size_t>(rt().threads()));
  rt().run([&](compas::ThreadCtx& t) {
    const auto i = static_cast<std::size_t>(t.thread());
    all[i] = rt().allreduce(t, letter(t.global_id()), concat{});
    before[i] = rt().exclusive_scan(t, letter(t.global_id()), Word{}, concat{});
  });
  for (int i = 0; i < rt().threads(); ++i) {
    const int gid = rt().process() * rt().threads() + i;
    EXPECT_EQ(all[static_cast<std::size_t>(i)].str(), letters(0, g)) << "thread " << i;
    EXPECT_EQ(before[static_cast<std::size_t>(i)].str(), letters(0, gid)) << "thread " << i;
  }
}

// The forms without a ThreadCtx, from the main thread of every process.
TEST(Runtime, FunneledFormsCombineInRankOrder) {
  const int p = rt().processes(), me = rt().process();
  EXPECT_EQ(rt().allreduce(letter(me), concat{}).str(), letters(0, p));
  EXPECT_EQ(compas::exclusive_scan(rt(), letter(me), word("#"), concat{}).str(),
            me == 0 ? "#" : letters(0, me));  // "#" is no identity: it must not be combined
  EXPECT_EQ(compas::exclusive_scan(rt(), static_cast<long>(me + 1), 0L, compas::op::sum{}),
            static_cast<long>(me) * (me + 1) / 2);
  Mat want;
  for (int r = 0; r < p; ++r) want = matmul{}(want, operand(r));
  EXPECT_TRUE(rt().allreduce(operand(me), matmul{}) == want);
  EXPECT_EQ(bits(rt().allreduce(dvalue(me, 0), add)), bits(dreference(p, 1)));
  // Element by element over arrays, in place and not.
  std::vector<Mat> in(5), out(5);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = operand(me * 10 + static_cast<int>(i));
  compas::allreduce(rt(), std::span<Mat>(in), std::span<Mat>(out), matmul{});
  compas::allreduce(rt(), std::span<Mat>(in), std::span<Mat>(in), matmul{});
  for (std::size_t i = 0; i < in.size(); ++i) {
    Mat w;
    for (int r = 0; r < p; ++r) w = matmul{}(w, operand(r * 10 + static_cast<int>(i)));
    EXPECT_TRUE(out[i] == w) << "element " << i;
    EXPECT_TRUE(in[i] == w) << "element " << i << " in place";
  }
}

// An op that throws on one process's value: the call fails on every process (none is left
// waiting), and the next call works.
TEST(Runtime, AnOperatorThatThrowsFailsTheCallOnEveryProcess) {
  if (rt().processes() == 1) GTEST_SKIP() << "one process never combines its value with another's";
  auto picky = [](const Word& a, const Word& b) {
    if (a.str() == "!" || b.str() == "!") throw std::domain_error("picky: will not combine '!'");
    return concat{}(a, b);
  };
  const Word mine = rt().process() == 0 ? word("!") : letter(rt().process());
  EXPECT_ANY_THROW(rt().allreduce(mine, picky));
  EXPECT_ANY_THROW(compas::exclusive_scan(rt(), mine, Word{}, picky));
  EXPECT_EQ(rt().allreduce(letter(rt().process()), concat{}).str(), letters(0, rt().processes()));
}

TEST(Runtime, BroadcastFromEveryRoot) {
  for (int root_node = 0; root_node < rt().processes(); ++root_node)
    for (int root_thread = 0; root_thread < rt().threads(); ++root_thread) {
      std::vector<std::array<int, 3>> got(static_cast<std::size_t>(rt().threads()));
      rt().run([&](compas::ThreadCtx& t) {
        const std::array<int, 3> mine{t.process(), t.thread(), 77};
        got[static_cast<std::size_t>(t.thread())] = rt().broadcast(t, mine, root_node, root_thread);
      });
      for (const auto& v : got)
        EXPECT_EQ(v, (std::array<int, 3>{root_node, root_thread, 77}))
            << "root " << root_node << "." << root_thread;
    }
}

TEST(Runtime, BroadcastRootOutsideTheJobIsAnError) {
  std::atomic<int> errors{0};
  rt().run([&](compas::ThreadCtx& t) {
    try {
      rt().broadcast(t, 1, rt().processes(), 0);
    } catch (const std::out_of_range&) {
      ++errors;
    }
  });
  EXPECT_EQ(errors.load(), rt().threads());
}

TEST(Runtime, ExclusiveScanInProcessThenThreadOrder) {
  std::vector<long> sums(static_cast<std::size_t>(rt().threads()));
  std::vector<Mat> prods(static_cast<std::size_t>(rt().threads()));
  rt().run([&](compas::ThreadCtx& t) {
    const auto i = static_cast<std::size_t>(t.thread());
    sums[i] = rt().exclusive_scan(t, static_cast<long>(t.global_id() + 1), 0L, compas::op::sum{});
    prods[i] = rt().exclusive_scan(t, operand(t.global_id()), Mat{}, matmul{});
  });
  for (int i = 0; i < rt().threads(); ++i) {
    const int g = rt().process() * rt().threads() + i;
    EXPECT_EQ(sums[static_cast<std::size_t>(i)], static_cast<long>(g) * (g + 1) / 2);
    Mat want;
    for (int k = 0; k < g; ++k) want = matmul{}(want, operand(k));
    EXPECT_TRUE(prods[static_cast<std::size_t>(i)] == want) << "global thread " << g;
  }
}

TEST(Runtime, BarrierSeparatesPhasesAcrossProcesses) {
  // Every thread adds 1 to a counter on process 0 by fetch_add, meets the others at the hybrid
  // barrier, and must then read the full count.
  auto w = rt().window<std::uint64_t>(1);
  constexpr int kRounds = 5;
  std::atomic<int> wrong{0};
  rt().run([&](compas::ThreadCtx& t) {
    for (int round = 1; round <= kRounds; ++round) {
      w.fetch_add(0, 0, std::uint64_t{1});
      rt().barrier(t);
      std::uint64_t v = 0;
      w.get(0, 0, std::span<std::uint64_t>(&v, 1));
      if (v != static_cast<std::uint64_t>(round) * static_cast<std::uint64_t>(global_threads()))
        ++wrong;
      rt().barrier(t);
    }
  });
  EXPECT_EQ(wrong.load(), 0);
  rt().comm().barrier();
}

TEST(Runtime, FunneledBarrierSeparatesPhasesAcrossProcesses) {
  // The same from the thread that made the Runtime, one add per process, rt().barrier().
  auto w = rt().window<std::uint64_t>(1);
  int wrong = 0;
  for (int round = 1; round <= 5; ++round) {
    w.fetch_add(0, 0, std::uint64_t{1});
    compas::barrier(rt());
    std::uint64_t v = 0;
    w.get(0, 0, std::span<std::uint64_t>(&v, 1));
    if (v != static_cast<std::uint64_t>(round) * static_cast<std::uint64_t>(rt().processes()))
      ++wrong;
    compas::barrier(rt());
  }
  EXPECT_EQ(wrong, 0);
}

TEST(Runtime, BlocksCoverTheRangeInOrder) {
  for (compas::index n : {0, 1, 7, 1000}) {
    std::atomic<int> wrong{0};
    long total = 0;
    rt().run([&](compas::ThreadCtx& t) {
      const auto [lo, hi] = rt().block(t, n);
      if (hi < lo || hi > n) ++wrong;
      // Blocks follow each other in (process, thread) order: each starts where those before end.
      const long before = rt().exclusive_scan(t, static_cast<long>(hi - lo), 0L, compas::op::sum{});
      if (before != static_cast<long>(lo)) ++wrong;
      const auto [nlo, nhi] = rt().process_block(n);
      if (lo < nlo || hi > nhi) ++wrong;
      const long all = rt().allreduce(t, static_cast<long>(hi - lo), compas::op::sum{});
      if (t.is_leader()) total = all;
    });
    EXPECT_EQ(wrong.load(), 0) << "n " << n;
    EXPECT_EQ(total, static_cast<long>(n));
  }
  EXPECT_THROW((void)rt().process_block(-1), std::invalid_argument);
}

TEST(Runtime, ProcessGridIsNearSquare) {
  const auto g = rt().process_grid();
  EXPECT_EQ(g.rows * g.cols, rt().processes());
  EXPECT_LE(g.rows, g.cols);
  EXPECT_EQ(g.row * g.cols + g.col, rt().process());
  if (rt().processes() == 4) {
    EXPECT_EQ(g.rows, 2);
  }
  if (rt().processes() == 3) {
    EXPECT_EQ(g.rows, 1);
  }
}

TEST(RuntimeOptions, FlagsAreTakenOutOfArgv) {
  std::vector<std::string> args = {"prog",   "--threads",      "3",      "--n",
                                   "64",     "--bind=scatter", "--wait", "spin",
                                   "--keep", "--oversubscribe"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int argc = static_cast<int>(args.size());
  const auto o = compas::RuntimeOptions::from_args(argc, argv.data());
  EXPECT_EQ(o.threads, 3);
  EXPECT_EQ(o.bind, "scatter");
  EXPECT_EQ(o.wait, compas::WaitPolicy::spin);
  EXPECT_TRUE(o.oversubscribe);
  ASSERT_EQ(argc, 4);
  EXPECT_STREQ(argv[0], "prog");
  EXPECT_STREQ(argv[1], "--n");
  EXPECT_STREQ(argv[2], "64");
  EXPECT_STREQ(argv[3], "--keep");
  EXPECT_EQ(argv[4], nullptr);
}

TEST(RuntimeOptions, BadValuesNameTheFlag) {
  auto parse = [](std::vector<std::string> args) {
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    int argc = static_cast<int>(args.size());
    return compas::RuntimeOptions::from_args(argc, argv.data());
  };
  for (const auto& [flag, value] :
       std::vector<std::pair<std::string, std::string>>{{"--threads", "0"},
                                                        {"--threads", "-2"},
                                                        {"--threads", "two"},
                                                        {"--wait", "sometimes"},
                                                        {"--bind", "0,,2"},
                                                        {"--barrier", "magic"}}) {
    try {
      parse({"prog", flag, value});
      ADD_FAILURE() << flag << " " << value << " was accepted";
    } catch (const std::invalid_argument& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find(value), std::string::npos) << msg;
    }
  }
  EXPECT_THROW(parse({"prog", "--threads"}), std::invalid_argument);
}

TEST(RuntimeOptions, ReportBindingsIsABareFlagOrZeroOrOne) {
  auto parse = [](std::vector<std::string> args) {
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    int argc = static_cast<int>(args.size());
    auto o = compas::RuntimeOptions::from_args(argc, argv.data());
    EXPECT_EQ(argc, 2);  // the flag is taken out, "--keep" stays
    return o.report_binding;
  };
  EXPECT_TRUE(parse({"prog", "--report-bindings", "--keep"}));
  EXPECT_TRUE(parse({"prog", "--keep", "--report-bindings=1"}));
  EXPECT_FALSE(parse({"prog", "--report-bindings=0", "--keep"}));
  for (const char* bad : {"--report-bindings=", "--report-bindings=yes"}) {
    try {
      parse({"prog", bad});
      ADD_FAILURE() << bad << " was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("expected 0 or 1"), std::string::npos) << e.what();
    }
  }
}

TEST(BindingReport, OneLineWithEveryThreadsCpu) {
  compas::detail::Binding b;
  b.rank = 1;
  b.host = "h1";
  b.affinity = {0, 1, 2, 3};
  b.cpus = {2, 3};
  b.threads = {{2}, {3}, {2, 3}};
  b.openmp = {{2}, {3}};
  EXPECT_EQ(compas::detail::format_binding(b),
            "compas: binding rank 1 on host h1: cpus 2,3 (affinity 0-3); threads 0->cpu 2, "
            "1->cpu 3, 2->cpus 2,3; openmp 0->cpu 2, 1->cpu 3\n");
  b.openmp.clear();
  b.openmp_note = "OMP_PROC_BIND=true: OpenMP binds them";
  b.threads = {{2}};
  EXPECT_EQ(compas::detail::format_binding(b),
            "compas: binding rank 1 on host h1: cpus 2,3 (affinity 0-3); threads 0->cpu 2; openmp "
            "not pinned (OMP_PROC_BIND=true: OpenMP binds them)\n");
}

// An exit status that would not end the job (0) or that a process cannot have is refused before
// anything is said or ended; the job goes on.
TEST(RuntimeAbort, AStatusOutside1To255IsRefused) {
  for (int code : {0, -1, 256}) {
    try {
      rt().abort(code, "not ended");
      ADD_FAILURE() << "abort(" << code << ") returned";
    } catch (const std::invalid_argument& e) {
      EXPECT_EQ(std::string(e.what()), "Runtime::abort: exit code " + std::to_string(code) +
                                           " is not allowed: 1..255 (0 would not end the job)");
    }
  }
}

}  // namespace

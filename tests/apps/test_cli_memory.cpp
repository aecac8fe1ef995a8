// Sizes beyond what the host can give, at the command line: every kernel's size parameter and the
// probes' buffer sizes are checked against base::memory_limit before anything is allocated, and
// refused with exit 2 naming the size and the limit. Every run here is in a memory cgroup of
// 256 MiB the test makes (a check that fails to refuse ends in the cgroup's OOM killer, not the
// machine's), so the bound named is the cgroup's: its limit less what is in use there.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "../common/cgroup.hpp"
#include "cli.hpp"
#include "compas/base/memory.hpp"

namespace {

using compas::testing::MemoryCgroup;
using compas::testing::Proc;

constexpr std::uint64_t kLimit = 256ull << 20;

struct Ran {
  int exit_code = -1;
  std::string out, err, text;  // text: all of it, for failure messages
  std::string describe() const { return text; }
};

// `args` (a compas-run job when nprocs > 1) inside `cg`; fails the test if it is still running
// after 60 s (a refusal takes well under a second).
Ran run_in(const MemoryCgroup& cg, const std::vector<std::string>& args, int nprocs = 1) {
  std::vector<std::string> all = {COMPAS_EXE};
  if (nprocs > 1) all = {COMPAS_RUN_EXE, "-n", std::to_string(nprocs), "-t", "1", COMPAS_EXE};
  all.insert(all.end(), args.begin(), args.end());
  Proc p(cg.wrap(all), {{"COMPAS_TIMEOUT", "20"}});
  EXPECT_TRUE(p.wait(60)) << "still running after 60 s\n" << p.describe();
  return {p.exit_code, p.out, p.err, p.describe()};
}

#define NEED_CGROUP(cg) \
  if (!(cg).ok()) GTEST_SKIP() << "no memory cgroup to run in: " << (cg).why()

// The cgroup's bound as the refusals name it: its limit less what the run itself uses there.
std::string cgroup_bound(const MemoryCgroup& cg) {
  return "the memory cgroup's limit less what is in use (" + cg.limit_file() + ": 256 MiB, ";
}

void expect_refused(const Ran& p, const std::string& value, const MemoryCgroup& cg) {
  EXPECT_EQ(p.exit_code, 2) << p.describe();
  EXPECT_TRUE(compas::testing::contains(p.err, value)) << p.describe();
  EXPECT_TRUE(compas::testing::contains(p.err, " bytes), more than this host can give: at most "))
      << p.describe();
  EXPECT_TRUE(compas::testing::contains(p.err, cgroup_bound(cg))) << p.describe();
}

TEST(CliMemory, LaplaceBeyondMemoryExits2NamingSizeAndLimit) {
  MemoryCgroup cg(kLimit);
  NEED_CGROUP(cg);
  expect_refused(run_in(cg, {"run", "laplace", "--n", "1000000", "--iters", "1"}),
                 "laplace: --n 1000000 needs about 14.55 TiB (", cg);
}

TEST(CliMemory, LaplaceBeyondMemoryExits2OnEveryProcess) {
  MemoryCgroup cg(kLimit);
  NEED_CGROUP(cg);
  const Ran p = run_in(cg, {"run", "laplace", "--n", "1000000", "--iters", "1"}, 2);
  expect_refused(p, "in each of this host's 2 processes, together", cg);
}

TEST(CliMemory, EveryKernelsSizeIsChecked) {
  MemoryCgroup cg(kLimit);
  NEED_CGROUP(cg);
  expect_refused(run_in(cg, {"run", "gemm", "--n", "1048576"}), "gemm: --n 1048576 needs", cg);
  expect_refused(run_in(cg, {"run", "sort", "--keys", "1024G"}), "--keys 1099511627776 needs", cg);
  // NPB's class C is about a gigabyte: more than the cgroup, far less than the machine.
  expect_refused(run_in(cg, {"run", "cg", "--class", "C", "--threads", "1"}), "cg: class C needs",
                 cg);
}

TEST(CliMemory, ProbeBuffersAreChecked) {
  MemoryCgroup cg(kLimit);
  NEED_CGROUP(cg);
  const Ran p = run_in(cg, {"membw", "--size", "200MiB", "--threads", "1"});
  EXPECT_EQ(p.exit_code, 2) << p.describe();
  EXPECT_TRUE(compas::testing::contains(p.err, "is more than half of what this host can give ("))
      << p.describe();
  EXPECT_TRUE(compas::testing::contains(p.err, cgroup_bound(cg))) << p.describe();
}

// About 1 GiB: fine against this machine's physical memory, refused by the cgroup's limit.
TEST(CliMemory, TheCgroupLimitIsHonoured) {
  if (compas::base::physical_memory_bytes() < (4ull << 30))
    GTEST_SKIP() << "needs a machine whose physical memory exceeds 1 GiB by far";
  MemoryCgroup cg(kLimit);
  NEED_CGROUP(cg);
  expect_refused(run_in(cg, {"run", "laplace", "--n", "8192", "--iters", "1"}),
                 "laplace: --n 8192 needs about 1", cg);
}

TEST(CliMemory, SizesWithinTheLimitRun) {
  MemoryCgroup cg(kLimit);
  NEED_CGROUP(cg);
  for (int nprocs : {1, 2}) {
    const Ran p = run_in(cg, {"run", "laplace", "--n", "1024", "--iters", "4"}, nprocs);
    EXPECT_EQ(p.exit_code, 0) << p.describe();
    EXPECT_TRUE(compas::testing::contains(p.out, "verified")) << p.describe();
  }
}

}  // namespace

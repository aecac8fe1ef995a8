// Allocations beyond what the host can give (memory_probe is every rank's program): a window or a
// DistArray far beyond memory, or windows that fit one by one but not together on one host, are
// refused with a CommError on every rank of a 2-process compas-run job, naming the size and the
// limit; the ranks then meet at a barrier (no hang), and the job leaves nothing in /dev/shm. A
// size within the limit is allocated. Every job runs in a memory cgroup of 256 MiB made here, so
// a refusal that fails to happen ends in the cgroup's OOM killer, not the machine's.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "../common/cgroup.hpp"
#include "../common/proc.hpp"
#include "../common/sanitized.hpp"
#include "compas/base/memory.hpp"

#ifndef MEMORY_PROBE_EXE
#error "MEMORY_PROBE_EXE must name the memory_probe executable"
#endif
#ifndef COMPAS_RUN_EXE
#error "COMPAS_RUN_EXE must name the compas-run executable"
#endif

namespace {

using namespace compas::testing;

constexpr std::uint64_t kMiB = 1ull << 20;
constexpr std::uint64_t kLimit = 256 * kMiB;

struct Job {
  int exit_code = -1;
  std::string out, err, shm_left;
  std::string describe() const {
    return "exit " + std::to_string(exit_code) + "\n--- stdout:\n" + out + "--- stderr:\n" + err +
           "--- left in shared memory:\n" + shm_left;
  }
};

// memory_probe CASE SIZE HOLD on 2 processes inside `cg`.
Job run_job(const MemoryCgroup& cg, const std::string& which, std::uint64_t size,
            std::uint64_t hold = 0) {
  const ShmSnapshot shm;
  Proc run(cg.wrap({COMPAS_RUN_EXE, "-n", "2", "-t", "1", MEMORY_PROBE_EXE, which,
                    std::to_string(size), std::to_string(hold)}),
           {{"COMPAS_TIMEOUT", "20"}});
  JobPids pids(run.pid());
  const bool ended = run.wait(60);
  EXPECT_TRUE(ended) << "the job still runs after 60 s\n" << run.describe();
  Job j;
  j.exit_code = run.exit_code;
  j.out = run.out;
  j.err = run.err;
  j.shm_left = shm.leftovers(pids.pids());
  return j;
}

#define NEED_CGROUP(cg) \
  if (!(cg).ok()) GTEST_SKIP() << "no memory cgroup for the job: " << (cg).why()

// Every rank refused, naming `size_text`, the cgroup's limit file with its limit and what is in
// use there, then met the others.
void expect_refused_everywhere(const Job& j, const MemoryCgroup& cg, const std::string& size_text) {
  EXPECT_EQ(j.exit_code, 0) << j.describe();
  for (int r = 0; r < 2; ++r) {
    const std::string me = "memory_probe: rank " + std::to_string(r) + ": ";
    const auto at = j.out.find(me + "refused: ");
    ASSERT_NE(at, std::string::npos) << j.describe();
    const std::string line = j.out.substr(at, j.out.find('\n', at) - at);
    EXPECT_TRUE(contains(line, size_text)) << line;
    EXPECT_TRUE(contains(
        line, "the memory cgroup's limit less what is in use (" + cg.limit_file() + ": 256 MiB, "))
        << line;
    EXPECT_TRUE(contains(line, " in use)")) << line;
    EXPECT_TRUE(contains(j.out, me + "after: ok")) << j.describe();
  }
  EXPECT_EQ(j.shm_left, "") << j.describe();
}

TEST(MemoryLimits, WindowFarBeyondMemoryIsRefusedOnEveryRank) {
  MemoryCgroup cg(kLimit);
  NEED_CGROUP(cg);
  const Job j = run_job(cg, "window", 1ull << 46);
  expect_refused_everywhere(j, cg, "64 TiB");
}

TEST(MemoryLimits, DistArrayFarBeyondMemoryIsRefusedOnEveryRank) {
  MemoryCgroup cg(kLimit);
  NEED_CGROUP(cg);
  const Job j = run_job(cg, "distarray", 1ull << 40);  // 8 TiB of doubles, 4 TiB a process
  expect_refused_everywhere(j, cg, "4 TiB");
}

// 1 GiB is far below this machine's physical memory: only the cgroup refuses it.
TEST(MemoryLimits, TheCgroupLimitIsHonoured) {
  if (compas::base::physical_memory_bytes() < 4 * (1ull << 30))
    GTEST_SKIP() << "needs a machine whose physical memory exceeds 1 GiB by far";
  MemoryCgroup cg(kLimit);
  NEED_CGROUP(cg);
  const Job j = run_job(cg, "window-rank0", 1ull << 30);
  expect_refused_everywhere(j, cg, "1 GiB");
}

// 160 MiB fits the 256 MiB cgroup alone, not twice: the two ranks on this host ask 320 MiB.
TEST(MemoryLimits, WindowsOfOneHostCountTogether) {
  MemoryCgroup cg(kLimit);
  NEED_CGROUP(cg);
  const Job j = run_job(cg, "window", 160 * kMiB);
  expect_refused_everywhere(j, cg, "ranks 0 and 1");
}

// Rank 0 holds 128 MiB of the 256 MiB cgroup, then asks a 128 MiB window: it fits the limit, not
// what is left of it (it used to be accepted, and the cgroup's OOM killer ended rank 0).
TEST(MemoryLimits, MemoryInUseCountsAgainstTheLimit) {
  // Under a sanitizer the 128 MiB rank 0 holds cost more (shadow memory, quarantine): it is
  // refused as it should be, then the cgroup's OOM killer ends it all the same.
  if (compas::test::kSanitized)
    GTEST_SKIP() << "a sanitized rank holding 128 MiB does not fit the 256 MiB cgroup";
  MemoryCgroup cg(kLimit);
  NEED_CGROUP(cg);
  const Job j = run_job(cg, "window-rank0", 128 * kMiB, 128 * kMiB);
  expect_refused_everywhere(j, cg, "(128 MiB, 4.125 KiB) need together 128 MiB");
}

TEST(MemoryLimits, SizesWithinTheLimitAreAllocated) {
  MemoryCgroup cg(kLimit);
  NEED_CGROUP(cg);
  for (const auto& [which, size] : std::vector<std::pair<std::string, std::uint64_t>>{
           {"window", 32 * kMiB}, {"distarray", 4 * kMiB}}) {
    const Job j = run_job(cg, which, size);
    EXPECT_EQ(j.exit_code, 0) << j.describe();
    for (int r = 0; r < 2; ++r)
      EXPECT_TRUE(contains(j.out, "memory_probe: rank " + std::to_string(r) + ": allocated"))
          << which << "\n"
          << j.describe();
    EXPECT_EQ(j.shm_left, "") << j.describe();
  }
}

}  // namespace

// What this host can give an allocation (base::memory_limit): physical memory, the memory
// cgroup's limit, /dev/shm's free space for shared mappings, and the refusal's message. The cgroup
// case runs in a child moved into a memory cgroup the test makes (skipped where it cannot).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <stdexcept>
#include <string>

#include "../common/cgroup.hpp"
#include "compas/base/memory.hpp"

namespace {

using compas::base::Mapping;
using compas::base::memory_limit;

TEST(Memory, TheLimitIsAtMostPhysicalMemory) {
  const std::uint64_t phys = compas::base::physical_memory_bytes();
  ASSERT_GT(phys, 0u);
  const auto priv = memory_limit(Mapping::private_memory);
  EXPECT_LE(priv.bytes, phys);
  EXPECT_FALSE(priv.what.empty());
  // A shared mapping has one more bound (/dev/shm), never fewer.
  EXPECT_LE(memory_limit(Mapping::shared).bytes, priv.bytes);
}

TEST(Memory, CheckRefusesBeyondTheLimitNamingSizeAndLimit) {
  const auto limit = memory_limit(Mapping::private_memory);
  try {
    compas::base::check_memory("--n 1000000 needs", 1ull << 50);
    FAIL() << "1 PiB was not refused";
  } catch (const std::invalid_argument& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("--n 1000000 needs 1024 TiB (1125899906842624 bytes), more than"),
              std::string::npos)
        << m;
    EXPECT_NE(m.find(std::to_string(limit.bytes) + " bytes), " + limit.what), std::string::npos)
        << m;
  }
  EXPECT_NO_THROW(compas::base::check_memory("a buffer needs", 1 << 20));
  EXPECT_NO_THROW(compas::base::check_memory("a buffer needs", limit.bytes));
}

// A child in a 256 MiB cgroup reports what it sees through a pipe.
TEST(Memory, TheCgroupLimitIsTheSmallest) {
  compas::testing::MemoryCgroup cg(256ull << 20);
  if (!cg.ok()) GTEST_SKIP() << "no memory cgroup: " << cg.why();
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::close(fds[0]);
    std::ofstream(cg.path() + "/cgroup.procs") << ::getpid() << std::flush;
    const auto b = memory_limit(Mapping::private_memory);
    const std::string text = std::to_string(b.bytes) + " " + b.what;
    if (::write(fds[1], text.data(), text.size()) < 0) ::_exit(1);
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string seen;
  char buf[512];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;)
    seen.append(buf, static_cast<std::size_t>(n));
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_EQ(seen, "268435456 the memory cgroup's limit (" + cg.limit_file() + ")");
}

}  // namespace

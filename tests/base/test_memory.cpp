// What this host can give an allocation (base::memory_limit): the memory available, the memory
// cgroup's limit less what is in use there, /dev/shm's free space for shared mappings, and the
// refusal's message. The cgroup cases run in a child moved into a memory cgroup the test makes
// (skipped where it cannot).
#include <gtest/gtest.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

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
}

// A shared mapping has one more bound (/dev/shm), never fewer. The memory available moves while
// other processes run (tens of MB between two reads on a busy host), so the shared limit is held
// against the private one read just before and just after it, with 1% of physical memory to
// spare: a shared limit that ignored a bound would still exceed it by far more.
TEST(Memory, ASharedMappingIsBoundByTheFreeSpaceOfDevShmToo) {
  const std::uint64_t slack = compas::base::physical_memory_bytes() / 100;
  const auto before = memory_limit(Mapping::private_memory);
  const auto shared = memory_limit(Mapping::shared);
  const auto after = memory_limit(Mapping::private_memory);
  EXPECT_LE(shared.bytes, std::max(before.bytes, after.bytes) + slack);
  struct statvfs s {};
  ASSERT_EQ(::statvfs("/dev/shm", &s), 0);
  EXPECT_LE(shared.bytes, static_cast<std::uint64_t>(s.f_bavail) * s.f_frsize + slack);
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
    // The available memory moves while other processes run: the bound is named, its bytes are
    // whatever it was at the check.
    EXPECT_NE(m.find(" bytes), " + limit.what), std::string::npos) << m;
  }
  EXPECT_NO_THROW(compas::base::check_memory("a buffer needs", 1 << 20));
  EXPECT_NO_THROW(compas::base::check_memory("a buffer needs", limit.bytes / 2));
}

// What `look` returns in a child moved into `cg` (after it allocated and touched `hold` bytes).
template <class Look>
std::string seen_in(const compas::testing::MemoryCgroup& cg, std::size_t hold, const Look& look) {
  int fds[2];
  if (::pipe(fds) != 0) return "pipe failed";
  const pid_t pid = ::fork();
  if (pid < 0) return "fork failed";
  if (pid == 0) {
    ::close(fds[0]);
    std::ofstream(cg.path() + "/cgroup.procs") << ::getpid() << std::flush;
    std::vector<char> held(hold);
    if (hold > 0) std::memset(held.data(), 1, held.size());  // charged to the cgroup as touched
    const std::string text = look();
    if (::write(fds[1], text.data(), text.size()) < 0 || (hold > 0 && held[hold / 2] != 1))
      ::_exit(1);
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
  return seen;
}

// A child in a 256 MiB cgroup reports what it sees: the cgroup's limit less the little it uses.
TEST(Memory, TheCgroupLimitIsTheSmallest) {
  compas::testing::MemoryCgroup cg(256ull << 20);
  if (!cg.ok()) GTEST_SKIP() << "no memory cgroup: " << cg.why();
  const std::string seen = seen_in(cg, 0, [] {
    const auto b = memory_limit(Mapping::private_memory);
    return std::to_string(b.bytes) + " " + b.what;
  });
  const std::uint64_t bytes = std::stoull(seen);
  EXPECT_LE(bytes, 256ull << 20) << seen;
  EXPECT_GT(bytes, 192ull << 20) << seen;
  EXPECT_NE(seen.find(" the memory cgroup's limit less what is in use (" + cg.limit_file() +
                      ": 256 MiB, "),
            std::string::npos)
      << seen;
}

// 160 MiB held in a 256 MiB cgroup: a 128 MiB window, which fits the limit alone, does not fit
// what is left, and the refusal names the limit and what is in use.
TEST(Memory, MemoryInUseInTheCgroupCounts) {
  compas::testing::MemoryCgroup cg(256ull << 20);
  if (!cg.ok()) GTEST_SKIP() << "no memory cgroup: " << cg.why();
  const std::string seen = seen_in(cg, 160u << 20, [] {
    try {
      compas::base::check_memory("a window of 128 MiB needs", 128u << 20, Mapping::shared);
      return std::string("accepted");
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
  });
  EXPECT_NE(seen.find("a window of 128 MiB needs 128 MiB (134217728 bytes), more than this host "
                      "can give: at most "),
            std::string::npos)
      << seen;
  const std::string named =
      "the memory cgroup's limit less what is in use (" + cg.limit_file() + ": 256 MiB, ";
  const auto at = seen.find(named);
  ASSERT_NE(at, std::string::npos) << seen;
  const auto in_use = seen.substr(at + named.size());
  EXPECT_NE(in_use.find(" MiB in use)"), std::string::npos) << seen;
  EXPECT_GE(std::stod(in_use), 160.0) << seen;  // the 160 MiB held, and a little more
  EXPECT_LT(std::stod(in_use), 256.0) << seen;
}

// 96 MiB written to a file are charged to the cgroup as page cache, which the kernel reclaims
// before it refuses memory: the usage file counts them, what is in use does not.
TEST(Memory, TheCgroupsFileCacheIsNotInUse) {
  compas::testing::MemoryCgroup cg(256ull << 20);
  if (!cg.ok()) GTEST_SKIP() << "no memory cgroup: " << cg.why();
  const std::string file = "/var/tmp/compas-test-cache-" + std::to_string(::getpid());
  const std::string seen = seen_in(cg, 0, [&] {
    {
      std::ofstream out(file, std::ios::binary);
      const std::vector<char> mib(1u << 20, 'x');
      for (int i = 0; i < 96; ++i) out.write(mib.data(), static_cast<std::streamsize>(mib.size()));
    }
    std::ifstream usage(cg.path() + "/memory.usage_in_bytes");
    std::uint64_t charged = 0;
    usage >> charged;
    const auto b = memory_limit(Mapping::private_memory);
    return std::to_string(charged) + " " + std::to_string(b.bytes) + " " + b.what;
  });
  std::remove(file.c_str());
  std::istringstream in(seen);
  std::uint64_t charged = 0, room = 0;
  ASSERT_TRUE(in >> charged >> room) << seen;
  EXPECT_GE(charged, 96ull << 20) << "the file's pages were not charged to the cgroup: " << seen;
  EXPECT_GT(room, 192ull << 20) << seen;
  EXPECT_NE(seen.find("the memory cgroup's limit less what is in use"), std::string::npos) << seen;
}

}  // namespace

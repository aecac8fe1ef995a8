// Tests of a Comm whose construction fails part way: what it made of UCX is released.

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "compas/comm/bootstrap.hpp"
#include "compas/comm/ucx.hpp"

namespace {

namespace comm = compas::comm;

// Rank 0 of a job of two whose other rank is gone: every collective fails.
class GoneBootstrap final : public comm::Bootstrap {
 public:
  int rank() const override { return 0; }
  int size() const override { return 2; }
  std::string kind() const override { return "test"; }
  std::vector<std::string> allgather(const std::string&) override {
    throw comm::BootstrapError("rank 1 is gone", 1);
  }
  void barrier() override { throw comm::BootstrapError("rank 1 is gone", 1); }
};

int open_descriptors() {
  int n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) ++n;
  return n;
}

// The constructor makes the UCX context and worker (which hold file descriptors: an epoll and
// an event descriptor at least), then exchanges addresses through the bootstrap. When that
// exchange fails, the error reaches the caller and the worker and context are gone with it: a
// program that retries, or a test harness that makes many, does not run out of descriptors.
TEST(CommSetup, AFailedAddressExchangeReleasesTheWorkerAndContext) {
  GoneBootstrap boot;
  comm::CommOptions options;
  // Once first: UCX makes its one-time process-wide state with the first context.
  EXPECT_THROW(comm::Comm c(boot, options), comm::BootstrapError);
  const int before = open_descriptors();
  for (int k = 0; k < 8; ++k) EXPECT_THROW(comm::Comm c(boot, options), comm::BootstrapError);
  EXPECT_EQ(open_descriptors(), before) << "descriptors left open by 8 failed constructions";
}

}  // namespace

// An operation that times out must leave nothing UCX can still write into or read from: its
// buffers are kept until UCX releases the request, and a get's destination is not written after
// the error reached the caller. Rank 1 is stopped while rank 0's operation waits for its answer
// (UCX over tcp needs the target to answer), then resumed, and its late answer must land nowhere.
// Under AddressSanitizer a late write into a freed reply buffer or a late read of a freed
// put_signal header also fails the test.
#include <gtest/gtest.h>

#include "../common/proc.hpp"

namespace {

using namespace compas::testing;

void expect_no_late_delivery(const std::string& mode) {
  ManualJob job(LATE_REPLY_PROBE_EXE, 2,
                {{"COMPAS_TIMEOUT", "2"}, {"UCX_TLS", "tcp,self"}, {"COMPAS_PROGRESS", "thread"}});
  auto r0 = job.start(0, {mode});
  auto r1 = job.start(1, {mode});
  ASSERT_TRUE(r0->wait(30)) << r0->describe();
  r1->wait(10);
  EXPECT_EQ(r0->exit_code, 0) << r0->describe();
  EXPECT_TRUE(contains(r0->out, "timed out: ")) << r0->describe();
  EXPECT_TRUE(contains(r0->out, "no late delivery")) << r0->describe();
  EXPECT_FALSE(contains(r0->err, "AddressSanitizer")) << r0->describe();
}

TEST(LateReply, AGetThatTimedOutDoesNotWriteItsDestinationLater) {
  expect_no_late_delivery("get");
}

TEST(LateReply, AFetchThatTimedOutKeepsItsReplyBufferUntilUcxLetsGo) {
  expect_no_late_delivery("fetch_add");
}

TEST(LateReply, APutSignalThatTimedOutKeepsItsHeaderUntilUcxLetsGo) {
  expect_no_late_delivery("put_signal");
}

}  // namespace

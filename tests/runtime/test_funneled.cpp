// The Runtime's funneled calls beyond DistArray and Runtime::window (test_dist_array.cpp): the
// kernels' runs, which make windows on the Comm, the job-level samples and the funneled
// collectives without a ThreadCtx. From every thread inside run(), or from a thread other than
// the one that made the Runtime, each is refused with a logic_error before it does anything
// collective, instead of T collectives at once (or one of another thread) out of step with the
// other processes. Every rank of a compas-run job runs this with test_runtime.
#include <gtest/gtest.h>

#include <functional>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "../common/job_main.hpp"
#include "compas/comm/collectives.hpp"
#include "compas/comm/window.hpp"
#include "compas/compas.hpp"
#include "compas/kernels/cg_job.hpp"
#include "compas/kernels/gemm_job.hpp"
#include "compas/kernels/laplace.hpp"
#include "compas/kernels/sort_job.hpp"

namespace {

namespace kernels = compas::kernels;

using EntryPoints = std::vector<std::pair<std::string, std::function<void()>>>;

// Each entry point with the name its error must carry.
EntryPoints entry_points() {
  EntryPoints calls;
  calls.emplace_back("kernels::cg::run", [] { kernels::cg::run(rt(), {}); });
  calls.emplace_back("kernels::gemm::run", [] { kernels::gemm::run(rt(), {}); });
  calls.emplace_back("kernels::laplace::run", [] { kernels::laplace::run(rt(), {}); });
  calls.emplace_back("kernels::sort::run", [] { kernels::sort::run(rt(), {}); });
  calls.emplace_back("Runtime::job_samples", [] { rt().job_samples(); });
  calls.emplace_back("Runtime::allreduce(value, op)",
                     [] { rt().allreduce(1L, compas::op::sum{}); });
  calls.emplace_back("compas::exclusive_scan",
                     [] { compas::exclusive_scan(rt(), 1L, 0L, compas::op::sum{}); });
  calls.emplace_back("compas::barrier", [] { compas::barrier(rt()); });
  calls.emplace_back("compas::allreduce", [] {
    long v = 1;
    compas::allreduce(rt(), std::span<long>(&v, 1), std::span<long>(&v, 1), compas::op::sum{});
  });
  calls.emplace_back("compas::broadcast", [] { compas::broadcast(rt(), 1L, 0); });
  calls.emplace_back("compas::allgather", [] { compas::allgather(rt(), 1L); });
  calls.emplace_back("compas::allgatherv", [] {
    const long v = 1;
    compas::allgatherv(rt(), std::span<const long>(&v, 1));
  });
  calls.emplace_back("compas::alltoall", [] {
    std::vector<long> send(static_cast<std::size_t>(rt().processes())), recv(send.size());
    compas::alltoall(rt(), std::span<const long>(send), std::span<long>(recv));
  });
  calls.emplace_back("compas::alltoallv", [] {
    std::vector<long> send(static_cast<std::size_t>(rt().processes()));
    const std::vector<std::size_t> counts(send.size(), 1);
    compas::alltoallv(rt(), std::span<const long>(send), counts);
  });
  calls.emplace_back("compas::gather", [] { compas::gather(rt(), 1L, 0); });
  calls.emplace_back("compas::reduce", [] { compas::reduce(rt(), 1L, compas::op::sum{}, 0); });
  return calls;
}

// What each of `calls` threw (its message), or "returned".
std::vector<std::string> attempts(const EntryPoints& calls) {
  std::vector<std::string> out;
  for (const auto& [name, call] : calls) {
    try {
      call();
      out.push_back(name + ": returned");
    } catch (const std::logic_error& e) {
      out.emplace_back(e.what());
    }
  }
  return out;
}

void expect_refused(const std::vector<std::string>& errors, const std::string& why) {
  const auto calls = entry_points();
  ASSERT_EQ(errors.size(), calls.size());
  for (std::size_t i = 0; i < calls.size(); ++i) {
    EXPECT_EQ(errors[i].rfind(calls[i].first + ": ", 0), 0u) << errors[i];
    EXPECT_NE(errors[i].find(why), std::string::npos) << errors[i];
  }
}

TEST(FunneledErrors, KernelsSamplesAndFunneledCollectivesInsideRunOrFromAnotherThreadAreRefused) {
  std::vector<std::vector<std::string>> inside(static_cast<std::size_t>(rt().threads()));
  rt().run([&](compas::ThreadCtx& t) {
    inside[static_cast<std::size_t>(t.thread())] = attempts(entry_points());
  });
  for (const auto& errors : inside) expect_refused(errors, "inside Runtime::run");
  std::vector<std::string> other;
  std::thread([&] { other = attempts(entry_points()); }).join();
  expect_refused(other, "other than the one that made the Runtime");
  // The job is still in step: the funneled forms work from the Runtime's thread.
  EXPECT_EQ(rt().allreduce(1L, compas::op::sum{}), rt().processes());
}

// What the Runtime hands out raw (rt.comm(), rt.collectives()): their collective calls, each with
// the name its error must carry. A job of one process has no process collectives.
EntryPoints raw_entry_points() {
  EntryPoints calls;
  calls.emplace_back("comm::WindowBytes", [] { compas::comm::Window<long> w(rt().comm(), 4); });
  calls.emplace_back("Comm::barrier", [] { rt().comm().barrier(); });
  if (rt().processes() == 1) return calls;
  calls.emplace_back("comm::ProcessCollectives",
                     [] { rt().collectives().allreduce(1L, compas::comm::Op::sum); });
  calls.emplace_back("comm::ProcessCollectives", [] {
    const long mine = 1;
    std::vector<long> all(static_cast<std::size_t>(rt().processes()));
    rt().collectives().allgather(std::span<const long>(&mine, 1), std::span<long>(all));
  });
  calls.emplace_back("comm::ProcessCollectives", [] { rt().collectives().barrier(); });
  return calls;
}

std::vector<std::string> raw_attempts() {
  return attempts(raw_entry_points());
}

void expect_raw(const std::vector<std::string>& got, bool refused) {
  const auto calls = raw_entry_points();
  ASSERT_EQ(got.size(), calls.size());
  for (std::size_t i = 0; i < calls.size(); ++i) {
    EXPECT_EQ(got[i].rfind(calls[i].first + ": ", 0), 0u) << got[i];
    EXPECT_EQ(got[i].find("other than the one that made the Comm") != std::string::npos, refused)
        << got[i];
  }
}

// The Comm's collectives (windows, barriers, process collectives) are called by the thread that
// made it, thread 0 inside run(): from the others each is refused before it does anything
// collective. Before, every thread inside run() made a window or called an allreduce of its own, T
// collectives per process out of step with the other processes.
TEST(FunneledErrors, RawCommCollectivesFromAnotherThreadThanTheRuntimesAreRefused) {
  std::vector<std::vector<std::string>> inside(static_cast<std::size_t>(rt().threads()));
  rt().run([&](compas::ThreadCtx& t) {
    if (t.thread() != 0) inside[static_cast<std::size_t>(t.thread())] = raw_attempts();
    t.barrier();  // thread 0 goes on once the others were refused: nothing of theirs can mix in
    if (t.thread() == 0) inside[0] = raw_attempts();
  });
  expect_raw(inside[0], false);
  for (std::size_t i = 1; i < inside.size(); ++i) expect_raw(inside[i], true);
  std::vector<std::string> other;
  std::thread([&] { other = raw_attempts(); }).join();
  expect_raw(other, true);
  // The job is still in step.
  EXPECT_EQ(rt().allreduce(1L, compas::op::sum{}), rt().processes());
  expect_raw(raw_attempts(), false);
}

}  // namespace

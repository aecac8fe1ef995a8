// Internal state of Comm and WindowBytes, shared by their sources.
#pragma once

#include <ucp/api/ucp.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "compas/comm/ucx.hpp"
#include "compas/comm/window.hpp"

namespace compas::comm {

struct EpErrorArg {
  Comm::Impl* impl;
  int rank;
};

struct Comm::Impl {
  Comm* self = nullptr;
  Bootstrap* boot = nullptr;
  CommOptions opt;
  int rank = 0, size = 1;
  bool backoff = false;  // the wait policy resolved
  ucp_context_h ctx = nullptr;
  ucp_worker_h worker = nullptr;
  std::vector<std::string> addresses;  // worker address of every rank
  std::vector<std::vector<int>> hosts;
  std::vector<int> host_of;

  std::unique_ptr<std::atomic<ucp_ep_h>[]> eps;
  std::unique_ptr<std::atomic<bool>[]> dead;
  std::vector<std::string> dead_reason;  // guarded by mu
  std::vector<EpErrorArg> err_args;
  mutable std::mutex mu;  // endpoint creation, dead_reason
  std::atomic<int> connected{0};

  std::atomic<std::uint64_t> puts{0}, gets{0}, atomics{0}, signals{0}, bytes_put{0}, bytes_got{0};

  std::thread progress_thread;
  std::atomic<bool> stop_progress{false};
  int efd = -1;

  std::unique_ptr<WindowBytes> coll;  // the node collectives' signals
  std::uint64_t barrier_epoch = 0;
  std::mutex barrier_mu;

  bool same_host_as_me(int r) const;
  ucp_ep_h ep(int r);  // connects lazily; throws CommError for a dead peer
  void check_alive(int r) const;
  [[noreturn]] void fail(int r, const std::string& what, ucs_status_t status) const;

  // Waits until done() holds, progressing the worker and backing off as the policy says. Throws
  // CommError after the timeout naming `what` and `peer`, or early when `peer` is dead.
  // `block`, when given, replaces the short sleep of the back-off (a futex wait on a signal).
  void wait(const std::function<bool()>& done, const std::function<std::string()>& what, int peer,
            const std::function<void()>& block = {});
  // Waits for a UCX request (or status) to complete locally and frees it.
  void complete(ucs_status_ptr_t sp, int peer, const char* op);
  void run_progress_thread();
};

}  // namespace compas::comm

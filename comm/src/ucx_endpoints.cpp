// Comm's endpoints: lazy connection, peer error handling and liveness (dead peers, same-host
// processes gone), the transports an endpoint uses and, from them, each peer's signal path.
#include <signal.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <stdexcept>

#include "compas/comm/ucx.hpp"
#include "internals.hpp"
#include "ucx_impl.hpp"
#include "ucx_status.hpp"

namespace compas::comm {

namespace {

using Clock = std::chrono::steady_clock;

void on_ep_error(void* arg, ucp_ep_h /*ep*/, ucs_status_t status) {
  auto* a = static_cast<EpErrorArg*>(arg);
  {
    // Called inside UCX progress with the worker's lock held: take only reason_mu, which is never
    // held around a UCX call (mu is, around ucp_ep_create: taking it here could deadlock).
    std::lock_guard lock(a->impl->reason_mu);
    a->impl->dead_reason[a->rank] = ucs_status_string(status);
  }
  a->impl->dead[a->rank].store(true, std::memory_order_release);
}

// False once the process is gone or a zombie (killed, not yet reaped by its launcher).
bool process_alive(long pid) {
  if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) return false;
  std::FILE* f = std::fopen(("/proc/" + std::to_string(pid) + "/stat").c_str(), "r");
  if (!f) return errno != ENOENT;
  char line[512];
  const bool got = std::fgets(line, sizeof line, f) != nullptr;
  std::fclose(f);
  if (!got) return true;
  const char* close = std::strrchr(line, ')');  // the name may hold spaces and parentheses
  return !(close && close[1] == ' ' && (close[2] == 'Z' || close[2] == 'X'));
}

}  // namespace

void Comm::connect(int r) {
  if (r < 0 || r >= impl_->size)
    throw std::out_of_range("rank " + std::to_string(r) + " is outside the job: ranks are 0.." +
                            std::to_string(impl_->size - 1));
  if (r != impl_->rank) impl_->ep(r);
}

int Comm::connected_peers() const {
  return impl_->connected.load();
}

bool CommImpl::same_host_as_me(int r) const {
  return host_of[r] == host_of[rank];
}

ucp_ep_h CommImpl::ep(int r) {
  ucp_ep_h e = eps[r].load(std::memory_order_acquire);
  if (e) {
    if (dead[r].load(std::memory_order_relaxed)) check_alive(r);
    return e;
  }
  std::lock_guard lock(mu);
  e = eps[r].load(std::memory_order_acquire);
  if (e) return e;
  // Never reconnect to a peer whose endpoint was closed (sever): it stays unreachable.
  if (dead[r].load(std::memory_order_acquire)) check_alive(r);
  ucp_ep_params_t p{};
  p.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                 UCP_EP_PARAM_FIELD_ERR_HANDLER;
  p.address = reinterpret_cast<const ucp_address_t*>(addresses[r].data());
  // UCX's shared-memory transports cannot report a dead peer (UCX 1.13): asking for peer error
  // handling silently moves same-host traffic to tcp loopback, 100x slower. Same-host peers get
  // no UCX error handling; their death is reported by the waits' timeouts (naming the rank) and
  // by the launcher, which ends the job when a process dies. Where UCX_TLS leaves no shared
  // memory, same-host traffic goes over a network transport anyway and gets error handling like
  // any other: an endpoint can then be closed at once when an operation times out (abandon).
  p.err_mode = same_host_as_me(r) && shared_memory_allowed ? UCP_ERR_HANDLING_MODE_NONE
                                                           : UCP_ERR_HANDLING_MODE_PEER;
  p.err_handler.cb = on_ep_error;
  p.err_handler.arg = &err_args[r];
  const ucs_status_t st = ucp_ep_create(worker, &p, &e);
  if (st != UCS_OK) throw CommError(ucx_error("connecting to rank " + std::to_string(r), st), r);
  eps[r].store(e, std::memory_order_release);
  connected.fetch_add(1);
  return e;
}

void CommImpl::check_alive(int r, bool immediately) const {
  if (r < 0 || r >= size) return;
  if (!dead[r].load(std::memory_order_acquire) && r < static_cast<int>(local_pid.size()) &&
      local_pid[r] > 0) {
    // A same-host peer: UCX's shared-memory transports report no errors, so look at the process.
    const std::int64_t now = Clock::now().time_since_epoch().count();
    std::int64_t last = pid_checked_ns[r].load(std::memory_order_relaxed);
    if ((immediately || now - last > 20'000'000) &&
        pid_checked_ns[r].compare_exchange_strong(last, now)) {
      if (!process_alive(local_pid[r])) {
        {
          std::lock_guard lock(reason_mu);
          dead_reason[r] = "process " + std::to_string(local_pid[r]) + " on this host is gone";
        }
        dead[r].store(true, std::memory_order_release);
      }
    }
  }
  if (dead[r].load(std::memory_order_acquire)) {
    failed.store(true, std::memory_order_relaxed);
    std::string why;
    {
      std::lock_guard lock(reason_mu);
      why = dead_reason[r];
    }
    throw CommError("rank " + std::to_string(r) + " is unreachable (" + why +
                        "): the process died or its network failed",
                    r);
  }
}

void CommImpl::fail(int r, const std::string& what, ucs_status_t status) const {
  check_alive(r);
  throw CommError(ucx_error(what + (r >= 0 ? " (rank " + std::to_string(r) + ")" : ""), status), r);
}

std::string Comm::transport(int r) {
  if (r == impl_->rank) return "self (load/store)";
  ucp_ep_h ep = impl_->ep(r);
  char* buf = nullptr;
  size_t len = 0;
  FILE* f = open_memstream(&buf, &len);
  if (!f) return "?";
  ucp_ep_print_info(ep, f);
  std::fclose(f);
  std::string text(buf, len);
  std::free(buf);
  // Keep the lanes' transport names: lines like "#   lane[0]:  3:posix/memory.0 md[1] ... rma".
  std::string out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    const auto lane = line.find("lane[");
    if (lane == std::string::npos) continue;
    const auto colon = line.find(':', lane);
    if (colon == std::string::npos) continue;
    std::istringstream words(line.substr(colon + 1));
    std::string tl;
    words >> tl;
    if (const auto c = tl.find(':'); c != std::string::npos) tl = tl.substr(c + 1);
    std::string role;
    for (std::string w; words >> w;) {
      w = w.substr(0, w.find('#'));  // "amo#0" -> "amo"
      if (w == "am" || w == "am_bw" || w == "rma" || w == "rma_bw" || w == "amo" || w == "tag")
        role += (role.empty() ? "" : "+") + w;
    }
    if (!out.empty()) out += ", ";
    out += tl + (role.empty() ? "" : " (" + role + ")");
  }
  return out.empty() ? text : out;
}

bool CommImpl::use_am_for_signals(int r) {
  const int known = signal_by_am[r].load(std::memory_order_acquire);
  if (known >= 0) return known == 1;
  bool am = opt.signal_path == SignalPath::am;
  if (opt.signal_path == SignalPath::automatic) {
    // am unless some lane does RMA over something other than tcp.
    const std::string lanes = self->transport(r);
    am = true;
    std::size_t at = 0;
    while (at < lanes.size()) {
      auto end = lanes.find(", ", at);
      if (end == std::string::npos) end = lanes.size();
      const std::string lane = lanes.substr(at, end - at);
      if (lane.find("rma") != std::string::npos && lane.rfind("tcp", 0) != 0) am = false;
      at = end + 2;
    }
  }
  signal_by_am[r].store(am ? 1 : 0, std::memory_order_release);
  return am;
}

}  // namespace compas::comm

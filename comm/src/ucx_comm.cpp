// Comm: construction (UCP context, multi-threaded worker, worker address exchange, per-peer tables,
// active-message handlers), teardown, and what the exchange taught (hosts, cpus, threads). The
// rest of Comm is in ucx_*.cpp, one concern each.
#include <sched.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <string>
#include <utility>

#include "compas/base/env.hpp"
#include "compas/base/machine.hpp"
#include "compas/comm/ucx.hpp"
#include "compas/comm/window.hpp"
#include "internals.hpp"
#include "ucx_impl.hpp"
#include "ucx_status.hpp"
#include "ucx_tls.hpp"

namespace compas::comm {

namespace {

using Clock = std::chrono::steady_clock;
using Impl = CommImpl;

// This process's pid namespace ("pid:[inode]"), so that pids are compared only within one.
std::string pid_namespace() {
  char buf[64];
  const ssize_t n = ::readlink("/proc/self/ns/pid", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
}

// Threads this process will run (the Runtime's count, else COMPAS_THREADS as compas-run sets it),
// for the oversubscription check.
int threads_wanted(const CommOptions& o) {
  if (o.threads > 0) return o.threads;
  return static_cast<int>(base::env_integer(base::vars::threads).value_or(1));
}

int hex_digit(char ch) {
  return ch <= '9' ? ch - '0' : ch - 'a' + 10;
}

// This process's affinity mask as a hex string, lowest cpu first (4 cpus per digit).
std::string affinity_hex() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return "";
  std::string hex;
  for (int c = 0; c < CPU_SETSIZE; c += 4) {
    int d = 0;
    for (int b = 0; b < 4; ++b)
      if (CPU_ISSET(c + b, &set)) d |= 1 << b;
    hex.push_back("0123456789abcdef"[d]);
  }
  while (!hex.empty() && hex.back() == '0') hex.pop_back();
  return hex;
}

// The cpus of a mask as affinity_hex writes it, ascending.
std::vector<int> cpus_of_hex(const std::string& mask) {
  std::vector<int> cpus;
  for (std::size_t i = 0; i < mask.size(); ++i)
    for (int b = 0; b < 4; ++b)
      if (hex_digit(mask[i]) >> b & 1) cpus.push_back(static_cast<int>(i) * 4 + b);
  return cpus;
}

// How many cpus the union of affinity masks (as affinity_hex writes them) holds.
int cpus_in_union(const std::vector<std::string>& masks) {
  std::vector<int> u;
  for (const auto& m : masks) {
    if (m.size() > u.size()) u.resize(m.size(), 0);
    for (std::size_t i = 0; i < m.size(); ++i) u[i] |= hex_digit(m[i]) & 15;
  }
  int n = 0;
  for (int d : u) n += __builtin_popcount(static_cast<unsigned>(d));
  return n;
}

// The UCP context (its configuration adjusted) and the multi-threaded worker.
void create_worker(Impl& m, const CommOptions& options) {
  ucp_config_t* config = nullptr;
  check(ucp_config_read(nullptr, nullptr, &config), "reading the UCX configuration");
  // Same-host peers update each other's words with CPU atomics; remote atomics must then be CPU
  // atomics too (a NIC's atomics are not atomic with the CPU's). The user's UCX_ATOMIC_MODE wins.
  if (options.direct && !std::getenv("UCX_ATOMIC_MODE"))
    ucp_config_modify(config, "ATOMIC_MODE", "cpu");
  // A dead peer is noticed within seconds, not UCX's default 20 s.
  if (!std::getenv("UCX_KEEPALIVE_INTERVAL")) ucp_config_modify(config, "KEEPALIVE_INTERVAL", "1s");

  ucp_params_t params{};
  params.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED |
                      UCP_PARAM_FIELD_ESTIMATED_NUM_EPS;
  params.features =
      UCP_FEATURE_RMA | UCP_FEATURE_AMO32 | UCP_FEATURE_AMO64 | UCP_FEATURE_AM | UCP_FEATURE_WAKEUP;
  params.mt_workers_shared = 1;
  params.estimated_num_eps = static_cast<size_t>(m.size);
  const ucs_status_t st = ucp_init(&params, config, &m.ctx);
  ucp_config_release(config);
  check(st, "ucp_init");

  ucp_worker_params_t wp{};
  wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  wp.thread_mode = UCS_THREAD_MODE_MULTI;
  if (ucs_status_t s = ucp_worker_create(m.ctx, &wp, &m.worker); s != UCS_OK) {
    ucp_cleanup(m.ctx);
    throw CommError(ucx_error("ucp_worker_create", s));
  }
  ucp_worker_attr_t wa{};
  wa.field_mask = UCP_WORKER_ATTR_FIELD_THREAD_MODE;
  ucp_worker_query(m.worker, &wa);
  if (wa.thread_mode != UCS_THREAD_MODE_MULTI) {
    ucp_worker_destroy(m.worker);
    ucp_cleanup(m.ctx);
    throw CommError(
        "UCX was built without multi-thread support (worker thread mode is not "
        "UCS_THREAD_MODE_MULTI); compas needs a UCX configured with --enable-mt");
  }
}

// Undoes create_worker.
void release_worker(Impl& m) {
  ucp_worker_destroy(m.worker);
  m.worker = nullptr;
  ucp_cleanup(m.ctx);
  m.ctx = nullptr;
}

// What this process tells the others at construction (read back by learn_peers).
std::string describe_self(Impl& m) {
  ucp_address_t* address = nullptr;
  size_t address_len = 0;
  check(ucp_worker_get_address(m.worker, &address, &address_len), "ucp_worker_get_address");
  // Host, then what this process wants and may use of it (threads, affinity mask), then the
  // worker address.
  const std::string mine = host_id() + '\n' + std::to_string(threads_wanted(m.opt)) + '\n' +
                           affinity_hex() + '\n' + std::to_string(::getpid()) + ' ' +
                           pid_namespace() + '\n' +
                           std::string(reinterpret_cast<const char*>(address), address_len);
  ucp_worker_release_address(m.worker, address);
  return mine;
}

// Every rank's worker address, host, affinity mask and threads from what each described
// (describe_self); same-host pids to check for liveness; whether this host is oversubscribed.
void learn_peers(Impl& m, const std::vector<std::string>& all) {
  m.addresses.resize(m.size);
  m.host_of.assign(m.size, 0);
  std::map<std::string, int> host_index;
  std::vector<int> wanted(m.size);
  std::vector<std::string> masks(m.size), pids(m.size);
  for (int r = 0; r < m.size; ++r) {
    std::size_t at = 0;
    std::string fields[4];
    for (auto& f : fields) {
      const auto nl = all[r].find('\n', at);
      if (nl == std::string::npos)
        throw CommError("rank " + std::to_string(r) + " sent a malformed worker address", r);
      f = all[r].substr(at, nl - at);
      at = nl + 1;
    }
    m.addresses[r] = all[r].substr(at);
    wanted[r] = std::atoi(fields[1].c_str());
    masks[r] = fields[2];
    pids[r] = fields[3];
    auto [it, fresh] = host_index.emplace(fields[0], static_cast<int>(m.hosts.size()));
    if (fresh) {
      m.hosts.emplace_back();
      m.host_names.push_back(fields[0].substr(0, fields[0].find('/')));  // host_id(): name/boot
    }
    m.hosts[it->second].push_back(r);
    m.host_of[r] = it->second;
  }
  m.local_pid.assign(m.size, 0);
  m.pid_checked_ns = std::make_unique<std::atomic<std::int64_t>[]>(m.size);
  const std::string my_ns = pid_namespace();
  for (int r = 0; r < m.size; ++r) {
    m.pid_checked_ns[r].store(0);
    const auto sp = pids[r].find(' ');
    if (r == m.rank || m.host_of[r] != m.host_of[m.rank] || sp == std::string::npos ||
        my_ns.empty() || pids[r].substr(sp + 1) != my_ns)
      continue;
    m.local_pid[r] = std::atol(pids[r].c_str());
  }
  m.cpus_of.resize(static_cast<std::size_t>(m.size));
  for (int r = 0; r < m.size; ++r) m.cpus_of[static_cast<std::size_t>(r)] = cpus_of_hex(masks[r]);
  m.threads_of.resize(static_cast<std::size_t>(m.size));
  for (int r = 0; r < m.size; ++r)
    m.threads_of[static_cast<std::size_t>(r)] = std::max(wanted[r], 1);
  if (!m.opt.oversubscribed_given) {
    std::vector<std::string> local_masks;
    int want = 0;
    for (int r : m.hosts[m.host_of[m.rank]]) {
      want += std::max(wanted[r], 1);
      local_masks.push_back(masks[r]);
    }
    m.opt.oversubscribed = want > cpus_in_union(local_masks);
    m.backoff = m.opt.wait == CommWait::backoff ||
                (m.opt.wait == CommWait::automatic && m.opt.oversubscribed);
  }
}

// An active message of the flush protocol (a request or an ack): a whole FlushMessage from a
// rank of the job goes to the Impl's handler On; anything else is dropped.
template <void (CommImpl::*On)(const FlushMessage&)>
ucs_status_t on_flush_am(void* arg, const void* header, size_t header_length, void*, size_t,
                         const ucp_am_recv_param_t*) {
  auto& impl = *static_cast<CommImpl*>(arg);
  FlushMessage f;
  if (header_length != sizeof f) return UCS_OK;
  std::memcpy(&f, header, sizeof f);
  if (f.rank >= 0 && f.rank < impl.size) (impl.*On)(f);
  return UCS_OK;
}

// The per-peer tables (endpoints, liveness, signal paths, flush counters) and the active
// message handlers.
void init_peers(Impl& m) {
  m.eps = std::make_unique<std::atomic<ucp_ep_h>[]>(m.size);
  m.shared_memory_allowed = detail::shared_memory_allowed(std::getenv("UCX_TLS"));
  m.dead = std::make_unique<std::atomic<bool>[]>(m.size);
  for (int r = 0; r < m.size; ++r) {
    m.eps[r].store(nullptr);
    m.dead[r].store(false);
  }
  m.dead_reason.assign(m.size, "");
  m.signal_by_am = std::make_unique<std::atomic<int>[]>(m.size);
  for (int r = 0; r < m.size; ++r) m.signal_by_am[r].store(-1);
  ucp_am_handler_param_t hp{};
  hp.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB |
                  UCP_AM_HANDLER_PARAM_FIELD_ARG | UCP_AM_HANDLER_PARAM_FIELD_FLAGS;
  hp.id = kPutSignalAm;
  hp.flags = UCP_AM_FLAG_WHOLE_MSG;
  hp.arg = &m;
  hp.cb = [](void* arg, const void* header, size_t header_length, void* data, size_t length,
             const ucp_am_recv_param_t* param) -> ucs_status_t {
    if (header_length != sizeof(PutSignalHeader)) return UCS_OK;  // not ours: drop
    PutSignalHeader h;
    std::memcpy(&h, header, sizeof h);
    return deliver_put_signal(*static_cast<Impl*>(arg), h, data, length, param);
  };
  check(ucp_worker_set_am_recv_handler(m.worker, &hp), "registering the put_signal handler");
  m.am_sent = std::make_unique<std::atomic<std::uint64_t>[]>(m.size);
  m.am_acked = std::make_unique<std::atomic<std::uint64_t>[]>(m.size);
  m.am_applied = std::make_unique<std::atomic<std::uint64_t>[]>(m.size);
  m.ucx_ops = std::make_unique<std::atomic<std::uint64_t>[]>(m.size);
  m.ucx_flushed = std::make_unique<std::atomic<std::uint64_t>[]>(m.size);
  for (int r = 0; r < m.size; ++r)
    m.am_sent[r] = m.am_acked[r] = m.am_applied[r] = m.ucx_ops[r] = m.ucx_flushed[r] = 0;
  hp.id = kFlushRequestAm;
  hp.cb = on_flush_am<&Impl::on_flush_request>;
  check(ucp_worker_set_am_recv_handler(m.worker, &hp), "registering the flush request handler");
  hp.id = kFlushAckAm;
  hp.cb = on_flush_am<&Impl::on_flush_ack>;
  check(ucp_worker_set_am_recv_handler(m.worker, &hp), "registering the flush ack handler");
  hp.id = kWindowFreedAm;
  hp.cb = [](void* arg, const void* header, size_t header_length, void*, size_t,
             const ucp_am_recv_param_t*) -> ucs_status_t {
    WindowFreedMessage msg;
    if (header_length != sizeof msg) return UCS_OK;
    std::memcpy(&msg, header, sizeof msg);
    on_window_freed(*static_cast<Impl*>(arg), msg);
    return UCS_OK;
  };
  check(ucp_worker_set_am_recv_handler(m.worker, &hp), "registering the window-freed handler");
  m.err_args.resize(m.size);
  for (int r = 0; r < m.size; ++r) m.err_args[r] = {&m, r};
}

}  // namespace

namespace {

// A variable read by its former name: said once per process, by rank 0 of a job (or a process
// outside one).
void say_former_name_once(const std::string& former, const std::string& name) {
  static std::once_flag said;
  std::call_once(said, [&] {
    const char* rank = std::getenv("COMPAS_RANK");
    if (rank && std::string(rank) != "0") return;
    std::fprintf(stderr, "compas: %s is read as %s, its new name: set that one instead\n",
                 former.c_str(), name.c_str());
  });
}

}  // namespace

CommOptions CommOptions::from_environment() {
  namespace vars = base::vars;
  // In the order of each variable's choices.
  constexpr Progress kProgress[] = {Progress::thread, Progress::wait};
  constexpr CommWait kWait[] = {CommWait::spin, CommWait::backoff, CommWait::automatic};
  constexpr SignalPath kPath[] = {SignalPath::rma, SignalPath::am, SignalPath::automatic};
  constexpr ProcessBarrier kBarrier[] = {ProcessBarrier::dissemination, ProcessBarrier::host,
                                         ProcessBarrier::automatic};
  CommOptions o;
  if (const auto i = base::env_choice(vars::progress)) o.progress = kProgress[*i];
  if (const auto i = base::env_choice(vars::comm_wait)) o.wait = kWait[*i];
  if (const auto i = base::env_choice(vars::signal_path)) o.signal_path = kPath[*i];
  if (const auto i = base::env_choice(vars::process_barrier)) {
    o.process_barrier = kBarrier[*i];
  } else if (const auto j = base::env_choice(vars::node_barrier_former)) {
    o.process_barrier = kBarrier[*j];
    say_former_name_once(vars::node_barrier_former.name, vars::process_barrier.name);
  }
  if (const auto v = base::env_bool(vars::oversubscribed)) {
    o.oversubscribed = *v;
    o.oversubscribed_given = true;
  }
  if (const auto v = base::env_bool(vars::direct)) o.direct = *v;
  if (const auto v = base::env_bool(vars::huge_pages)) o.huge_pages = *v;
  if (const auto t = base::env_seconds(vars::timeout)) o.timeout_s = *t;
  return o;
}

Comm::Comm(Bootstrap& boot, CommOptions options) : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.self = this;
  m.boot = &boot;
  m.opt = options;
  m.rank = boot.rank();
  m.size = boot.size();
  m.backoff = options.wait == CommWait::backoff ||
              (options.wait == CommWait::automatic && options.oversubscribed);

  create_worker(m, options);
  try {
    const std::vector<std::string> all = boot.allgather(describe_self(m));
    learn_peers(m, all);
    init_peers(m);
  } catch (...) {
    // No endpoint, thread or window yet: the worker and the context are all there is to free.
    release_worker(m);
    throw;
  }
  try {
    if (m.size > 1 && options.progress == Progress::thread) {
      if (ucp_worker_get_efd(m.worker, &m.efd) != UCS_OK) m.efd = -1;
      m.progress_thread = std::thread([&m] { m.run_progress_thread(); });
    }
    m.coll = std::make_unique<WindowBytes>(*this, 64, 64);
    m.choose_process_barrier();
  } catch (...) {
    // The progress thread may run and UCX is set up: take them down as ~Comm does, without
    // meeting the others (the job is failing), and report the error.
    m.failed.store(true);
    close();
    throw;
  }
}

std::string Comm::take_teardown_failure() {
  std::lock_guard lock(impl_->reason_mu);
  return std::exchange(impl_->teardown_failure, std::string());
}

bool CommImpl::may_meet() const {
  if (std::uncaught_exceptions() > 0) failed.store(true, std::memory_order_relaxed);
  return !failed.load(std::memory_order_relaxed);
}

Comm::~Comm() {
  close();
}

void Comm::close() noexcept {
  Impl& m = *impl_;
  try {
    m.coll.reset();
    flush_all();
  } catch (...) {
    // A dead peer: nothing more to flush towards it; closing continues.
  }
  // When the job is failing, a process that waits for the others here may wait for one that is
  // itself stuck waiting for a dead rank: leave instead, the others notice this process go.
  const bool meet = m.may_meet();
  try {
    if (meet) m.boot->barrier();
  } catch (...) {
  }
  if (m.progress_thread.joinable()) {
    m.stop_progress.store(true);
    ucp_worker_signal(m.worker);
    base::futex_wake(m.waiting_threads, 1);
    m.progress_thread.join();
  }
  for (int r = 0; r < m.size; ++r) {
    ucp_ep_h ep = m.eps[r].load();
    if (!ep) continue;
    ucp_request_param_t p{};
    p.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    p.flags = UCP_EP_CLOSE_FLAG_FORCE;
    ucs_status_ptr_t sp = ucp_ep_close_nbx(ep, &p);
    if (UCS_PTR_IS_PTR(sp)) {
      const auto deadline = Clock::now() + std::chrono::seconds(5);
      while (ucp_request_check_status(sp) == UCS_INPROGRESS && Clock::now() < deadline)
        ucp_worker_progress(m.worker);
      ucp_request_free(sp);
    }
  }
  try {
    if (meet) m.boot->barrier();
  } catch (...) {
  }
  ucp_worker_destroy(m.worker);
  m.abandoned.clear();  // no UCX request can touch them any more
  for (auto& o : m.orphaned) ucp_mem_unmap(m.ctx, o.memh);
  m.orphaned.clear();
  ucp_cleanup(m.ctx);
}

int Comm::rank() const {
  return impl_->rank;
}
int Comm::size() const {
  return impl_->size;
}
Bootstrap& Comm::bootstrap() {
  return *impl_->boot;
}
const CommOptions& Comm::options() const {
  return impl_->opt;
}
const std::vector<std::vector<int>>& Comm::hosts() const {
  return impl_->hosts;
}
int Comm::host_of(int r) const {
  return impl_->host_of.at(static_cast<std::size_t>(r));
}
bool Comm::same_host(int r) const {
  return host_of(r) == host_of(impl_->rank);
}
const std::vector<int>& Comm::cpus_of(int r) const {
  return impl_->cpus_of.at(static_cast<std::size_t>(r));
}
int Comm::threads_of(int r) const {
  return impl_->threads_of.at(static_cast<std::size_t>(r));
}

}  // namespace compas::comm

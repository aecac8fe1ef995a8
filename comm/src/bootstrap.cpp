// Choosing a bootstrap from the environment, reading and validating the COMPAS_* variables of
// the tcp bootstrap, and the single-process bootstrap.
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <optional>

#include "bootstrap_impl.hpp"
#include "compas/base/abort_notice.hpp"
#include "compas/base/env.hpp"
#include "compas/comm/bootstrap.hpp"
#include "handshake.hpp"
#include "net.hpp"

namespace compas::comm {

namespace {

namespace vars = base::vars;

class SingleBootstrap final : public Bootstrap {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::string kind() const override { return "single"; }
  std::vector<std::string> allgather(const std::string& mine) override { return {mine}; }
  void barrier() override {}
};

const char* env(const char* name) {
  return std::getenv(name);
}

// The socket named by COMPAS_RENDEZVOUS_FD must be a TCP socket listening on the rendezvous port.
bool is_listening_on(int fd, int port) {
  int accepting = 0;
  socklen_t len = sizeof accepting;
  if (::getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &accepting, &len) != 0 || !accepting)
    return false;
  sockaddr_in sa{};
  len = sizeof sa;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len) != 0 || sa.sin_family != AF_INET)
    return false;
  return ntohs(sa.sin_port) == port;
}

std::atomic<int> g_adopted_listener{-1};
// Whether this process formed (or began to form) a tcp job of more than one process from its
// environment.
std::atomic<bool> g_formed_tcp_job{false};

const char* const kOneJobPerProcess =
    "keep one Runtime (one compas_init ... compas_finalize) for the whole program";

}  // namespace

void Bootstrap::abort_job(int code) {
  base::tell_launcher_of_abort(rank(), code);  // before its peers can see it gone
  std::_Exit(code);
}

void detail::note_adopted_listener(int fd) {
  g_adopted_listener.store(fd);
}

int detail::adopted_listener() {
  return g_adopted_listener.load();
}

std::string TcpOptions::rendezvous() const {
  return host + ":" + std::to_string(port);
}

TcpOptions TcpOptions::from_environment() {
  TcpOptions o;
  const char* rank_s = env("COMPAS_RANK");
  const char* size_s = env("COMPAS_SIZE");
  if (!rank_s && !size_s)
    throw std::invalid_argument(
        "COMPAS_RANK and COMPAS_SIZE are not set: a tcp bootstrap needs both (compas-run sets "
        "them)");
  if (!size_s)
    throw std::invalid_argument(
        "COMPAS_RANK is set but COMPAS_SIZE is not set: a tcp bootstrap needs both (COMPAS_SIZE: "
        "the "
        "number of processes, 1.." +
        std::to_string(static_cast<long long>(vars::size.max)) + ")");
  if (!rank_s)
    throw std::invalid_argument(
        "COMPAS_SIZE is set but COMPAS_RANK is not set: a tcp bootstrap needs both (COMPAS_RANK: "
        "0..COMPAS_SIZE-1)");
  o.size = static_cast<int>(base::parse_env_integer(vars::size, size_s));
  base::EnvVar rank = vars::rank;  // a rank of this job
  rank.max = o.size - 1;
  rank.note = "COMPAS_SIZE=" + std::to_string(o.size);
  o.rank = static_cast<int>(base::parse_env_integer(rank, rank_s));

  if (const auto t = base::env_seconds(vars::timeout)) o.timeout_s = *t;
  base::EnvVar frame = vars::bootstrap_max_frame;
  frame.note = "default " + std::to_string(wire::kDefaultMaxPayloadBytes);
  if (const auto v = base::env_integer(frame)) o.max_frame_bytes = static_cast<std::size_t>(*v);
  if (o.size == 1) return o;  // alone: no rendezvous, no token needed

  const auto rv = base::env_text(vars::rendezvous);
  if (!rv)
    throw std::invalid_argument("COMPAS_RENDEZVOUS is not set: rank " + std::to_string(o.rank) +
                                " of " + std::to_string(o.size) +
                                " needs host:port of rank 0 (compas-run sets it)");
  {
    const std::string& text = *rv;
    const auto colon = text.rfind(':');
    const std::string host = colon == std::string::npos ? "" : text.substr(0, colon);
    const std::string port_s = colon == std::string::npos ? text : text.substr(colon + 1);
    const auto port = base::parse_integer(port_s, 1, 65535);
    if (!port || host.find(':') != std::string::npos)
      base::env_reject(vars::rendezvous.name, text, vars::rendezvous.allowed());
    o.host = host.empty() ? "127.0.0.1" : host;
    o.port = static_cast<int>(*port);
    in_addr addr{};
    if (!net::resolve_ipv4(o.host, addr))
      base::env_reject(
          vars::rendezvous.name, text,
          "the host does not resolve to an IPv4 address; " + vars::rendezvous.allowed());
  }

  const auto token = base::env_text(vars::job_token);
  if (!token)
    throw std::invalid_argument(
        "COMPAS_JOB_TOKEN is not set: every rank of a tcp job must present the same secret token "
        "(compas-run sets a random one; for a manual launch share e.g. the output of "
        "`openssl rand -hex 16`)");
  o.token = *token;
  if (o.token.size() > wire::kMaxTokenBytes || o.token.size() < handshake::kMinTokenBytes)
    throw std::invalid_argument(
        "COMPAS_JOB_TOKEN is " + std::to_string(o.token.size()) + " bytes long: at least " +
        std::to_string(handshake::kMinTokenBytes) + " and at most " +
        std::to_string(wire::kMaxTokenBytes) +
        " are allowed (a short token could be found by trying them all; share e.g. the output "
        "of `openssl rand -hex 16`)");

  if (o.rank == 0) {
    if (const auto fd_s = base::env_text(vars::rendezvous_fd)) {
      const auto fd = base::parse_integer(*fd_s, 0, INT_MAX);
      if (fd && *fd == detail::adopted_listener() &&
          !is_listening_on(static_cast<int>(*fd), o.port))
        throw base::EnvError(
            std::string(vars::rendezvous_fd.name) + "='" + *fd_s +
            "': one Runtime per process is supported under compas-run: the rendezvous socket "
            "that compas-run handed to this process (rank 0) was taken by its first Runtime "
            "(its first tcp bootstrap) and closed with it; keep one Runtime for the whole "
            "program");
      if (!fd || !is_listening_on(static_cast<int>(*fd), o.port))
        base::env_reject(vars::rendezvous_fd.name, *fd_s,
                         "no socket listening on " + o.rendezvous() + " has this descriptor; " +
                             vars::rendezvous_fd.allowed());
      o.listen_fd = static_cast<int>(*fd);
    }
  }
  return o;
}

BootstrapChoice choose_bootstrap() {
  if (env("COMPAS_RANK")) return {"tcp", "COMPAS_RANK"};
  if (env("COMPAS_SIZE")) return {"tcp", "COMPAS_SIZE"};
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"})
    if (env(v)) return {"mpi", v};
  if (env("SLURM_NTASKS") && env("SLURM_PROCID")) return {"mpi", "SLURM_NTASKS"};
  return {"single", ""};
}

void Bootstrap::check_can_form() {
  const auto choice = choose_bootstrap();
  if (choice.kind == "tcp" && g_formed_tcp_job.load())
    throw SecondJobError(
        std::string("a second Runtime in this process (compas_init after compas_finalize, or "
                    "twice): under compas-run a process joins its job once, with its first "
                    "Runtime, whose end closed the job's rendezvous; ") +
        kOneJobPerProcess);
#ifdef COMPAS_WITH_MPI
  if (choice.kind == "mpi" && detail::mpi_finalized())
    throw SecondJobError(
        "a Runtime after MPI was finalized (by the first Runtime, which had "
        "initialized it, or by the program): under mpirun / srun (" +
        choice.reason + " is set) a process joins its job once; " + kOneJobPerProcess);
#endif
}

std::unique_ptr<Bootstrap> Bootstrap::from_environment() {
  check_can_form();
  const auto choice = choose_bootstrap();
  if (choice.kind == "tcp") {
    auto options = TcpOptions::from_environment();
    base::adopt_abort_pipe();
    if (options.size > 1) g_formed_tcp_job.store(true);
    return tcp(options);
  }
  if (choice.kind == "mpi") {
    if (!mpi_supported())
      throw BootstrapError("bootstrap: this process runs under an MPI launcher (" + choice.reason +
                           " is set) but compas was built without MPI support: rebuild with "
                           "-DCOMPAS_WITH_MPI=ON, or start the job with compas-run");
    return mpi();
  }
  return single();
}

std::unique_ptr<Bootstrap> Bootstrap::single() {
  return std::make_unique<SingleBootstrap>();
}

std::unique_ptr<Bootstrap> Bootstrap::tcp(const TcpOptions& options) {
  return detail::make_tcp_bootstrap(options);
}

bool Bootstrap::mpi_supported() {
#ifdef COMPAS_WITH_MPI
  return true;
#else
  return false;
#endif
}

std::unique_ptr<Bootstrap> Bootstrap::mpi() {
#ifdef COMPAS_WITH_MPI
  return detail::make_mpi_bootstrap();
#else
  throw BootstrapError(
      "bootstrap: MPI support is not built (configure with -DCOMPAS_WITH_MPI=ON and an MPI "
      "library installed)");
#endif
}

std::string host_id() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) name[0] = '\0';
  std::string id = name;
  std::ifstream boot("/proc/sys/kernel/random/boot_id");
  std::string boot_id;
  if (boot >> boot_id) id += "/" + boot_id;
  return id;
}

}  // namespace compas::comm

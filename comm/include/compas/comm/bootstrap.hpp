// Bootstrap: how the P processes of a job find each other before any data moves. It gives each
// process its rank and the job size, and two slow but dependable collectives, allgather of byte
// strings and barrier, which later layers use to exchange UCX addresses and window keys.
// Three kinds: `single` (P = 1), `tcp` (a rendezvous at rank 0, used by compas-run
// and for manual runs) and `mpi` (under mpirun / srun, when built with MPI).
// Failures never hang: a dead rank, a rank that never arrives, or a collective that does not
// complete within COMPAS_TIMEOUT ends the job on every rank with a BootstrapError naming the
// rank. Calls are serialized internally, so one object may be shared by threads.
#pragma once

#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace compas::comm {

// The largest bootstrap frame a job accepts by default (COMPAS_BOOTSTRAP_MAX_FRAME): 16 MiB.
inline constexpr std::size_t kDefaultMaxFrameBytes = std::size_t{16} << 20;

// A failed job: a rank died, never arrived, timed out, or broke the protocol. Bad configuration
// (environment values) is reported as std::invalid_argument instead.
class BootstrapError : public std::runtime_error {
 public:
  explicit BootstrapError(const std::string& message, int culprit_rank = -1)
      : std::runtime_error(message), rank_(culprit_rank) {}
  // The rank whose failure is reported, or -1 when none is singled out.
  int rank() const { return rank_; }

 private:
  int rank_;
};

// A second job in a process that already formed one under a launcher: under compas-run (a tcp job
// of more than one process) a process joins its job once, with its first bootstrap from the
// environment (its first Runtime, compas_init): rank 0 took the rendezvous socket compas-run
// handed it and closed it with that bootstrap, so the others could only wait for a rendezvous that
// never comes. Under mpirun / srun, once MPI was finalized. Each process decides it alone, at once
// and without its peers, so every process of the job throws it alike. A std::logic_error: the
// program's order of calls, not its input or the machine (the C API's COMPAS_ERR_STATE).
class SecondJobError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

// Configuration of the tcp bootstrap; from_environment() reads it the way compas-run sets it.
struct TcpOptions {
  int rank = 0;                    // COMPAS_RANK, 0..size-1
  int size = 1;                    // COMPAS_SIZE
  std::string host = "127.0.0.1";  // COMPAS_RENDEZVOUS host: rank 0 listens there, others connect
  int port = 0;                    // COMPAS_RENDEZVOUS port
  std::string token;               // COMPAS_JOB_TOKEN: peers presenting another one are rejected
  double timeout_s = 60;           // COMPAS_TIMEOUT: connect phase, and each collective
  double hello_timeout_s = 5;      // a new connection must present its HELLO within this
  std::size_t max_frame_bytes = kDefaultMaxFrameBytes;  // COMPAS_BOOTSTRAP_MAX_FRAME
  // Rank 0 only: a socket already listening on host:port, handed down by the launcher
  // (COMPAS_RENDEZVOUS_FD); the bootstrap adopts it (and closes it) instead of binding. So one
  // bootstrap (one Runtime) per process under compas-run: a second one from the environment on
  // rank 0 throws base::EnvError saying so (from_environment() throws SecondJobError first, on
  // every rank).
  int listen_fd = -1;

  // Reads COMPAS_RANK, COMPAS_SIZE, COMPAS_RENDEZVOUS (host:port, or :port / port for loopback;
  // IPv4 address or host name), COMPAS_JOB_TOKEN, COMPAS_TIMEOUT (seconds, default 60),
  // COMPAS_BOOTSTRAP_MAX_FRAME (bytes) and COMPAS_RENDEZVOUS_FD. Throws std::invalid_argument
  // naming the variable, its value and what is allowed.
  static TcpOptions from_environment();
  std::string rendezvous() const;  // "host:port"
};

class Bootstrap {
 public:
  virtual ~Bootstrap() = default;
  Bootstrap(const Bootstrap&) = delete;
  Bootstrap& operator=(const Bootstrap&) = delete;

  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual std::string kind() const = 0;  // "single", "tcp" or "mpi"

  // Every rank's `mine`, indexed by rank. Collective: every rank calls it, in the same order as
  // its other collectives.
  virtual std::vector<std::string> allgather(const std::string& mine) = 0;
  virtual void barrier() = 0;

  // Ends this process with exit status `code` so that the whole job ends (MPI_Abort's part):
  // under mpirun / srun it calls MPI_Abort, which ends every process; otherwise this process
  // exits at once (std::_Exit), and its launcher (compas-run) ends the others, which the exit of a
  // rank with a status other than 0 makes it do. Under compas-run the rank first tells it, through
  // the pipe of COMPAS_ABORT_FD (base/abort_notice.hpp), so that compas-run names this rank and
  // exits with `code` even when the peers that lose it end first. From any thread; nothing is
  // flushed or unwound.
  [[noreturn]] virtual void abort_job(int code);

  // The bootstrap the environment asks for: tcp when COMPAS_RANK or COMPAS_SIZE is set (compas-run
  // or a manual launch), mpi under mpirun / srun (OMPI_COMM_WORLD_SIZE, PMI_SIZE, PMIX_RANK,
  // SLURM_NTASKS with SLURM_PROCID), otherwise single. Throws std::invalid_argument on bad
  // COMPAS_* values, SecondJobError as check_can_form(), and BootstrapError when the job cannot
  // form (or MPI support is not built).
  static std::unique_ptr<Bootstrap> from_environment();
  // Throws SecondJobError when from_environment() cannot form a job in this process any more: it
  // already formed a tcp job of more than one process, or (mpi) MPI was finalized. Local and
  // immediate; alone (single, or a tcp job of one process) a process may form jobs one after
  // another.
  static void check_can_form();
  static std::unique_ptr<Bootstrap> single();
  // Blocks until all `size` ranks have connected (or throws BootstrapError naming the missing).
  static std::unique_ptr<Bootstrap> tcp(const TcpOptions& options);
  // Initializes MPI unless the program already did; finalizes it on destruction only if it did.
  // Throws BootstrapError when compas was built without MPI.
  static std::unique_ptr<Bootstrap> mpi();
  static bool mpi_supported();  // built with COMPAS_WITH_MPI

 protected:
  Bootstrap() = default;
};

// What from_environment() would choose, without starting anything: kind is "tcp", "mpi" or
// "single"; reason names the variable that decided it ("COMPAS_RANK", "OMPI_COMM_WORLD_SIZE", ...,
// or "" for single).
struct BootstrapChoice {
  std::string kind;
  std::string reason;
};
BootstrapChoice choose_bootstrap();

// A string equal on all processes of one host and different across hosts (host name and boot
// id), for grouping ranks by host.
std::string host_id();

}  // namespace compas::comm

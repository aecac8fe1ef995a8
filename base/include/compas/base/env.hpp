// The COMPAS_* environment variables: one description per variable (kind, allowed values,
// default) and one parser, so that every reader accepts the same values and rejects bad ones with
// the same message: "COMPAS_X='value' is not allowed: <what is allowed>".
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "compas/base/number.hpp"

namespace compas::base {

// A value that a variable (or the option standing for it) does not allow.
class EnvError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

enum class EnvKind {
  integer,  // decimal digits (a leading '-' only where min < 0), min..max
  seconds,  // a decimal number of seconds (strtod syntax, starting with a digit or '.'): > 0, <=
            // max
  size,     // a byte count as base::parse_size takes it ("64KiB", "1GB", "4096"): min..max
  boolean,  // 0 or 1
  choice,   // one of `choices`
  text,     // any value (checked by its reader)
};

struct EnvVar {
  std::string name{};
  EnvKind kind = EnvKind::text;
  double min = 0, max = 0;             // integer, size: allowed range; seconds: max only
  std::vector<std::string> choices{};  // choice: the allowed values
  std::string unit{};                  // integer: what it counts ("bytes"), named in messages
  std::string expected{};              // text: what is allowed, as messages say it
  std::string note{};                  // said after what is allowed, e.g. "default 60"
  // An empty value means "not set" (variables that always took it so); else it is rejected.
  bool empty_is_unset = false;

  // What is allowed, as messages say it: "expected an integer 1..4096", "expected 0 or 1".
  std::string allowed() const;
};

// Throws EnvError "<source>='<value>' is not allowed: <allowed>".
[[noreturn]] void env_reject(const std::string& source, const std::string& value,
                             const std::string& allowed);

// `text` as a value of `var`; `source` names it in the message (default: var.name; a command-line
// flag that stands for the variable gives its own name). Throw EnvError, an empty text included.
long long parse_env_integer(const EnvVar& var, const std::string& text,
                            const std::string& source = "");
double parse_env_seconds(const EnvVar& var, const std::string& text,
                         const std::string& source = "");
std::uint64_t parse_env_size(const EnvVar& var, const std::string& text,
                             const std::string& source = "");
bool parse_env_bool(const EnvVar& var, const std::string& text, const std::string& source = "");
std::size_t parse_env_choice(const EnvVar& var, const std::string& text,  // index in choices
                             const std::string& source = "");

// The variable read from the environment: nullopt when it is not set (or empty, for a variable
// where empty means not set). Throw EnvError for a bad value.
std::optional<std::string> env_text(const EnvVar& var);
std::optional<long long> env_integer(const EnvVar& var);
std::optional<double> env_seconds(const EnvVar& var);
std::optional<std::uint64_t> env_size(const EnvVar& var);
std::optional<bool> env_bool(const EnvVar& var);
std::optional<std::size_t> env_choice(const EnvVar& var);

// COMPAS_TIMEOUT when it is not set: the bound of every wait of the bootstrap, the Comm and the
// team barriers, in seconds.
inline constexpr double kTimeoutDefaultSeconds = 60;

// The variables compas reads, by the layer that reads them.
namespace vars {
// comm: the tcp bootstrap (compas-run sets these).
extern const EnvVar rank;           // COMPAS_RANK, integer 0..size-1 (checked against COMPAS_SIZE)
extern const EnvVar size;           // COMPAS_SIZE, integer 1..65536
extern const EnvVar rendezvous;     // COMPAS_RENDEZVOUS, host:port
extern const EnvVar job_token;      // COMPAS_JOB_TOKEN
extern const EnvVar rendezvous_fd;  // COMPAS_RENDEZVOUS_FD
extern const EnvVar abort_fd;       // COMPAS_ABORT_FD (base/abort_notice.hpp)
extern const EnvVar bootstrap_max_frame;  // COMPAS_BOOTSTRAP_MAX_FRAME, bytes
// comm and threads: every wait (bootstrap, Comm, team barriers), seconds > 0 and <= 1e7,
// default kTimeoutDefaultSeconds.
extern const EnvVar timeout;  // COMPAS_TIMEOUT
// comm: the Comm.
extern const EnvVar progress;         // COMPAS_PROGRESS: thread, wait
extern const EnvVar comm_wait;        // COMPAS_COMM_WAIT: spin, backoff, auto
extern const EnvVar signal_path;      // COMPAS_SIGNAL_PATH: rma, am, auto
extern const EnvVar process_barrier;  // COMPAS_PROCESS_BARRIER: dissemination, host, auto
// Its former name, read when COMPAS_PROCESS_BARRIER is unset (with a notice on stderr).
extern const EnvVar node_barrier_former;  // COMPAS_NODE_BARRIER
extern const EnvVar oversubscribed;       // COMPAS_OVERSUBSCRIBED: 0 or 1 (compas-run sets it)
extern const EnvVar direct;               // COMPAS_DIRECT: 0 or 1
extern const EnvVar huge_pages;           // COMPAS_HUGE_PAGES: 0 or 1
// runtime: the options of a Runtime (also given as --threads, --bind, ...).
extern const EnvVar threads;        // COMPAS_THREADS, integer 1..4096
extern const EnvVar bind;           // COMPAS_BIND
extern const EnvVar wait;           // COMPAS_WAIT
extern const EnvVar barrier;        // COMPAS_BARRIER
extern const EnvVar oversubscribe;  // COMPAS_OVERSUBSCRIBE: 0 or 1
extern const EnvVar events;         // COMPAS_EVENTS
extern const EnvVar openmp;         // COMPAS_OPENMP: auto, pin, leave
extern const EnvVar cpus;           // COMPAS_CPUS: compas-run's cpu list for this process
// runtime: each process says where its threads run (also --report-bindings).
extern const EnvVar report_binding;  // COMPAS_REPORT_BINDING: 0 or 1
// kernels
extern const EnvVar gemm_isa;  // COMPAS_GEMM_ISA: auto, generic, avx2, avx512
}  // namespace vars

}  // namespace compas::base

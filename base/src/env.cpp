#include "compas/base/env.hpp"

#include <cstdlib>
#include <sstream>

#include "compas/base/size.hpp"

namespace compas::base {

namespace {

std::string number(double v) {
  std::ostringstream o;
  o.precision(15);
  o << v;
  return o.str();
}

std::string one_of(const std::vector<std::string>& choices) {
  std::string s;
  for (std::size_t i = 0; i < choices.size(); ++i) {
    if (i > 0) s += i + 1 == choices.size() ? " or " : ", ";
    s += choices[i];
  }
  return s;
}

const std::string& source_of(const EnvVar& var, const std::string& source) {
  return source.empty() ? var.name : source;
}

// Rejects an empty text, naming it as such.
void require_value(const EnvVar& var, const std::string& text, const std::string& source) {
  if (text.empty()) env_reject(source_of(var, source), text, "an empty value; " + var.allowed());
}

[[noreturn]] void reject(const EnvVar& var, const std::string& text, const std::string& source) {
  env_reject(source_of(var, source), text, var.allowed());
}

std::optional<std::string> read(const EnvVar& var) {
  const char* v = std::getenv(var.name.c_str());
  if (!v || (!*v && var.empty_is_unset)) return std::nullopt;
  return std::string(v);
}

// The variable parsed by `parse`, nullopt when unset.
template <class T>
std::optional<T> read_as(const EnvVar& var,
                         T (*parse)(const EnvVar&, const std::string&, const std::string&)) {
  const auto v = read(var);
  if (!v) return std::nullopt;
  return parse(var, *v, "");
}

}  // namespace

std::string EnvVar::allowed() const {
  std::string s;
  switch (kind) {
    case EnvKind::integer:
      s = "expected " + (unit.empty() ? std::string("an integer") : "a number of " + unit) + " " +
          number(min) + ".." + number(max);
      break;
    case EnvKind::seconds:
      s = "expected a positive number of seconds, at most " + number(max);
      break;
    case EnvKind::size:
      s = "expected a byte count " + number(min) + ".." + number(max) +
          " (like 4096, 64KiB, 1MiB, 1GB)";
      break;
    case EnvKind::boolean:
      s = "expected 0 or 1";
      break;
    case EnvKind::choice:
      s = "expected " + one_of(choices);
      break;
    case EnvKind::text:
      s = "expected " + (expected.empty() ? std::string("a value") : expected);
      break;
  }
  if (!note.empty()) s += " (" + note + ")";
  return s;
}

void env_reject(const std::string& source, const std::string& value, const std::string& allowed) {
  throw EnvError(source + "='" + value + "' is not allowed: " + allowed);
}

long long parse_env_integer(const EnvVar& var, const std::string& text, const std::string& source) {
  require_value(var, text, source);
  const auto v =
      parse_integer(text, static_cast<long long>(var.min), static_cast<long long>(var.max));
  if (!v) reject(var, text, source);
  return *v;
}

double parse_env_seconds(const EnvVar& var, const std::string& text, const std::string& source) {
  require_value(var, text, source);
  const auto v = parse_decimal(text);
  if (!v || !(*v > 0) || *v > var.max) reject(var, text, source);
  return *v;
}

std::uint64_t parse_env_size(const EnvVar& var, const std::string& text,
                             const std::string& source) {
  require_value(var, text, source);
  std::uint64_t v = 0;
  try {
    v = parse_size(text);
  } catch (const std::invalid_argument&) {
    reject(var, text, source);
  }
  if (static_cast<double>(v) < var.min || static_cast<double>(v) > var.max)
    reject(var, text, source);
  return v;
}

bool parse_env_bool(const EnvVar& var, const std::string& text, const std::string& source) {
  require_value(var, text, source);
  if (text == "1") return true;
  if (text == "0") return false;
  reject(var, text, source);
}

std::size_t parse_env_choice(const EnvVar& var, const std::string& text,
                             const std::string& source) {
  require_value(var, text, source);
  for (std::size_t i = 0; i < var.choices.size(); ++i)
    if (text == var.choices[i]) return i;
  reject(var, text, source);
}

std::optional<std::string> env_text(const EnvVar& var) {
  auto v = read(var);
  if (v) require_value(var, *v, "");
  return v;
}

std::optional<long long> env_integer(const EnvVar& var) {
  return read_as(var, parse_env_integer);
}

std::optional<double> env_seconds(const EnvVar& var) {
  return read_as(var, parse_env_seconds);
}

std::optional<std::uint64_t> env_size(const EnvVar& var) {
  return read_as(var, parse_env_size);
}

std::optional<bool> env_bool(const EnvVar& var) {
  return read_as(var, parse_env_bool);
}

std::optional<std::size_t> env_choice(const EnvVar& var) {
  return read_as(var, parse_env_choice);
}

namespace vars {

using K = EnvKind;

// The tcp bootstrap reads an empty value as a bad one; the Comm and the Runtime, which always
// skipped empty values, keep reading them as unset.
const EnvVar rank{.name = "COMPAS_RANK", .kind = K::integer, .min = 0, .max = 65535};
const EnvVar size{.name = "COMPAS_SIZE", .kind = K::integer, .min = 1, .max = 65536};
const EnvVar rendezvous{.name = "COMPAS_RENDEZVOUS",
                        .expected =
                            "host:port (an IPv4 address or host name, port 1..65535), or "
                            ":port for 127.0.0.1"};
// Unset or empty, it is reported missing; its value is never repeated in a message.
const EnvVar job_token{.name = "COMPAS_JOB_TOKEN", .empty_is_unset = true};
const EnvVar rendezvous_fd{
    .name = "COMPAS_RENDEZVOUS_FD",
    .expected =
        "the descriptor of a socket listening on the rendezvous address, as compas-run "
        "hands it to rank 0 (unset it otherwise)"};
const EnvVar abort_fd{
    .name = "COMPAS_ABORT_FD",
    .expected =
        "the descriptor of a pipe open for writing, as compas-run hands it to every rank "
        "(unset it otherwise)"};
const EnvVar bootstrap_max_frame{.name = "COMPAS_BOOTSTRAP_MAX_FRAME",
                                 .kind = K::integer,
                                 .min = 4096,
                                 .max = 1 << 30,
                                 .unit = "bytes"};
// The bootstrap took (0, 1e7] and rejected an empty value, the Comm (0, 1e6] and skipped an empty
// one: both now take (0, 1e7] (about 115 days: long runs that must not give up on a slow peer)
// and reject an empty value.
const EnvVar timeout{
    .name = "COMPAS_TIMEOUT", .kind = K::seconds, .max = 1e7, .note = "default 60"};
static_assert(kTimeoutDefaultSeconds == 60, "the note above says 60");
const EnvVar progress{.name = "COMPAS_PROGRESS",
                      .kind = K::choice,
                      .choices = {"thread", "wait"},
                      .empty_is_unset = true};
const EnvVar comm_wait{.name = "COMPAS_COMM_WAIT",
                       .kind = K::choice,
                       .choices = {"spin", "backoff", "auto"},
                       .empty_is_unset = true};
const EnvVar signal_path{.name = "COMPAS_SIGNAL_PATH",
                         .kind = K::choice,
                         .choices = {"rma", "am", "auto"},
                         .empty_is_unset = true};
const EnvVar process_barrier{.name = "COMPAS_PROCESS_BARRIER",
                             .kind = K::choice,
                             .choices = {"dissemination", "host", "auto"},
                             .empty_is_unset = true};
const EnvVar node_barrier_former{.name = "COMPAS_NODE_BARRIER",
                                 .kind = K::choice,
                                 .choices = {"dissemination", "host", "auto"},
                                 .empty_is_unset = true};
const EnvVar oversubscribed{
    .name = "COMPAS_OVERSUBSCRIBED", .kind = K::boolean, .empty_is_unset = true};
const EnvVar direct{.name = "COMPAS_DIRECT", .kind = K::boolean, .empty_is_unset = true};
// Newer than the Runtime's other options: an empty value is bad input.
const EnvVar huge_pages{.name = "COMPAS_HUGE_PAGES", .kind = K::boolean, .note = "default 0"};
const EnvVar threads{
    .name = "COMPAS_THREADS", .kind = K::integer, .min = 1, .max = 4096, .empty_is_unset = true};
const EnvVar bind{.name = "COMPAS_BIND", .empty_is_unset = true};
const EnvVar wait{.name = "COMPAS_WAIT", .empty_is_unset = true};
const EnvVar barrier{.name = "COMPAS_BARRIER", .empty_is_unset = true};
const EnvVar oversubscribe{
    .name = "COMPAS_OVERSUBSCRIBE", .kind = K::boolean, .empty_is_unset = true};
const EnvVar events{.name = "COMPAS_EVENTS", .empty_is_unset = true};
const EnvVar openmp{.name = "COMPAS_OPENMP",
                    .kind = K::choice,
                    .choices = {"auto", "pin", "leave"},
                    .empty_is_unset = true};
const EnvVar cpus{.name = "COMPAS_CPUS", .empty_is_unset = true};
// Newer than the Runtime's other options: an empty value is bad input.
const EnvVar report_binding{
    .name = "COMPAS_REPORT_BINDING", .kind = K::boolean, .note = "default 0"};
const EnvVar gemm_isa{.name = "COMPAS_GEMM_ISA",
                      .kind = K::choice,
                      .choices = {"auto", "generic", "avx2", "avx512"},
                      .empty_is_unset = true};

}  // namespace vars

}  // namespace compas::base

// The tcp bootstrap: rank 0 is a rendezvous server, every other rank one client of it.
//
// Connect phase: rank 0 listens (or adopts the launcher's listening socket) and multiplexes with
// poll() over the listener, the connections that have not yet said who they are, and the admitted
// ranks. A connection must send HELLO (rank, size, job token) as its first frame within
// hello_timeout_s, or it is dropped; a wrong token, a rank out of range, a size that differs or a
// rank already present is rejected (REJECT frame, close), and none of that affects the job. When
// every rank is in, rank 0 closes the listener and sends WELCOME to all. Until then clients wait.
//
// Collectives (bootstrap_tcp_collective.cpp): each rank numbers its collectives 1, 2, ...; a client
// sends BARRIER or GATHER tagged with the number, rank 0 waits for all of them (poll again, so a
// rank that dies is seen at once), checks that everyone called the same collective, and replies
// BARRIER_DONE or one GATHER_PART per rank. Any failure seen by rank 0 (a closed connection, a
// protocol error, a timeout) is sent as ABORT to every other rank before rank 0 throws, so all
// ranks fail with the same message. A client that loses rank 0 fails naming rank 0.
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <mutex>
#include <thread>

#include "bootstrap_impl.hpp"
#include "bootstrap_tcp.hpp"
#include "handshake.hpp"
#include "net.hpp"
#include "tcp_admission.hpp"

namespace compas::comm {

namespace detail {

TcpBootstrap::TcpBootstrap(const TcpOptions& options) : o_(options), where_(options.rendezvous()) {
  // Ours from here on, whatever happens next: closed with this object or when construction fails.
  if (o_.rank == 0 && o_.listen_fd >= 0) {
    listener_.reset(o_.listen_fd);
    detail::note_adopted_listener(o_.listen_fd);
  }
  if (o_.size < 1)
    throw std::invalid_argument("tcp bootstrap: size " + std::to_string(o_.size) +
                                " is not valid: must be at least 1");
  if (o_.rank < 0 || o_.rank >= o_.size)
    throw std::invalid_argument("tcp bootstrap: rank " + std::to_string(o_.rank) +
                                " is out of range 0.." + std::to_string(o_.size - 1));
  if (o_.size > 1 &&
      (o_.token.size() < handshake::kMinTokenBytes || o_.token.size() > wire::kMaxTokenBytes))
    throw std::invalid_argument("tcp bootstrap: a job token of " + std::to_string(o_.token.size()) +
                                " bytes: it must have at least " +
                                std::to_string(handshake::kMinTokenBytes) + " and at most " +
                                std::to_string(wire::kMaxTokenBytes));
  if (!(o_.timeout_s > 0))
    throw std::invalid_argument("tcp bootstrap: timeout must be a positive number of seconds");
  if (o_.size == 1) return;
  if (o_.rank == 0) {
    listen_or_adopt();
    serve_connect();
  } else {
    join();
  }
}

TcpBootstrap::~TcpBootstrap() {
  if (!failed_.empty()) return;
  const std::string bye = wire::encode(FrameType::bye, seq_, {});
  for (auto& p : peers_) {
    if (!p.fd) continue;
    net::send_now(p.fd.get(), bye);
    ::shutdown(p.fd.get(), SHUT_WR);
    net::drain(p.fd.get());
  }
}

void TcpBootstrap::fail(const std::string& message, int culprit) {
  failed_ = message;
  failed_rank_ = culprit;
  if (o_.rank == 0) {
    const std::string abort = wire::encode(
        FrameType::abort, seq_,
        wire::encode_abort(
            {culprit < 0 ? wire::kNoRank : static_cast<std::uint32_t>(culprit), message}));
    // The culprit too: one that is merely late learns why the job ended.
    for (std::size_t r = 1; r < peers_.size(); ++r)
      if (peers_[r].fd) net::send_now(peers_[r].fd.get(), abort);
  }
  for (auto& p : peers_) {
    if (!p.fd) continue;
    ::shutdown(p.fd.get(), SHUT_WR);
    net::drain(p.fd.get());
  }
  peers_.clear();
  listener_.reset();
  throw BootstrapError(message, culprit);
}

void TcpBootstrap::listen_or_adopt() {
  if (listener_) {
    net::set_nonblocking(listener_.get());
    net::set_cloexec(listener_.get());
    return;
  }
  in_addr addr{};
  if (!net::resolve_ipv4(o_.host, addr))
    throw std::invalid_argument("tcp bootstrap: rendezvous host '" + o_.host +
                                "' cannot be resolved to an IPv4 address");
  net::Fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd)
    throw BootstrapError("bootstrap: rank 0 cannot create a socket: " + net::errno_text(errno));
  int one = 1;
  ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr = addr;
  sa.sin_port = htons(static_cast<std::uint16_t>(o_.port));
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0 ||
      ::listen(fd.get(), SOMAXCONN) != 0)
    throw BootstrapError("bootstrap: rank 0 cannot listen on " + where_ + ": " +
                         net::errno_text(errno));
  listener_ = std::move(fd);
}

void TcpBootstrap::serve_connect() {
  const auto deadline = net::deadline_after(o_.timeout_s);
  peers_.resize(static_cast<std::size_t>(o_.size));
  int arrived = 0;
  detail::Admission admission(
      o_, [this](std::uint32_t r, std::uint32_t size) { return refusal(r, size); },
      [&](int r, net::Fd fd, std::string in) {
        peers_[static_cast<std::size_t>(r)].fd = std::move(fd);
        peers_[static_cast<std::size_t>(r)].in = std::move(in);
        ++arrived;
      });
  Clock::time_point listen_pause_until{};
  std::vector<pollfd> pfds;
  std::vector<int> ranks;  // the rank of each pfd after the listener's and before admission's
  while (arrived < o_.size - 1) {
    const auto now = Clock::now();
    if (now >= deadline) fail_missing_ranks();
    auto wake = admission.expire(now, deadline);
    pfds.clear();
    ranks.clear();
    const bool listening = now >= listen_pause_until;
    pfds.push_back({listening ? listener_.get() : -1, POLLIN, 0});
    if (!listening) wake = std::min(wake, listen_pause_until);
    for (int r = 1; r < o_.size; ++r)
      if (peers_[static_cast<std::size_t>(r)].fd) {
        pfds.push_back({peers_[static_cast<std::size_t>(r)].fd.get(), POLLIN, 0});
        ranks.push_back(r);
      }
    const std::size_t first_pending = pfds.size();
    admission.add_to(pfds);
    const int n = ::poll(pfds.data(), pfds.size(), net::ms_until(wake));
    if (n < 0 && errno != EINTR)
      fail("bootstrap: rank 0 cannot wait for connections: " + net::errno_text(errno), -1);
    if (n <= 0) continue;
    for (std::size_t k = 0; k < ranks.size(); ++k) {
      // An admitted rank has nothing to say before WELCOME; closing means it died.
      auto& peer = peers_[static_cast<std::size_t>(ranks[k])];
      if (pfds[k + 1].revents &&
          net::read_available(peer.fd.get(), peer.in) == net::IoStatus::closed)
        fail(disconnected(ranks[k]), ranks[k]);
    }
    admission.service(pfds.data() + first_pending);
    if (pfds[0].revents) accept_all(admission, listen_pause_until);
  }
  // Everyone is here: no one else may join. A connection still knocking (accepted, or in the
  // listen queue: a second process with some rank's COMPAS_RANK, typically) is told why, rather
  // than seeing rank 0 hang up on it.
  if (listen_pause_until <= Clock::now()) accept_all(admission, listen_pause_until);
  admission.reject_all("every rank 1.." + std::to_string(o_.size - 1) +
                       " of this job is already connected and the job formed (two processes " +
                       "with the same COMPAS_RANK?)");
  listener_.reset();
  send_welcome();
}

// Why rank `r` claiming a job of `size` cannot join, or "".
std::string TcpBootstrap::refusal(std::uint32_t r, std::uint32_t size) const {
  if (r == 0 || r >= static_cast<std::uint32_t>(o_.size))
    return "rank " + std::to_string(r) + " is out of range 1.." + std::to_string(o_.size - 1) +
           " of this job";
  if (size != static_cast<std::uint32_t>(o_.size))
    return "job size mismatch: this rank has COMPAS_SIZE=" + std::to_string(size) +
           ", rank 0 has " + std::to_string(o_.size);
  if (peers_[r].fd)
    return "rank " + std::to_string(r) + " is already connected (two processes with " +
           "COMPAS_RANK=" + std::to_string(r) + "?)";
  return {};
}

void TcpBootstrap::accept_all(detail::Admission& admission, Clock::time_point& pause_until) {
  for (;;) {
    const int c = ::accept4(listener_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (c < 0) {
      if (errno == EINTR || errno == ECONNABORTED || errno == EPROTO) continue;
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
        pause_until = Clock::now() + std::chrono::milliseconds(100);
      return;
    }
    admission.offer(net::Fd(c));
  }
}

void TcpBootstrap::fail_missing_ranks() {
  std::vector<int> missing;
  for (int r = 1; r < o_.size; ++r)
    if (!peers_[static_cast<std::size_t>(r)].fd) missing.push_back(r);
  fail("bootstrap: timed out after " + seconds_text(o_.timeout_s) + " s: " + rank_list(missing) +
           " never connected to " + where_,
       missing.front());
}

void TcpBootstrap::send_welcome() {
  const std::string welcome = wire::encode(FrameType::welcome, 0, {});
  const auto send_deadline = net::deadline_after(o_.timeout_s);
  for (int r = 1; r < o_.size; ++r) {
    const auto st =
        net::send_all(peers_[static_cast<std::size_t>(r)].fd.get(), welcome, send_deadline);
    if (st != net::IoStatus::ok) fail(disconnected(r), r);
  }
}

void TcpBootstrap::join() {
  const auto deadline = net::deadline_after(o_.timeout_s);
  in_addr addr{};
  if (!net::resolve_ipv4(o_.host, addr))
    throw std::invalid_argument("tcp bootstrap: rendezvous host '" + o_.host +
                                "' cannot be resolved to an IPv4 address");
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr = addr;
  sa.sin_port = htons(static_cast<std::uint16_t>(o_.port));
  peers_.resize(1);
  // Rank 0 may start after us, or drop us as BUSY while flooded: retry until the deadline,
  // backing off to 250 ms.
  int delay_ms = 10;
  for (;;) {
    peers_[0] = Peer{connect_to_rank0(sa, deadline), {}, false};
    if (handshake_with_rank0(deadline)) return;
    peers_[0] = Peer{};
    std::this_thread::sleep_for(
        std::chrono::milliseconds(std::min(delay_ms, net::ms_until(deadline))));
    delay_ms = std::min(delay_ms * 2, 250);
  }
}

net::Fd TcpBootstrap::connect_to_rank0(const sockaddr_in& sa, Clock::time_point deadline) {
  std::string last_error = "no attempt made";
  int delay_ms = 10;
  for (;;) {
    if (Clock::now() >= deadline)
      throw BootstrapError("bootstrap: timed out after " + seconds_text(o_.timeout_s) +
                               " s: rank " + std::to_string(o_.rank) +
                               " could not connect to rank 0 at " + where_ + " (" + last_error +
                               ")",
                           0);
    net::Fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!fd)
      throw BootstrapError("bootstrap: rank " + std::to_string(o_.rank) +
                           " cannot create a socket: " + net::errno_text(errno));
    if (connect_within(fd.get(), sa, deadline, last_error)) {
      net::set_nodelay(fd.get());
      return fd;
    }
    fd.reset();
    std::this_thread::sleep_for(
        std::chrono::milliseconds(std::min(delay_ms, net::ms_until(deadline))));
    delay_ms = std::min(delay_ms * 2, 250);
  }
}

// One connection attempt on a non-blocking socket; `error` says why it failed.
bool TcpBootstrap::connect_within(int fd, const sockaddr_in& sa, Clock::time_point deadline,
                                  std::string& error) {
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&sa), sizeof sa) == 0) return true;
  if (errno != EINPROGRESS) {
    error = net::errno_text(errno);
    return false;
  }
  pollfd p{fd, POLLOUT, 0};
  if (::poll(&p, 1, std::min(net::ms_until(deadline), 1000)) <= 0) {
    error = "connection attempt timed out";
    return false;
  }
  int err = 0;
  socklen_t len = sizeof err;
  ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
  if (err == 0) return true;
  error = net::errno_text(err);
  return false;
}

// HELLO, rank 0's CHALLENGE checked, PROOF, then the wait for WELCOME. False when rank 0 said
// BUSY (try again); throws on anything else that is not admission.
bool TcpBootstrap::handshake_with_rank0(Clock::time_point deadline) {
  const auto rank = static_cast<std::uint32_t>(o_.rank);
  const auto size = static_cast<std::uint32_t>(o_.size);
  const std::string nonce = handshake::fresh_nonce();
  const std::string hello =
      wire::encode(FrameType::hello, 0, wire::encode_hello({rank, size, nonce}));
  if (net::send_all(peers_[0].fd.get(), hello, deadline) != net::IoStatus::ok)
    fail(disconnected(0), 0);
  const auto verdict_deadline = deadline + std::chrono::duration_cast<Clock::duration>(
                                               std::chrono::duration<double>(kClientGraceS));
  const std::string timeout_message = "bootstrap: timed out after " + seconds_text(o_.timeout_s) +
                                      " s: rank " + std::to_string(o_.rank) +
                                      " connected to rank 0 at " + where_ +
                                      " but was not admitted (rank 0 hung?)";
  auto challenge = client_receive(verdict_deadline, timeout_message);
  if (challenge.type == FrameType::busy) return false;
  check_verdict(challenge, FrameType::challenge);
  const auto c = wire::decode_challenge(challenge.payload);
  if (!c || !handshake::proofs_equal(handshake::rank0_proof(o_.token, nonce, c->nonce), c->proof))
    fail_impostor("its proof of the token is wrong");
  const std::string proof = wire::encode(
      FrameType::proof, 0, handshake::joiner_proof(o_.token, c->nonce, nonce, rank, size));
  if (net::send_all(peers_[0].fd.get(), proof, deadline) != net::IoStatus::ok)
    fail(disconnected(0), 0);
  const auto verdict = client_receive(verdict_deadline, timeout_message);
  if (verdict.type == FrameType::busy) return false;
  check_verdict(verdict, FrameType::welcome);
  return true;
}

void TcpBootstrap::check_verdict(const wire::Frame& f, FrameType want) {
  if (f.type == FrameType::reject)
    fail("bootstrap: rank 0 at " + where_ + " rejected rank " + std::to_string(o_.rank) + ": " +
             f.payload,
         -1);
  if (f.type == want) return;
  if (want == FrameType::challenge)
    fail_impostor(std::string("it answered with ") + wire::to_string(f.type) +
                  " instead of a challenge");
  fail(std::string("bootstrap: protocol error: expected ") + wire::to_string(want) +
           " from rank 0 at " + where_ + ", got " + wire::to_string(f.type),
       0);
}

void TcpBootstrap::fail_impostor(const std::string& how) {
  // Both sides prove the token, so a rank cannot tell a listener that is not its rank 0 from a
  // rank 0 given another token: it names both. It has not sent its token either way.
  fail("bootstrap: the process listening at " + where_ + " did not prove it knows the job token (" +
           how + "): COMPAS_JOB_TOKEN differs from " +
           "rank 0's, or that process is not this job's rank 0 (another job on the same port?)",
       0);
}

wire::Frame TcpBootstrap::client_receive(Clock::time_point deadline,
                                         const std::string& timeout_message) {
  auto& p = peers_[0];
  for (;;) {
    auto res = wire::parse_frame(p.in, o_.max_frame_bytes + 4);  // + a gather part's rank
    if (res.status == wire::ParseStatus::ok) {
      p.in.erase(0, res.consumed);
      if (res.frame.type == FrameType::abort) {
        const auto a = wire::decode_abort(res.frame.payload);
        if (!a) fail("bootstrap: rank 0 ended the job with a malformed abort frame", 0);
        fail(a->message, a->culprit == wire::kNoRank ? -1 : static_cast<int>(a->culprit));
      }
      return std::move(res.frame);
    }
    if (res.status == wire::ParseStatus::error)
      fail("bootstrap: bad frame from rank 0 at " + where_ + ": " + res.error, 0);
    if (p.eof) fail(disconnected(0), 0);
    pollfd pfd{p.fd.get(), POLLIN, 0};
    const int n = ::poll(&pfd, 1, net::ms_until(deadline));
    if (n == 0) fail(timeout_message, 0);
    if (n < 0 && errno != EINTR)
      fail("bootstrap: rank " + std::to_string(o_.rank) +
               " cannot wait for rank 0: " + net::errno_text(errno),
           -1);
    if (n > 0 && net::read_available(p.fd.get(), p.in) == net::IoStatus::closed) p.eof = true;
  }
}

std::unique_ptr<Bootstrap> make_tcp_bootstrap(const TcpOptions& options) {
  return std::make_unique<TcpBootstrap>(options);
}
}  // namespace detail

}  // namespace compas::comm

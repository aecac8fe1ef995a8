// The tcp bootstrap: rank 0 is a rendezvous server, every other rank one client of it.
//
// Connect phase: rank 0 listens (or adopts the launcher's listening socket) and multiplexes with
// poll() over the listener, the connections that have not yet said who they are, and the admitted
// ranks. A connection must send HELLO (rank, size, job token) as its first frame within
// hello_timeout_s, or it is dropped; a wrong token, a rank out of range, a size that differs or a
// rank already present is rejected (REJECT frame, close), and none of that affects the job. When
// every rank is in, rank 0 closes the listener and sends WELCOME to all. Until then clients wait.
//
// Collectives: each rank numbers its collectives 1, 2, ...; a client sends BARRIER or GATHER
// tagged with the number, rank 0 waits for all of them (poll again, so a rank that dies is seen at
// once), checks that everyone called the same collective, and replies BARRIER_DONE or one
// GATHER_PART per rank. Any failure seen by rank 0 (a closed connection, a protocol error, a
// timeout) is sent as ABORT to every other rank before rank 0 throws, so all ranks fail with the
// same message. A client that loses rank 0 fails naming rank 0.
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <mutex>
#include <thread>

#include "bootstrap_impl.hpp"
#include "handshake.hpp"
#include "net.hpp"
#include "tcp_admission.hpp"

namespace compas::comm {

namespace {

using net::Clock;
using wire::FrameType;

// A client waits this much longer than its own timeout for rank 0's verdict, so that the message
// naming the culprit, which only rank 0 knows, arrives before the client gives up on its own.
constexpr double kClientGraceS = 2.0;

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", s);
  return buf;
}

// "rank 2", "ranks 2, 3", "ranks 2, 3, 4, 5, 6, 7, 8, 9, ... (12 in all)"
std::string rank_list(const std::vector<int>& ranks) {
  std::string out = ranks.size() == 1 ? "rank " : "ranks ";
  const std::size_t shown = std::min<std::size_t>(ranks.size(), 8);
  for (std::size_t i = 0; i < shown; ++i) {
    if (i) out += ", ";
    out += std::to_string(ranks[i]);
  }
  if (shown < ranks.size()) out += ", ... (" + std::to_string(ranks.size()) + " in all)";
  return out;
}

const char* op_name(FrameType t) {
  return t == FrameType::barrier ? "barrier" : "allgather";
}

class TcpBootstrap final : public Bootstrap {
 public:
  explicit TcpBootstrap(const TcpOptions& options);
  ~TcpBootstrap() override;

  int rank() const override { return o_.rank; }
  int size() const override { return o_.size; }
  std::string kind() const override { return "tcp"; }
  std::vector<std::string> allgather(const std::string& mine) override;
  void barrier() override;

 private:
  struct Peer {
    net::Fd fd;
    std::string in;  // received, not yet parsed
    bool eof = false;
  };

  void listen_or_adopt();
  void serve_connect();
  std::string refusal(std::uint32_t r, std::uint32_t size) const;
  void accept_all(detail::Admission& admission, Clock::time_point& pause_until);
  [[noreturn]] void fail_missing_ranks();
  void send_welcome();
  std::vector<std::string> serve_collective(FrameType type, const std::string& mine);
  void join();
  net::Fd connect_to_rank0(const sockaddr_in& sa, Clock::time_point deadline);
  static bool connect_within(int fd, const sockaddr_in& sa, Clock::time_point deadline,
                             std::string& error);
  bool handshake_with_rank0(Clock::time_point deadline);
  void check_verdict(const wire::Frame& f, FrameType want);
  [[noreturn]] void fail_impostor(const std::string& how);
  std::vector<std::string> client_collective(FrameType type, const std::string& mine);
  wire::Frame client_receive(Clock::time_point deadline, const std::string& timeout_message);
  std::vector<std::string> collective(FrameType type, const std::string& mine);

  [[noreturn]] void fail(const std::string& message, int culprit);
  std::string disconnected(int r) const {
    return "bootstrap: rank " + std::to_string(r) + " disconnected (process died?)";
  }

  TcpOptions o_;
  std::string where_;  // rank 0's address, for messages
  net::Fd listener_;
  std::vector<Peer> peers_;  // rank 0: indexed by rank (entry 0 unused); others: [0] is rank 0
  std::uint32_t seq_ = 0;    // number of the last collective
  std::mutex mu_;
  std::string failed_;  // once the job has failed, every later call throws this again
  int failed_rank_ = -1;
};

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
  // Everyone is here: no one else may join.
  listener_.reset();
  admission.clear();
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

std::vector<std::string> TcpBootstrap::client_collective(FrameType type, const std::string& mine) {
  const auto seq = ++seq_;
  const std::string what =
      std::string(op_name(type)) + " (collective #" + std::to_string(seq) + ")";
  const auto deadline = net::deadline_after(o_.timeout_s);
  const std::string frame =
      wire::encode(type, seq, type == FrameType::gather ? std::string_view(mine) : "");
  const auto st = net::send_all(peers_[0].fd.get(), frame, deadline);
  if (st == net::IoStatus::closed) fail(disconnected(0), 0);
  if (st == net::IoStatus::timeout)
    fail("bootstrap: timed out after " + seconds_text(o_.timeout_s) + " s in " + what +
             ": rank 0 at " + where_ + " does not read (hung?)",
         0);
  const auto reply_deadline = deadline + std::chrono::duration_cast<Clock::duration>(
                                             std::chrono::duration<double>(kClientGraceS));
  const std::string timeout_message = "bootstrap: timed out after " + seconds_text(o_.timeout_s) +
                                      " s in " + what + ": no reply from rank 0 at " + where_;
  auto expect = [&](FrameType want) {
    auto f = client_receive(reply_deadline, timeout_message);
    if (f.type == FrameType::bye)
      fail("bootstrap: rank 0 closed its bootstrap while rank " + std::to_string(o_.rank) +
               " was in " + what + " (a collective called on some ranks only?)",
           0);
    if (f.type != want || f.seq != seq)
      fail(std::string("bootstrap: protocol error in ") + what + ": expected " +
               wire::to_string(want) + " #" + std::to_string(seq) + " from rank 0, got " +
               wire::to_string(f.type) + " #" + std::to_string(f.seq),
           0);
    return f;
  };
  if (type == FrameType::barrier) {
    expect(FrameType::barrier_done);
    return {};
  }
  std::vector<std::string> all(static_cast<std::size_t>(o_.size));
  for (int k = 0; k < o_.size; ++k) {
    auto f = expect(FrameType::gather_part);
    std::string why;
    auto part = wire::decode_gather_part(f.payload, &why);
    if (!part || part->rank != static_cast<std::uint32_t>(k))
      fail("bootstrap: protocol error in " + what + ": bad part " + std::to_string(k) +
               " from rank 0" + (why.empty() ? "" : ": " + why),
           0);
    all[static_cast<std::size_t>(k)] = std::move(part->blob);
  }
  return all;
}

std::vector<std::string> TcpBootstrap::serve_collective(FrameType type, const std::string& mine) {
  const auto seq = ++seq_;
  const std::string what =
      std::string(op_name(type)) + " (collective #" + std::to_string(seq) + ")";
  const auto deadline = net::deadline_after(o_.timeout_s);
  const auto size = static_cast<std::size_t>(o_.size);
  std::vector<std::string> blobs(size);
  std::vector<char> got(size, 0);
  blobs[0] = mine;
  got[0] = 1;
  std::size_t count = 1;

  // Takes rank r's contribution from its buffer when complete; anything else fails the job.
  auto take = [&](std::size_t r) {
    auto& p = peers_[r];
    if (got[r]) return;
    auto res = wire::parse_frame(p.in, o_.max_frame_bytes);
    const int rr = static_cast<int>(r);
    const std::string who = "rank " + std::to_string(r);
    if (res.status == wire::ParseStatus::need_more) return;
    if (res.status == wire::ParseStatus::error)
      fail("bootstrap: bad frame from " + who + ": " + res.error, rr);
    p.in.erase(0, res.consumed);
    const auto& f = res.frame;
    if (f.type == FrameType::bye)
      fail("bootstrap: " + who + " closed its bootstrap while rank 0 was in " + what +
               " (a collective called on some ranks only?)",
           rr);
    if (f.type != FrameType::barrier && f.type != FrameType::gather)
      fail(std::string("bootstrap: protocol error: unexpected ") + wire::to_string(f.type) +
               " frame from " + who + " in " + what,
           rr);
    if (f.type != type)
      fail("bootstrap: collective mismatch: " + who + " called " + op_name(f.type) +
               " while rank 0 called " + op_name(type) + " (collective #" + std::to_string(seq) +
               ")",
           rr);
    if (f.seq != seq)
      fail("bootstrap: collective mismatch: " + who + " is at collective #" +
               std::to_string(f.seq) + ", rank 0 at #" + std::to_string(seq),
           rr);
    blobs[r] = std::move(res.frame.payload);
    got[r] = 1;
    ++count;
  };

  for (std::size_t r = 1; r < size; ++r) take(r);
  std::vector<pollfd> pfds(size - 1);
  while (count < size) {
    if (Clock::now() >= deadline) {
      std::vector<int> missing;
      for (std::size_t r = 1; r < size; ++r)
        if (!got[r]) missing.push_back(static_cast<int>(r));
      fail("bootstrap: timed out after " + seconds_text(o_.timeout_s) + " s in " + what + ": " +
               rank_list(missing) + " did not enter it",
           missing.front());
    }
    for (std::size_t r = 1; r < size; ++r) pfds[r - 1] = {peers_[r].fd.get(), POLLIN, 0};
    const int n = ::poll(pfds.data(), pfds.size(), net::ms_until(deadline));
    if (n < 0 && errno != EINTR)
      fail("bootstrap: rank 0 cannot wait for the other ranks: " + net::errno_text(errno), -1);
    if (n <= 0) continue;
    for (std::size_t r = 1; r < size; ++r) {
      if (!pfds[r - 1].revents) continue;
      const auto st = net::read_available(peers_[r].fd.get(), peers_[r].in);
      take(r);
      // A rank that closes now, before or after its contribution, cannot receive the result.
      if (st == net::IoStatus::closed) fail(disconnected(static_cast<int>(r)), static_cast<int>(r));
    }
  }

  std::string reply;
  if (type == FrameType::barrier) {
    reply = wire::encode(FrameType::barrier_done, seq, {});
  } else {
    for (std::size_t k = 0; k < size; ++k)
      reply += wire::encode(FrameType::gather_part, seq,
                            wire::encode_gather_part(static_cast<std::uint32_t>(k), blobs[k]));
  }
  const auto send_deadline = net::deadline_after(o_.timeout_s);
  for (std::size_t r = 1; r < size; ++r) {
    const auto st = net::send_all(peers_[r].fd.get(), reply, send_deadline);
    if (st == net::IoStatus::closed) fail(disconnected(static_cast<int>(r)), static_cast<int>(r));
    if (st == net::IoStatus::timeout)
      fail("bootstrap: timed out after " + seconds_text(o_.timeout_s) +
               " s sending the result of " + what + " to rank " + std::to_string(r) +
               " (not reading?)",
           static_cast<int>(r));
  }
  return blobs;
}

std::vector<std::string> TcpBootstrap::collective(FrameType type, const std::string& mine) {
  std::lock_guard lock(mu_);
  if (!failed_.empty()) throw BootstrapError(failed_, failed_rank_);
  if (mine.size() > o_.max_frame_bytes)
    throw std::invalid_argument("allgather: blob of " + std::to_string(mine.size()) +
                                " bytes exceeds the bootstrap frame limit of " +
                                std::to_string(o_.max_frame_bytes) +
                                " bytes (COMPAS_BOOTSTRAP_MAX_FRAME)");
  if (o_.size == 1) {
    ++seq_;
    if (type == FrameType::barrier) return {};
    return {mine};
  }
  return o_.rank == 0 ? serve_collective(type, mine) : client_collective(type, mine);
}

std::vector<std::string> TcpBootstrap::allgather(const std::string& mine) {
  return collective(FrameType::gather, mine);
}

void TcpBootstrap::barrier() {
  collective(FrameType::barrier, {});
}

}  // namespace

namespace detail {
std::unique_ptr<Bootstrap> make_tcp_bootstrap(const TcpOptions& options) {
  return std::make_unique<TcpBootstrap>(options);
}
}  // namespace detail

}  // namespace compas::comm

// The handshake rank 0 runs with each connection before it becomes a rank of the job.
#include "tcp_admission.hpp"

#include <sys/socket.h>

#include <algorithm>

#include "handshake.hpp"
#include "wire.hpp"

namespace compas::comm::detail {

using net::Clock;
using wire::FrameType;

Admission::Admission(const TcpOptions& options, Vet vet, Admit admit)
    : o_(options), vet_(std::move(vet)), admit_(std::move(admit)) {}

void Admission::offer(net::Fd fd) {
  if (pending_.size() >= kMaxPending) evict_one();
  const auto hello_time = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(std::max(o_.hello_timeout_s, 0.001)));
  Pending p;
  p.fd = std::move(fd);
  p.deadline = Clock::now() + hello_time;
  pending_.push_back(std::move(p));
  read_and_examine(pending_.back());
  if (!pending_.back().fd) pending_.pop_back();
}

void Admission::evict_one() {
  auto victim = std::find_if(pending_.begin(), pending_.end(),
                             [](const Pending& p) { return !p.challenged; });
  if (victim == pending_.end()) victim = pending_.begin();
  busy(*victim);
  pending_.erase(victim);
}

Clock::time_point Admission::expire(Clock::time_point now, Clock::time_point later) {
  for (auto& p : pending_)
    if (p.fd && p.deadline <= now) busy(p);
  std::erase_if(pending_, [](const Pending& p) { return !p.fd; });
  for (const auto& p : pending_) later = std::min(later, p.deadline);
  return later;
}

void Admission::add_to(std::vector<pollfd>& pfds) const {
  for (const auto& p : pending_) pfds.push_back({p.fd.get(), POLLIN, 0});
}

void Admission::service(const pollfd* entries) {
  for (std::size_t i = 0; i < pending_.size(); ++i)
    if (entries[i].revents) read_and_examine(pending_[i]);
  std::erase_if(pending_, [](const Pending& p) { return !p.fd; });
}

void Admission::read_and_examine(Pending& p) {
  // Nothing before admission is longer than a HELLO or a PROOF: more is not a rank.
  const auto st = net::read_available(p.fd.get(), p.in, wire::kMaxHelloPayloadBytes * 2);
  examine(p);
  if (p.fd && st == net::IoStatus::closed) p.fd.reset();  // left before it was admitted
}

// Looks at what a connection has sent: nothing complete yet, the next step of its handshake, or
// anything else to reject.
void Admission::examine(Pending& p) {
  while (p.fd) {
    auto res = wire::parse_frame(p.in, wire::kMaxHelloPayloadBytes);
    if (res.status == wire::ParseStatus::need_more) return;
    if (res.status == wire::ParseStatus::error) return reject(p, "bad frame: " + res.error);
    p.in.erase(0, res.consumed);
    const FrameType want = p.challenged ? FrameType::proof : FrameType::hello;
    if (res.frame.type != want)
      return reject(p, std::string("expected ") + wire::to_string(want) + ", not " +
                           wire::to_string(res.frame.type));
    if (p.challenged) return on_proof(p, res.frame.payload);
    on_hello(p, res.frame.payload);
  }
}

void Admission::on_hello(Pending& p, const std::string& payload) {
  std::string why;
  const auto hello = wire::decode_hello(payload, &why);
  if (!hello) return reject(p, why);
  p.rank = hello->rank;
  p.size = hello->size;
  p.joiner_nonce = hello->nonce;
  p.rank0_nonce = handshake::fresh_nonce();
  const std::string challenge = wire::encode(
      FrameType::challenge, 0,
      wire::encode_challenge(
          {p.rank0_nonce, handshake::rank0_proof(o_.token, p.joiner_nonce, p.rank0_nonce)}));
  if (!net::send_now(p.fd.get(), challenge)) return p.fd.reset();
  p.challenged = true;
}

void Admission::on_proof(Pending& p, const std::string& payload) {
  std::string why;
  const auto proof = wire::decode_proof(payload, &why);
  if (!proof) return reject(p, why);
  const auto expected =
      handshake::joiner_proof(o_.token, p.rank0_nonce, p.joiner_nonce, p.rank, p.size);
  if (!handshake::proofs_equal(expected, *proof))
    return reject(p, "wrong job token (COMPAS_JOB_TOKEN differs from rank 0's)");
  if (const auto refusal = vet_(p.rank, p.size); !refusal.empty()) return reject(p, refusal);
  net::set_nodelay(p.fd.get());
  admit_(static_cast<int>(p.rank), std::move(p.fd), std::move(p.in));
}

void Admission::reject_all(const std::string& reason) {
  for (auto& p : pending_)
    if (p.fd) reject(p, reason);
  pending_.clear();
}

void Admission::reject(Pending& p, const std::string& reason) {
  net::send_now(p.fd.get(), wire::encode(FrameType::reject, 0, reason));
  ::shutdown(p.fd.get(), SHUT_WR);
  net::drain(p.fd.get());
  p.fd.reset();
}

void Admission::busy(Pending& p) {
  net::send_now(p.fd.get(), wire::encode(FrameType::busy, 0, "too many connections pending"));
  // FIN, not RST: a rank must read the BUSY to know it should try again.
  ::shutdown(p.fd.get(), SHUT_WR);
  net::drain(p.fd.get());
  p.fd.reset();
}

}  // namespace compas::comm::detail

// The tcp bootstrap's collectives (the protocol: bootstrap_tcp.cpp's header comment): a client
// sends its numbered BARRIER or GATHER to rank 0 and waits for the reply; rank 0 gathers every
// rank's, checks they called the same collective, and replies, or sends ABORT to all.
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <mutex>

#include "bootstrap_tcp.hpp"

namespace compas::comm::detail {

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

}  // namespace compas::comm::detail

// Rank 0's side of joining a tcp job: the connections that have not yet proven they belong to it.
//
// A connection sends HELLO (rank, size, nonce); rank 0 answers CHALLENGE (its nonce and its proof
// of the token); the connection answers PROOF. Only then are rank and size looked at, so a peer
// without the token learns nothing about the job. The whole exchange must end within the hello
// timeout.
//
// At most kMaxPending connections wait at once. When another arrives, one is dropped with BUSY
// (a real rank then connects again): first the oldest that has not yet sent a whole HELLO, else
// the oldest still owing its PROOF. A new connection is read at once, and a real rank sends its
// HELLO as soon as it connects, so a flood of connections that never speak cannot push it out;
// one that speaks but cannot prove the token holds a slot for one round trip at most.
#pragma once

#include <poll.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "compas/comm/bootstrap.hpp"
#include "net.hpp"

namespace compas::comm::detail {

class Admission {
 public:
  static constexpr std::size_t kMaxPending = 256;

  // Says why `rank` of a job of `size` cannot join (out of range, size mismatch, already there),
  // or "" when it may.
  using Vet = std::function<std::string(std::uint32_t rank, std::uint32_t size)>;
  // Takes an admitted rank's connection and what it sent after its PROOF.
  using Admit = std::function<void(int rank, net::Fd fd, std::string in)>;

  Admission(const TcpOptions& options, Vet vet, Admit admit);

  // A connection just accepted.
  void offer(net::Fd fd);
  // Drops connections whose hello timeout has passed; returns the earliest deadline left (or
  // `later` when none is earlier).
  net::Clock::time_point expire(net::Clock::time_point now, net::Clock::time_point later);
  // Adds one entry per waiting connection to `pfds`; after poll(), service() those entries.
  void add_to(std::vector<pollfd>& pfds) const;
  void service(const pollfd* entries);
  std::size_t pending() const { return pending_.size(); }
  // Rejects every connection still waiting, with `reason` (the job formed without them).
  void reject_all(const std::string& reason);

 private:
  struct Pending {
    net::Fd fd;
    std::string in;
    net::Clock::time_point deadline;
    bool challenged = false;  // HELLO received, CHALLENGE sent, PROOF owed
    std::uint32_t rank = 0, size = 0;
    std::string joiner_nonce, rank0_nonce;
  };

  void read_and_examine(Pending& p);
  void examine(Pending& p);
  void on_hello(Pending& p, const std::string& payload);
  void on_proof(Pending& p, const std::string& payload);
  void evict_one();
  static void reject(Pending& p, const std::string& reason);
  static void busy(Pending& p);

  const TcpOptions& o_;
  Vet vet_;
  Admit admit_;
  std::vector<Pending> pending_;  // in order of arrival
};

}  // namespace compas::comm::detail

// The tcp bootstrap's mutual proof of the job token. Neither side sends the token: each proves it
// knows it with an HMAC-SHA256 keyed by the token over both sides' fresh nonces, with a label per
// role so that one side's proof can never be replayed as the other's. Rank 0 proves first, over
// the joining rank's nonce, so whatever listens on the rendezvous port learns nothing usable and
// a rank never believes a listener that cannot prove the token.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "wire.hpp"

namespace compas::comm::handshake {

using wire::kNonceBytes;
using wire::kProofBytes;
// Shorter tokens could be guessed from a recorded handshake by trying them all.
inline constexpr std::size_t kMinTokenBytes = 16;

// HMAC-SHA256 (RFC 2104) of `message` keyed by `key`: kProofBytes.
std::string hmac_sha256(std::string_view key, std::string_view message);

// kNonceBytes from the kernel's random source; throws std::runtime_error if it fails.
std::string fresh_nonce();

// Rank 0's answer to a joining rank's HELLO.
std::string rank0_proof(std::string_view token, std::string_view joiner_nonce,
                        std::string_view rank0_nonce);

// A joining rank's answer to rank 0's challenge; binds the rank and size it claimed.
std::string joiner_proof(std::string_view token, std::string_view rank0_nonce,
                         std::string_view joiner_nonce, std::uint32_t rank, std::uint32_t size);

// Compares in time that does not depend on where the proofs differ.
bool proofs_equal(std::string_view expected, std::string_view presented);

}  // namespace compas::comm::handshake

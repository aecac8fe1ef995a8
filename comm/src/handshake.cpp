// HMAC-SHA256 proofs of the job token (libcrypto) and nonces from getrandom().
#include "handshake.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <sys/random.h>

#include <cerrno>
#include <stdexcept>

namespace compas::comm::handshake {

namespace {

void put32(std::string& out, std::uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8)
    out.push_back(static_cast<char>((v >> shift) & 0xff));
}

}  // namespace

std::string hmac_sha256(std::string_view key, std::string_view message) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (!HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
            reinterpret_cast<const unsigned char*>(message.data()), message.size(), digest,
            &length) ||
      length != kProofBytes)
    throw std::runtime_error("bootstrap: HMAC-SHA256 of the job token failed (libcrypto)");
  return std::string(reinterpret_cast<const char*>(digest), length);
}

std::string fresh_nonce() {
  std::string nonce(kNonceBytes, '\0');
  std::size_t got = 0;
  while (got < nonce.size()) {
    const ssize_t n = ::getrandom(nonce.data() + got, nonce.size() - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw std::runtime_error("bootstrap: cannot read random bytes for a nonce");
    got += static_cast<std::size_t>(n);
  }
  return nonce;
}

std::string rank0_proof(std::string_view token, std::string_view joiner_nonce,
                        std::string_view rank0_nonce) {
  std::string message = "compas bootstrap: rank 0";
  message.append(joiner_nonce).append(rank0_nonce);
  return hmac_sha256(token, message);
}

std::string joiner_proof(std::string_view token, std::string_view rank0_nonce,
                         std::string_view joiner_nonce, std::uint32_t rank, std::uint32_t size) {
  std::string message = "compas bootstrap: joining rank";
  message.append(rank0_nonce).append(joiner_nonce);
  put32(message, rank);
  put32(message, size);
  return hmac_sha256(token, message);
}

bool proofs_equal(std::string_view expected, std::string_view presented) {
  return expected.size() == presented.size() &&
         CRYPTO_memcmp(expected.data(), presented.data(), expected.size()) == 0;
}

}  // namespace compas::comm::handshake

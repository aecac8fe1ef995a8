// libFuzzer target: the bootstrap's frame parser and payload decoders on arbitrary bytes (what
// a stranger may send to the rendezvous port). Checks, beyond "no crash": a parsed frame never
// claims more bytes than it was given, re-encodes to exactly the bytes it was parsed from, and
// decode_frame agrees with parse_frame; decoded payloads re-encode to what they came from.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "wire.hpp"

namespace wire = compas::comm::wire;

#define CHECK(cond)                                             \
  do {                                                          \
    if (!(cond)) {                                              \
      __builtin_printf("fuzz_wire: check failed: %s\n", #cond); \
      std::abort();                                             \
    }                                                           \
  } while (0)

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  // A small payload bound, so oversized frames are exercised too.
  for (std::size_t limit : {std::size_t{64}, wire::kMaxHelloPayloadBytes}) {
    const auto r = wire::parse_frame(bytes, limit);
    if (r.status == wire::ParseStatus::ok) {
      CHECK(r.consumed <= size);
      CHECK(r.consumed == wire::kHeaderBytes + r.frame.payload.size());
      CHECK(r.frame.payload.size() <= limit);
      CHECK(wire::encode(r.frame) == bytes.substr(0, r.consumed));
      const auto whole = wire::decode_frame(bytes.substr(0, r.consumed), limit);
      CHECK(whole.status == wire::ParseStatus::ok);
      CHECK(whole.frame.payload == r.frame.payload);
    } else if (r.status == wire::ParseStatus::error) {
      CHECK(!r.error.empty());
    } else {
      CHECK(wire::decode_frame(bytes, limit).status != wire::ParseStatus::ok);
    }
  }
  std::string error;
  if (auto h = wire::decode_hello(bytes, &error)) {
    CHECK(h->nonce.size() == wire::kNonceBytes);
    const auto again = wire::decode_hello(wire::encode_hello(*h));
    CHECK(again && again->rank == h->rank && again->size == h->size && again->nonce == h->nonce);
  }
  if (auto c = wire::decode_challenge(bytes, &error)) {
    const auto again = wire::decode_challenge(wire::encode_challenge(*c));
    CHECK(again && again->nonce == c->nonce && again->proof == c->proof);
  }
  if (auto p = wire::decode_proof(bytes, &error)) CHECK(p->size() == wire::kProofBytes);
  if (auto g = wire::decode_gather_part(bytes, &error)) {
    const auto again = wire::decode_gather_part(wire::encode_gather_part(g->rank, g->blob));
    CHECK(again && again->rank == g->rank && again->blob == g->blob);
  }
  if (auto a = wire::decode_abort(bytes, &error)) {
    const auto again = wire::decode_abort(wire::encode_abort(*a));
    CHECK(again && again->culprit == a->culprit && again->message == a->message);
  }
  return 0;
}

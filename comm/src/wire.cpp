// Frame encoding and the bounded, allocation-light parser of the bootstrap protocol.
#include "wire.hpp"

#include <limits>
#include <stdexcept>

namespace compas::comm::wire {

namespace {

void put16(std::string& out, std::uint16_t v) {
  out.push_back(static_cast<char>(v >> 8));
  out.push_back(static_cast<char>(v & 0xff));
}

void put32(std::string& out, std::uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8)
    out.push_back(static_cast<char>((v >> shift) & 0xff));
}

std::uint16_t get16(std::string_view b, std::size_t at) {
  return static_cast<std::uint16_t>((static_cast<unsigned char>(b[at]) << 8) |
                                    static_cast<unsigned char>(b[at + 1]));
}

std::uint32_t get32(std::string_view b, std::size_t at) {
  std::uint32_t v = 0;
  for (std::size_t i = 0; i < 4; ++i) v = (v << 8) | static_cast<unsigned char>(b[at + i]);
  return v;
}

ParseResult failure(std::string what) {
  ParseResult r;
  r.status = ParseStatus::error;
  r.error = std::move(what);
  return r;
}

void set_error(std::string* error, std::string what) {
  if (error) *error = std::move(what);
}

}  // namespace

const char* to_string(FrameType type) {
  switch (type) {
    case FrameType::hello:
      return "hello";
    case FrameType::welcome:
      return "welcome";
    case FrameType::reject:
      return "reject";
    case FrameType::abort:
      return "abort";
    case FrameType::barrier:
      return "barrier";
    case FrameType::barrier_done:
      return "barrier_done";
    case FrameType::gather:
      return "gather";
    case FrameType::gather_part:
      return "gather_part";
    case FrameType::bye:
      return "bye";
    case FrameType::challenge:
      return "challenge";
    case FrameType::proof:
      return "proof";
    case FrameType::busy:
      return "busy";
  }
  return "unknown";
}

std::string encode(FrameType type, std::uint32_t seq, std::string_view payload) {
  if (payload.size() > std::numeric_limits<std::uint32_t>::max())
    throw std::length_error("bootstrap frame payload of " + std::to_string(payload.size()) +
                            " bytes exceeds the protocol's 4 GiB limit");
  std::string out;
  out.reserve(kHeaderBytes + payload.size());
  out.append(kMagic, sizeof kMagic);
  put16(out, kVersion);
  put16(out, static_cast<std::uint16_t>(type));
  put32(out, seq);
  put32(out, static_cast<std::uint32_t>(payload.size()));
  out.append(payload);
  return out;
}

ParseResult parse_frame(std::string_view b, std::size_t max_payload_bytes) {
  // Check each header field as soon as its bytes are there: garbage is rejected at once, without
  // waiting for 16 bytes that may never come.
  for (std::size_t i = 0; i < sizeof kMagic && i < b.size(); ++i)
    if (b[i] != kMagic[i]) return failure("bad magic: not a compas bootstrap frame");
  if (b.size() >= 6) {
    const std::uint16_t version = get16(b, 4);
    if (version != kVersion)
      return failure("unsupported protocol version " + std::to_string(version) +
                     " (this side speaks version " + std::to_string(kVersion) + ")");
  }
  if (b.size() >= 8) {
    const std::uint16_t type = get16(b, 6);
    if (type < 1 || type > kMaxFrameType)
      return failure("unknown frame type " + std::to_string(type));
  }
  if (b.size() < kHeaderBytes) return {};
  const std::uint32_t length = get32(b, 12);
  if (length > max_payload_bytes)
    return failure("frame payload of " + std::to_string(length) + " bytes exceeds the limit of " +
                   std::to_string(max_payload_bytes) + " bytes");
  if (b.size() - kHeaderBytes < length) return {};
  ParseResult r;
  r.status = ParseStatus::ok;
  r.frame.type = static_cast<FrameType>(get16(b, 6));
  r.frame.seq = get32(b, 8);
  r.frame.payload.assign(b.substr(kHeaderBytes, length));
  r.consumed = kHeaderBytes + length;
  return r;
}

ParseResult decode_frame(std::string_view message, std::size_t max_payload_bytes) {
  ParseResult r = parse_frame(message, max_payload_bytes);
  if (r.status == ParseStatus::need_more) {
    std::string what = "truncated frame: " + std::to_string(message.size()) + " bytes";
    if (message.size() >= kHeaderBytes)
      what += " of " + std::to_string(kHeaderBytes + get32(message, 12));
    else
      what += ", shorter than the " + std::to_string(kHeaderBytes) + "-byte header";
    return failure(what);
  }
  if (r.status == ParseStatus::ok && r.consumed != message.size())
    return failure(std::to_string(message.size() - r.consumed) +
                   " unexpected bytes after the frame");
  return r;
}

std::string encode_hello(const Hello& hello) {
  std::string out;
  put32(out, hello.rank);
  put32(out, hello.size);
  out.append(hello.nonce);
  return out;
}

std::optional<Hello> decode_hello(std::string_view payload, std::string* error) {
  if (payload.size() != 8 + kNonceBytes) {
    set_error(error, "HELLO payload of " + std::to_string(payload.size()) + " bytes, not " +
                         std::to_string(8 + kNonceBytes) + " (rank, size, nonce)");
    return std::nullopt;
  }
  Hello h;
  h.rank = get32(payload, 0);
  h.size = get32(payload, 4);
  h.nonce.assign(payload.substr(8));
  return h;
}

std::string encode_challenge(const Challenge& challenge) {
  return challenge.nonce + challenge.proof;
}

std::optional<Challenge> decode_challenge(std::string_view payload, std::string* error) {
  if (payload.size() != kNonceBytes + kProofBytes) {
    set_error(error, "CHALLENGE payload of " + std::to_string(payload.size()) + " bytes, not " +
                         std::to_string(kNonceBytes + kProofBytes) + " (nonce, proof)");
    return std::nullopt;
  }
  return Challenge{std::string(payload.substr(0, kNonceBytes)),
                   std::string(payload.substr(kNonceBytes))};
}

std::optional<std::string> decode_proof(std::string_view payload, std::string* error) {
  if (payload.size() != kProofBytes) {
    set_error(error, "PROOF payload of " + std::to_string(payload.size()) + " bytes, not " +
                         std::to_string(kProofBytes));
    return std::nullopt;
  }
  return std::string(payload);
}

std::string encode_gather_part(std::uint32_t rank, std::string_view blob) {
  std::string out;
  out.reserve(4 + blob.size());
  put32(out, rank);
  out.append(blob);
  return out;
}

std::optional<GatherPart> decode_gather_part(std::string_view payload, std::string* error) {
  if (payload.size() < 4) {
    set_error(error, "GATHER_PART payload of " + std::to_string(payload.size()) +
                         " bytes is shorter than 4 (rank)");
    return std::nullopt;
  }
  GatherPart p;
  p.rank = get32(payload, 0);
  p.blob.assign(payload.substr(4));
  return p;
}

std::string encode_abort(const Abort& abort) {
  std::string out;
  put32(out, abort.culprit);
  out.append(abort.message);
  return out;
}

std::optional<Abort> decode_abort(std::string_view payload, std::string* error) {
  if (payload.size() < 4) {
    set_error(error, "ABORT payload of " + std::to_string(payload.size()) +
                         " bytes is shorter than 4 (culprit rank)");
    return std::nullopt;
  }
  Abort a;
  a.culprit = get32(payload, 0);
  a.message.assign(payload.substr(4));
  return a;
}

}  // namespace compas::comm::wire

// wire: the frames of the TCP bootstrap protocol. Every message between rank 0 and another rank
// is one frame: a 16-byte header (magic "CMPS", version, type, collective number, payload
// length; big-endian) and a payload of bounded length. parse_frame() is a pure function of a
// byte buffer: it never reads outside it, never trusts a length before checking it against the
// limit, and reports garbage as an error as early as the bytes allow, so it can be fuzzed alone.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "compas/comm/bootstrap.hpp"

namespace compas::comm::wire {

inline constexpr char kMagic[4] = {'C', 'M', 'P', 'S'};
inline constexpr std::uint16_t kVersion = 2;  // 2: the token is proven, never sent
inline constexpr std::size_t kHeaderBytes = 16;
// Default bound on one payload (a rank's allgather blob); COMPAS_BOOTSTRAP_MAX_FRAME changes it.
inline constexpr std::size_t kDefaultMaxPayloadBytes = kDefaultMaxFrameBytes;  // bootstrap.hpp
// Bound on the payload of a connection's first frame, before it has proven it belongs to the job.
inline constexpr std::size_t kMaxHelloPayloadBytes = 1024;
inline constexpr std::size_t kMaxTokenBytes = 256;  // the longest COMPAS_JOB_TOKEN accepted
inline constexpr std::size_t kNonceBytes = 16;      // a side's fresh random bytes in a handshake
inline constexpr std::size_t kProofBytes = 32;      // an HMAC-SHA256 proof of the job token

// Joining: rank -> HELLO; rank 0 -> CHALLENGE (its proof of the token over the rank's nonce);
// rank -> PROOF (its proof over rank 0's nonce); rank 0 admits it silently or says REJECT. When
// every rank is in, rank 0 sends WELCOME to all. BUSY means "dropped before admission, try again".
enum class FrameType : std::uint16_t {
  hello = 1,         // rank -> rank 0, first frame: rank, size, nonce
  welcome = 2,       // rank 0 -> rank: every rank has arrived
  reject = 3,        // rank 0 -> connection: refused; payload is the reason
  abort = 4,         // rank 0 -> ranks: the job failed; payload names the culprit rank and why
  barrier = 5,       // rank -> rank 0: entered barrier number `seq`
  barrier_done = 6,  // rank 0 -> rank: every rank entered barrier `seq`
  gather = 7,        // rank -> rank 0: its blob for allgather `seq`
  gather_part = 8,   // rank 0 -> rank: one rank's blob for allgather `seq` (size frames in order)
  bye = 9,           // either way: orderly shutdown of the bootstrap
  challenge = 10,    // rank 0 -> rank: rank 0's nonce and its proof of the token
  proof = 11,        // rank -> rank 0: the rank's proof of the token
  busy = 12,         // rank 0 -> connection: dropped before admission (too many pending); retry
};
inline constexpr std::uint16_t kMaxFrameType = 12;

// "hello", "barrier", ...; "unknown" for other values.
const char* to_string(FrameType type);

struct Frame {
  FrameType type = FrameType::hello;
  std::uint32_t seq = 0;  // collective number (1, 2, ...) or 0 outside collectives
  std::string payload;
};

// The bytes of one frame. Throws std::length_error when the payload exceeds 2^32-1 bytes.
std::string encode(FrameType type, std::uint32_t seq, std::string_view payload);
inline std::string encode(const Frame& f) {
  return encode(f.type, f.seq, f.payload);
}

enum class ParseStatus { ok, need_more, error };

struct ParseResult {
  ParseStatus status = ParseStatus::need_more;
  Frame frame;               // when ok
  std::size_t consumed = 0;  // when ok: header + payload bytes taken from the buffer
  std::string error;         // when error: what is wrong, for a message
};

// Parses the frame at the start of `buffer`, a byte stream of which more may arrive later
// (trailing bytes are left for the next call). Bad magic, version or type, and a payload longer
// than `max_payload_bytes`, are errors as soon as their bytes are present; otherwise an incomplete
// frame is need_more. Allocates at most the payload; throws nothing but std::bad_alloc.
ParseResult parse_frame(std::string_view buffer,
                        std::size_t max_payload_bytes = kDefaultMaxPayloadBytes);

// Parses a whole message that must be exactly one frame: a short buffer is a truncated frame and
// bytes after the frame are an error.
ParseResult decode_frame(std::string_view message,
                         std::size_t max_payload_bytes = kDefaultMaxPayloadBytes);

// ---- payloads ----------------------------------------------------------------------------------

struct Hello {
  std::uint32_t rank = 0;
  std::uint32_t size = 0;
  std::string nonce;  // kNonceBytes
};
std::string encode_hello(const Hello& hello);
// nullopt and `error` set when the payload is malformed.
std::optional<Hello> decode_hello(std::string_view payload, std::string* error = nullptr);

struct Challenge {
  std::string nonce;  // kNonceBytes
  std::string proof;  // kProofBytes
};
std::string encode_challenge(const Challenge& challenge);
std::optional<Challenge> decode_challenge(std::string_view payload, std::string* error = nullptr);

// A PROOF frame's payload is the proof itself: kProofBytes.
std::optional<std::string> decode_proof(std::string_view payload, std::string* error = nullptr);

struct GatherPart {
  std::uint32_t rank = 0;
  std::string blob;
};
std::string encode_gather_part(std::uint32_t rank, std::string_view blob);
std::optional<GatherPart> decode_gather_part(std::string_view payload,
                                             std::string* error = nullptr);

inline constexpr std::uint32_t kNoRank = 0xffffffffu;
struct Abort {
  std::uint32_t culprit = kNoRank;  // the rank whose failure ended the job, or kNoRank
  std::string message;
};
std::string encode_abort(const Abort& abort);
std::optional<Abort> decode_abort(std::string_view payload, std::string* error = nullptr);

}  // namespace compas::comm::wire

// Tests of the bootstrap frame format (comm/wire.hpp): round trips, streaming, and rejection of
// truncated, oversized and garbage input, including many random and mutated buffers.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "wire.hpp"

namespace {

using namespace compas::comm::wire;

std::string binary_payload(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (auto& c : s) c = static_cast<char>(rng() & 0xff);
  return s;
}

TEST(Wire, RoundTripEveryType) {
  for (std::uint16_t t = 1; t <= kMaxFrameType; ++t) {
    for (std::size_t n : {0u, 1u, 15u, 16u, 17u, 4096u, 100000u}) {
      const auto type = static_cast<FrameType>(t);
      const std::string payload = binary_payload(n, t * 1000 + static_cast<unsigned>(n));
      const std::string bytes = encode(type, 0xdeadbeefu + t, payload);
      ASSERT_EQ(bytes.size(), kHeaderBytes + n);
      const auto r = decode_frame(bytes);
      ASSERT_EQ(r.status, ParseStatus::ok) << r.error;
      EXPECT_EQ(r.frame.type, type);
      EXPECT_EQ(r.frame.seq, 0xdeadbeefu + t);
      EXPECT_EQ(r.frame.payload, payload);
      EXPECT_EQ(r.consumed, bytes.size());
    }
  }
}

TEST(Wire, HeaderLayoutIsBigEndian) {
  const std::string b = encode(FrameType::gather, 0x01020304u, "xyz");
  EXPECT_EQ(b.substr(0, 4), "CMPS");
  EXPECT_EQ(b.substr(4, 4), std::string("\x00\x02\x00\x07", 4));  // version 2, type 7
  EXPECT_EQ(b.substr(8, 4), "\x01\x02\x03\x04");
  EXPECT_EQ(b.substr(12, 4), std::string("\x00\x00\x00\x03", 4));
  EXPECT_EQ(b.substr(16), "xyz");
}

TEST(Wire, StreamingByteByByteAndBackToBack) {
  const std::string a = encode(FrameType::barrier, 7, "");
  const std::string b = encode(FrameType::gather, 8, "payload");
  const std::string stream = a + b;
  std::string buffer;
  std::vector<Frame> frames;
  for (char c : stream) {
    buffer.push_back(c);
    for (;;) {
      auto r = parse_frame(buffer);
      ASSERT_NE(r.status, ParseStatus::error) << r.error;
      if (r.status == ParseStatus::need_more) break;
      frames.push_back(r.frame);
      buffer.erase(0, r.consumed);
    }
  }
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_EQ(frames[0].type, FrameType::barrier);
  EXPECT_EQ(frames[0].seq, 7u);
  EXPECT_EQ(frames[1].type, FrameType::gather);
  EXPECT_EQ(frames[1].payload, "payload");
  EXPECT_TRUE(buffer.empty());
  // parse_frame leaves what follows a frame alone; decode_frame calls it an error.
  EXPECT_EQ(parse_frame(stream).consumed, a.size());
  const auto whole = decode_frame(stream);
  EXPECT_EQ(whole.status, ParseStatus::error);
  EXPECT_NE(whole.error.find("after the frame"), std::string::npos) << whole.error;
}

TEST(Wire, TruncatedFrameIsRejected) {
  const std::string bytes =
      encode(FrameType::hello, 0, encode_hello({1, 4, std::string(kNonceBytes, 'n')}));
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    const std::string_view prefix(bytes.data(), n);
    EXPECT_EQ(parse_frame(prefix).status, ParseStatus::need_more) << n;
    const auto r = decode_frame(prefix);
    EXPECT_EQ(r.status, ParseStatus::error) << n;
    EXPECT_NE(r.error.find("truncated"), std::string::npos) << r.error;
  }
}

TEST(Wire, OversizedFrameIsRejectedFromItsHeader) {
  const std::string bytes = encode(FrameType::gather, 1, std::string(5000, 'x'));
  // Only the header is present: the length alone condemns it, before any payload arrives.
  const auto r = parse_frame(std::string_view(bytes.data(), kHeaderBytes), 4096);
  ASSERT_EQ(r.status, ParseStatus::error);
  EXPECT_NE(r.error.find("5000"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("4096"), std::string::npos) << r.error;
  EXPECT_EQ(parse_frame(bytes, 5000).status, ParseStatus::ok);
  // A length field of 4 GiB - 1 against the default limit.
  std::string huge = encode(FrameType::gather, 1, "");
  huge[12] = huge[13] = huge[14] = huge[15] = '\xff';
  EXPECT_EQ(parse_frame(huge).status, ParseStatus::error);
}

TEST(Wire, BadMagicIsRejectedAtTheFirstWrongByte) {
  EXPECT_EQ(parse_frame("G").status, ParseStatus::error);
  EXPECT_EQ(parse_frame("CMX").status, ParseStatus::error);
  EXPECT_EQ(parse_frame("CMP").status, ParseStatus::need_more);
  const auto r = parse_frame("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
  ASSERT_EQ(r.status, ParseStatus::error);
  EXPECT_NE(r.error.find("magic"), std::string::npos) << r.error;
}

TEST(Wire, BadVersionAndUnknownTypeAreRejected) {
  std::string b = encode(FrameType::barrier, 1, "");
  b[5] = 1;  // version 1 sent the token itself: it must not be spoken to
  auto r = parse_frame(b.substr(0, 6));
  ASSERT_EQ(r.status, ParseStatus::error);
  EXPECT_NE(r.error.find("version 1"), std::string::npos) << r.error;

  for (std::uint16_t t : {0, kMaxFrameType + 1, 0xffff}) {
    std::string c = encode(FrameType::barrier, 1, "");
    c[6] = static_cast<char>(t >> 8);
    c[7] = static_cast<char>(t & 0xff);
    r = parse_frame(c);
    ASSERT_EQ(r.status, ParseStatus::error) << t;
    EXPECT_NE(r.error.find("unknown frame type"), std::string::npos) << r.error;
  }
}

TEST(Wire, PayloadCodecs) {
  const std::string nonce(kNonceBytes, '\x5a');
  const auto h = decode_hello(encode_hello({3, 8, nonce}));
  ASSERT_TRUE(h);
  EXPECT_EQ(h->rank, 3u);
  EXPECT_EQ(h->size, 8u);
  EXPECT_EQ(h->nonce, nonce);
  std::string error;
  EXPECT_FALSE(decode_hello("short", &error));
  EXPECT_NE(error.find("not 24"), std::string::npos) << error;
  EXPECT_FALSE(decode_hello(encode_hello({1, 2, nonce + "x"}), &error));

  const std::string proof(kProofBytes, '\x11');
  const auto c = decode_challenge(encode_challenge({nonce, proof}));
  ASSERT_TRUE(c);
  EXPECT_EQ(c->nonce, nonce);
  EXPECT_EQ(c->proof, proof);
  EXPECT_FALSE(decode_challenge(nonce, &error));
  EXPECT_NE(error.find("CHALLENGE"), std::string::npos) << error;
  EXPECT_EQ(decode_proof(proof), proof);
  EXPECT_FALSE(decode_proof(proof.substr(1), &error));
  EXPECT_NE(error.find("PROOF"), std::string::npos) << error;

  const auto p = decode_gather_part(encode_gather_part(5, std::string("a\0b", 3)));
  ASSERT_TRUE(p);
  EXPECT_EQ(p->rank, 5u);
  EXPECT_EQ(p->blob, std::string("a\0b", 3));
  EXPECT_FALSE(decode_gather_part("abc"));

  const auto a = decode_abort(encode_abort({2, "rank 2 disconnected"}));
  ASSERT_TRUE(a);
  EXPECT_EQ(a->culprit, 2u);
  EXPECT_EQ(a->message, "rank 2 disconnected");
  EXPECT_FALSE(decode_abort("ab"));
}

// The parser's contract on any input: no crash, and an ok result is a frame that re-encodes to
// exactly the bytes it consumed, within the limit.
void check_any(std::string_view bytes, std::size_t limit) {
  const auto r = parse_frame(bytes, limit);
  switch (r.status) {
    case ParseStatus::ok:
      ASSERT_LE(r.consumed, bytes.size());
      ASSERT_LE(r.frame.payload.size(), limit);
      ASSERT_EQ(encode(r.frame), bytes.substr(0, r.consumed));
      break;
    case ParseStatus::error:
      ASSERT_FALSE(r.error.empty());
      break;
    case ParseStatus::need_more:
      ASSERT_LT(bytes.size(), kHeaderBytes + limit);
      break;
  }
  const auto d = decode_frame(bytes, limit);
  if (d.status == ParseStatus::ok) {
    ASSERT_EQ(d.consumed, bytes.size());
  }
  std::string error;
  (void)decode_hello(bytes, &error);
  (void)decode_challenge(bytes, &error);
  (void)decode_proof(bytes, &error);
  (void)decode_gather_part(bytes, &error);
  (void)decode_abort(bytes, &error);
}

TEST(Wire, RandomBuffersNeverCrash) {
  std::mt19937 rng(12345);
  for (int i = 0; i < 50000; ++i) {
    const std::size_t n = rng() % 64;
    std::string b(n, '\0');
    for (auto& c : b) c = static_cast<char>(rng() & 0xff);
    // Half of them start like a frame, so the parser gets past the magic.
    if (i % 2 && n >= 4) b.replace(0, 4, "CMPS");
    if (i % 4 == 1 && n >= 6) b[4] = 0, b[5] = static_cast<char>(kVersion);
    check_any(b, 1 + rng() % 64);
  }
}

TEST(Wire, MutatedFramesNeverCrash) {
  std::mt19937 rng(777);
  for (int i = 0; i < 20000; ++i) {
    const auto type = static_cast<FrameType>(1 + rng() % kMaxFrameType);
    std::string b = encode(type, rng(), binary_payload(rng() % 40, rng()));
    const int flips = 1 + static_cast<int>(rng() % 3);
    for (int f = 0; f < flips; ++f) b[rng() % b.size()] ^= static_cast<char>(1u << (rng() % 8));
    if (rng() % 3 == 0) b.resize(rng() % (b.size() + 1));
    if (rng() % 3 == 0) b += binary_payload(rng() % 20, rng());
    check_any(b, 32);
  }
}

}  // namespace

// splitmix64 (Steele, Lea and Flood; Vigna's reference code): a fast 64-bit mixer, for hashing
// positions and keys and for shuffling, not for cryptography. FNV-1a (Fowler, Noll and Vo, 64
// bits): a hash of bytes that is the same in every process and build, for telling whether
// processes hold the same text or list.
#pragma once

#include <cstdint>
#include <string_view>

namespace compas::base {

inline constexpr std::uint64_t kSplitmixGamma = 0x9e3779b97f4a7c15ULL;  // 2^64 / golden ratio

// splitmix64's finalizer alone: a bijection of 64-bit words.
constexpr std::uint64_t splitmix64_mix(std::uint64_t z) noexcept {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// The hash of `x`: the output of the generator whose state before the step is x, i.e.
// splitmix64_mix(x + gamma). splitmix64(0) is the generator's first output from state 0.
constexpr std::uint64_t splitmix64(std::uint64_t x) noexcept {
  return splitmix64_mix(x + kSplitmixGamma);
}

// The generator: each call advances the state by gamma and returns its mix.
struct SplitMix64 {
  std::uint64_t state = 0;
  constexpr std::uint64_t operator()() noexcept { return splitmix64_mix(state += kSplitmixGamma); }
};

inline constexpr std::uint64_t kFnvOffset = 0xcbf29ce484222325ULL;
inline constexpr std::uint64_t kFnvPrime = 0x100000001b3ULL;

// FNV-1a of `bytes`, continuing from `h` (the offset basis: the hash of nothing).
constexpr std::uint64_t fnv1a(std::string_view bytes, std::uint64_t h = kFnvOffset) noexcept {
  for (unsigned char c : bytes) h = (h ^ c) * kFnvPrime;
  return h;
}

// FNV-1a of the word's 8 bytes, least significant first (whatever the machine's byte order),
// continuing from `h`.
constexpr std::uint64_t fnv1a_word(std::uint64_t h, std::uint64_t word) noexcept {
  for (int b = 0; b < 8; ++b) h = (h ^ (word >> (8 * b) & 0xff)) * kFnvPrime;
  return h;
}

}  // namespace compas::base

// splitmix64 (Steele, Lea and Flood; Vigna's reference code): a fast 64-bit mixer, for hashing
// positions and keys and for shuffling, not for cryptography.
#pragma once

#include <cstdint>

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

}  // namespace compas::base

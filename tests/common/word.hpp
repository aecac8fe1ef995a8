// A string of up to N characters in N + 1 bytes with concatenation: an operator that is
// associative and not commutative, so a collective that combines in the wrong order, or twice,
// or not at all, gives a different word.
#pragma once

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

namespace compas::testing {

template <std::size_t N>
struct Word {
  std::uint8_t len = 0;
  char s[N] = {};
  std::string str() const { return std::string(s, len); }
};

template <std::size_t N>
Word<N> word(const std::string& text) {
  if (text.size() > N) throw std::length_error("word: '" + text + "' is too long");
  Word<N> w;
  w.len = static_cast<std::uint8_t>(text.size());
  std::memcpy(w.s, text.data(), text.size());
  return w;
}

template <std::size_t N>
struct Concat {
  Word<N> operator()(const Word<N>& a, const Word<N>& b) const {
    if (a.len + b.len > N)
      throw std::length_error("concat: longer than " + std::to_string(N) + " characters");
    Word<N> w = a;
    std::memcpy(w.s + a.len, b.s, b.len);
    w.len = static_cast<std::uint8_t>(a.len + b.len);
    return w;
  }
};

}  // namespace compas::testing

#include "compas/base/number.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace compas::base {

namespace {

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

// Digits from text[i]; returns how many.
std::size_t skip_digits(const std::string& text, std::size_t& i) {
  const std::size_t start = i;
  while (i < text.size() && is_digit(text[i])) ++i;
  return i - start;
}

// The mantissa of a decimal number from text[i]: digits, at most one '.', a digit on one side.
bool skip_mantissa(const std::string& text, std::size_t& i) {
  std::size_t digits = skip_digits(text, i);
  if (i < text.size() && text[i] == '.') {
    ++i;
    digits += skip_digits(text, i);
  }
  return digits > 0;
}

// An exponent from text[i], if any: 'e' or 'E', an optional sign, then digits.
bool skip_exponent(const std::string& text, std::size_t& i) {
  if (i == text.size() || (text[i] != 'e' && text[i] != 'E')) return true;
  ++i;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
  return skip_digits(text, i) > 0;
}

}  // namespace

std::optional<long long> parse_integer(const std::string& text, long long min, long long max) {
  std::size_t i = 0;
  const bool negative = min < 0 && !text.empty() && text[0] == '-';
  if (negative) ++i;
  if (i == text.size() || text.size() - i > 18) return std::nullopt;
  long long v = 0;
  for (; i < text.size(); ++i) {
    if (!is_digit(text[i])) return std::nullopt;
    v = v * 10 + (text[i] - '0');
  }
  if (negative) v = -v;
  if (v < min || v > max) return std::nullopt;
  return v;
}

std::optional<double> parse_decimal(const std::string& text) {
  std::size_t i = 0;
  if (i < text.size() && text[i] == '-') ++i;
  if (!skip_mantissa(text, i) || !skip_exponent(text, i) || i != text.size()) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (errno == ERANGE || end != text.c_str() + text.size() || !std::isfinite(v))
    return std::nullopt;
  return v;
}

}  // namespace compas::base

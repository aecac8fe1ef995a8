#include "compas/base/size.hpp"

#include <cctype>
#include <cstdio>
#include <stdexcept>

namespace compas::base {

namespace {

struct Unit {
  const char* name;  // lower case
  std::uint64_t multiplier;
  bool in_counts;  // also a suffix of SizeSyntax::count
};

constexpr Unit kUnits[] = {
    {"", 1, true},
    {"b", 1, false},
    {"k", 1ull << 10, true},
    {"ki", 1ull << 10, false},
    {"kib", 1ull << 10, false},
    {"kb", 1000ull, false},
    {"m", 1ull << 20, true},
    {"mi", 1ull << 20, false},
    {"mib", 1ull << 20, false},
    {"mb", 1000000ull, false},
    {"g", 1ull << 30, true},
    {"gi", 1ull << 30, false},
    {"gib", 1ull << 30, false},
    {"gb", 1000000000ull, false},
    {"t", 1ull << 40, false},
    {"ti", 1ull << 40, false},
    {"tib", 1ull << 40, false},
    {"tb", 1000000000000ull, false},
};

bool is_space(char c) {
  return std::isspace(static_cast<unsigned char>(c)) != 0;
}

}  // namespace

std::uint64_t parse_size(const std::string& text, SizeSyntax syntax, const std::string& name) {
  const bool bytes = syntax == SizeSyntax::bytes;
  auto bad = [&](const std::string& why) {
    return std::invalid_argument(
        name + " '" + text + "': " + why +
        (bytes ? " (expected a positive byte count like 4096, 64KiB, 1MiB, 1GiB, 1GB or 512M)"
               : " (a positive count, optionally followed by K, M or G = 2^10, 2^20, 2^30: 4M, "
                 "64K)"));
  };
  std::size_t i = 0, n = text.size();
  if (bytes) {
    while (i < n && is_space(text[i])) ++i;
    while (n > i && is_space(text[n - 1])) --n;
    if (i == n) throw bad("empty");
    if (text[i] == '-') throw bad("negative");
  }
  // Mantissa: digits, for bytes optionally '.' and more digits, kept as an exact integer plus the
  // number of decimals so "1.5GiB" is exact.
  std::uint64_t mant = 0, div = 1;
  int digits = 0;
  bool dot = false;
  for (; i < n; ++i) {
    const char ch = text[i];
    if (ch >= '0' && ch <= '9') {
      if (bytes && ++digits > 19) throw bad("too large");
      if (!bytes) ++digits;
      if (__builtin_mul_overflow(mant, 10, &mant) ||
          __builtin_add_overflow(mant, static_cast<unsigned>(ch - '0'), &mant))
        throw bad("too large");
      if (dot) div *= 10;
    } else if (bytes && ch == '.' && !dot) {
      dot = true;
    } else {
      break;
    }
  }
  if (digits == 0) throw bad(bytes ? "no number" : "not a number");
  if (bytes)
    while (i < n && is_space(text[i])) ++i;
  std::string unit;
  for (; i < n; ++i) unit += static_cast<char>(std::tolower(static_cast<unsigned char>(text[i])));
  std::uint64_t mult = 0;
  for (const Unit& u : kUnits)
    if (unit == u.name && (bytes || u.in_counts)) mult = u.multiplier;
  if (mult == 0)
    throw bad(bytes ? "unknown unit '" + unit + "'; use B, KiB, MiB, GiB, KB, MB, GB, K, M, G"
                    : std::string("unknown suffix"));
  if (mant == 0) throw bad("must be positive");
  std::uint64_t value = 0;
  if (__builtin_mul_overflow(mant, mult, &value)) throw bad("too large");
  if (mult == 1 && value % div != 0) throw bad("not a whole number of bytes");
  value /= div;
  if (value == 0) throw bad("must be positive");
  return value;
}

std::string format_size(std::size_t bytes) {
  static const char* const bin[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  static const char* const dec[] = {"B", "KB", "MB", "GB", "TB"};
  char buf[64];
  int ub = 0, ud = 0;
  std::size_t pb = 1, pd = 1;
  while (ub < 4 && bytes / pb >= 1024) pb *= 1024, ++ub;
  while (ud < 4 && bytes / pd >= 1000) pd *= 1000, ++ud;
  // A whole number of the largest binary unit, else of the largest decimal one, else decimals.
  if (bytes % pb == 0)
    std::snprintf(buf, sizeof buf, "%zu %s", bytes / pb, bin[ub]);
  else if (bytes % pd == 0)
    std::snprintf(buf, sizeof buf, "%zu %s", bytes / pd, dec[ud]);
  else
    std::snprintf(buf, sizeof buf, "%.4g %s", static_cast<double>(bytes) / static_cast<double>(pb),
                  bin[ub]);
  return buf;
}

}  // namespace compas::base

// Numbers as the command line and the environment take them: plain decimal only. No blanks, no
// '+', no hexadecimal, octal or binary prefixes, no digit separators, no "inf" or "nan": what a
// user types in a job script means the same to every parser in compas.
#pragma once

#include <optional>
#include <string>

namespace compas::base {

// Decimal digits (a leading '-' where min < 0) of a value min..max; nullopt for anything else.
std::optional<long long> parse_integer(const std::string& text, long long min, long long max);

// A plain decimal number: an optional '-', digits with at most one '.' (at least one digit on
// either side of it: "2", "2.5", ".5", "5."), then an optional exponent ("1e3", "2.5E-2");
// finite. nullopt for anything else ("0x10", " 2", "2 ", "+2", "1e", "inf", "").
std::optional<double> parse_decimal(const std::string& text);

// The syntax parse_integer and parse_decimal take, as messages say it.
inline constexpr const char* kDecimalSyntax = "plain decimal digits (no blanks, signs or 0x)";

}  // namespace compas::base

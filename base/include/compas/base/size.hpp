// Sizes and counts with binary and decimal suffixes, as the command line and the environment take
// them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace compas::base {

enum class SizeSyntax {
  // A byte count: "4096", "64KiB", "1MiB", "1GiB", "1GB", "512M", "1.5G", "2 MiB".
  // KiB/MiB/GiB/TiB are binary (1024^k), KB/MB/GB/TB decimal (1000^k), bare K/M/G/T binary (also
  // Ki/Mi/Gi/Ti); units are case-insensitive, a trailing "B" alone means bytes, spaces around the
  // number and before the unit are allowed, and a fraction must come to whole bytes.
  bytes,
  // A count: digits, optionally followed by K, M or G (2^10, 2^20, 2^30; either case): "4M",
  // "64K", "1000". No spaces, signs, fractions or other suffixes.
  count,
};

// A positive size or count. Throws std::invalid_argument "<name> '<text>': <why> (<syntax>)" for
// zero, negative numbers, unknown units, garbage and overflow.
std::uint64_t parse_size(const std::string& text, SizeSyntax syntax = SizeSyntax::bytes,
                         const std::string& name = "size");

// 1073741824 -> "1 GiB", 1000000000 -> "1 GB", 1536 -> "1.5 KiB", 100 -> "100 B": a whole number of
// the largest binary unit, else of the largest decimal one, else the binary unit with decimals.
std::string format_size(std::size_t bytes);

}  // namespace compas::base

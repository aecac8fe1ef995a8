// Reading JSON that comes from outside the program: a file the CLI was pointed at (compas
// compare's A and B) or one in a study's directory (a run's raw report, a line of runs.jsonl).
// One bounded reader for all of them, so that no input, however it is made, overflows the stack
// or takes memory beyond a small multiple of its size: its size, its nesting, the length of its
// keys and the memory its values take are bounded, and a text past a bound is refused with what
// was passed. Nothing deeper than the bound is ever built, so no later copy, comparison or walk
// of a document recurses deeper either.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "compas/report/report.hpp"
#include "read_whole.hpp"

namespace compas::app {

// The largest JSON text read (a study.json of a long study is a few MiB, a raw report less).
inline constexpr std::uint64_t kJsonSizeLimit = 64ull << 20;
// Objects and arrays nested in one another (compas writes at most 6 levels).
inline constexpr int kJsonDepthLimit = 64;
// The longest key, in bytes (compas's keys are names of a few words).
inline constexpr std::size_t kJsonKeyLimit = 1024;
// The document's memory (its containers' spare room included) at most this many times the text's
// size, and 1 MiB besides: compas's files take 3 to 5 times theirs (up to 7.4 written without
// blanks); a list of empty strings would take 27 times.
inline constexpr std::uint64_t kJsonMemoryFactor = 12;

// Why a text is not JSON compas reads, without the file's name (the caller says which file):
// "not valid JSON: ...", "nested more than 64 levels deep: compas reads at most 64", ...
struct BadJson : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// `text` as JSON within the bounds above. Throws BadJson.
report::json parse_bounded_json(const std::string& text);

// The file's text (read_whole: a regular file of at most kJsonSizeLimit, never through a link
// under Links::refuse) parsed by parse_bounded_json. Throws UnreadableFile or BadJson.
report::json read_json_file(const std::string& path, Links links);

}  // namespace compas::app

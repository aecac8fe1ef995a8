// The bounded JSON reader (read_json.hpp).
#include "read_json.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "compas/base/size.hpp"

namespace compas::app {

namespace {

using json = report::json;

// What the document will take, as the parser builds it: a place in its container (an array's
// 16 bytes, an object member's 48 with its key; twice that, as a container may hold as much
// spare room as it fills), a string's or a container's own allocation (48), and the characters
// of a string past the short-string buffer.
constexpr std::uint64_t kArraySlot = 2 * 16, kMemberSlot = 2 * 48, kAllocation = 48;
constexpr std::size_t kShortString = 15;

std::uint64_t characters(std::size_t length) {
  return length > kShortString ? length + 1 + 16 : 0;
}

// Builds the document from nlohmann's SAX events (the parser is iterative), each checked against
// the bounds before its value is kept; the parse stops at the first bound passed. (The parser's
// callback interface would do the checks, but it scans a container's elements at the end of each
// object in it: quadratic time in a list of objects.)
class BoundedBuilder {
 public:
  explicit BoundedBuilder(std::size_t text_bytes)
      : text_bytes_(text_bytes), budget_(kJsonMemoryFactor * text_bytes + (1u << 20)) {}

  bool null() { return put(nullptr); }
  bool boolean(bool v) { return put(v); }
  bool number_integer(json::number_integer_t v) { return put(v); }
  bool number_unsigned(json::number_unsigned_t v) { return put(v); }
  bool number_float(json::number_float_t v, const json::string_t&) { return put(v); }
  bool string(json::string_t& v) {
    charge(kAllocation + characters(v.size()));
    return put(std::move(v));
  }
  bool binary(json::binary_t&) { throw BadJson("binary values, not JSON text"); }
  bool start_object(std::size_t) { return open(json::object()); }
  bool start_array(std::size_t) { return open(json::array()); }
  bool end_array() {
    open_.pop_back();
    return true;
  }
  bool end_object() {
    refuse_repeated_keys(open_.back()->get_ref<json::object_t&>());
    open_.pop_back();
    return true;
  }
  bool key(json::string_t& k) {
    if (k.size() > kJsonKeyLimit)
      throw BadJson(fmt::format("a key of {} bytes: compas reads JSON keys of at most {} bytes",
                                k.size(), kJsonKeyLimit));
    charge(kMemberSlot + characters(k.size()));
    key_ = std::move(k);
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const json::exception& e) {
    // A syntax error, or a number out of range (1e400).
    throw BadJson(std::string("not valid JSON: ") + e.what());
  }

  json take() { return std::move(root_); }

 private:
  bool open(json&& container) {
    if (open_.size() + 1 > std::size_t(kJsonDepthLimit))
      throw BadJson(
          fmt::format("nested more than {0} levels deep: compas reads JSON of at most "
                      "{0} levels of objects and arrays",
                      kJsonDepthLimit));
    charge(kAllocation);
    open_.push_back(place(std::move(container)));
    return true;
  }

  bool put(json&& v) {
    place(std::move(v));
    return true;
  }

  // Puts `v` in the open container (an object's member under the last key) and returns where.
  // The open containers' addresses hold: only the innermost one grows.
  json* place(json&& v) {
    if (open_.empty()) {
      charge(16);
      root_ = std::move(v);
      return &root_;
    }
    json& parent = *open_.back();
    if (parent.is_array()) {
      charge(kArraySlot);
      auto& items = parent.get_ref<json::array_t&>();
      items.push_back(std::move(v));
      return &items.back();
    }
    // No search for the key (nlohmann's operator[] searches: quadratic in an object's members);
    // a key given twice is refused when the object ends.
    auto& members = parent.get_ref<json::object_t&>();
    members.emplace_back(std::move(key_), std::move(v));
    return &members.back().second;
  }

  static void refuse_repeated_keys(const json::object_t& members) {
    std::vector<const std::string*> keys;
    keys.reserve(members.size());
    for (const auto& m : members) keys.push_back(&m.first);
    std::sort(keys.begin(), keys.end(),
              [](const std::string* a, const std::string* b) { return *a < *b; });
    const auto twice =
        std::adjacent_find(keys.begin(), keys.end(),
                           [](const std::string* a, const std::string* b) { return *a == *b; });
    if (twice != keys.end())
      throw BadJson(
          fmt::format("the key \"{}\" twice in one object: compas reads JSON whose "
                      "objects name each key once",
                      (*twice)->substr(0, 64)));
  }

  void charge(std::uint64_t bytes) {
    used_ += bytes;
    if (used_ > budget_)
      throw BadJson(fmt::format(
          "its values would take more than {} in memory, {} times its size of {} and 1 MiB: "
          "compas reads JSON whose values take at most that",
          base::format_size(budget_), kJsonMemoryFactor, base::format_size(text_bytes_)));
  }

  std::size_t text_bytes_;
  std::uint64_t budget_, used_ = 0;
  json root_;
  std::vector<json*> open_;  // the containers being filled, outermost first
  std::string key_;          // the key of the next member of the innermost object
};

}  // namespace

json parse_bounded_json(const std::string& text) {
  if (text.size() > kJsonSizeLimit)
    throw BadJson(fmt::format("{} bytes of JSON: compas reads JSON of at most {}", text.size(),
                              base::format_size(kJsonSizeLimit)));
  BoundedBuilder builder(text.size());
  try {
    json::sax_parse(text, &builder);
  } catch (const json::exception& e) {  // anything the parser throws rather than reports
    throw BadJson(std::string("not valid JSON: ") + e.what());
  }
  return builder.take();
}

json read_json_file(const std::string& path, Links links) {
  return parse_bounded_json(read_whole(path, kJsonSizeLimit, links));
}

}  // namespace compas::app

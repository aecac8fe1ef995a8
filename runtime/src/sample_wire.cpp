// Region samples as bytes (sample_wire.hpp).
#include "sample_wire.hpp"

#include <bit>
#include <cstdint>
#include <cstring>
#include <stdexcept>

namespace compas::detail {

namespace {

void put(std::string& out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}

void put(std::string& out, const std::string& s) {
  put(out, s.size());
  out += s;
}

class Reader {
 public:
  explicit Reader(std::string_view bytes) : rest_(bytes) {}

  std::uint64_t u64(const char* what) {
    take(8, what);
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= std::uint64_t{static_cast<unsigned char>(rest_[i])} << (8 * i);
    rest_.remove_prefix(8);
    return v;
  }
  std::string text(const char* what) {
    const std::uint64_t n = u64(what);
    take(n, what);
    std::string s(rest_.substr(0, n));
    rest_.remove_prefix(n);
    return s;
  }
  // A count of items of at least `each` bytes: never more than the bytes left can hold.
  std::size_t count(std::size_t each, const char* what) {
    const std::uint64_t n = u64(what);
    if (n > rest_.size() / each)
      throw std::invalid_argument(std::string("region samples: ") + what + " count " +
                                  std::to_string(n) + " is beyond the " +
                                  std::to_string(rest_.size()) + " bytes left");
    return static_cast<std::size_t>(n);
  }
  bool done() const { return rest_.empty(); }
  std::size_t left() const { return rest_.size(); }

 private:
  void take(std::uint64_t n, const char* what) const {
    if (n > rest_.size())
      throw std::invalid_argument(std::string("region samples: cut short in ") + what + " (" +
                                  std::to_string(n) + " bytes wanted, " +
                                  std::to_string(rest_.size()) + " left)");
  }
  std::string_view rest_;
};

perf::RegionSample read_sample(Reader& in) {
  perf::RegionSample s;
  s.process = static_cast<int>(static_cast<std::int64_t>(in.u64("process")));
  s.thread = static_cast<int>(static_cast<std::int64_t>(in.u64("thread")));
  s.region = in.text("region");
  s.calls = in.u64("calls");
  s.seconds = std::bit_cast<double>(in.u64("seconds"));
  s.events.resize(in.count(8, "events"));
  for (auto& e : s.events) e = in.text("event");
  s.counts.resize(in.count(8, "counts"));
  for (auto& c : s.counts) c = static_cast<long long>(in.u64("count"));
  return s;
}

}  // namespace

std::string encode_samples(const std::vector<perf::RegionSample>& samples) {
  std::string out;
  put(out, samples.size());
  for (const auto& s : samples) {
    put(out, static_cast<std::uint64_t>(static_cast<std::int64_t>(s.process)));
    put(out, static_cast<std::uint64_t>(static_cast<std::int64_t>(s.thread)));
    put(out, s.region);
    put(out, s.calls);
    put(out, std::bit_cast<std::uint64_t>(s.seconds));
    put(out, s.events.size());
    for (const auto& e : s.events) put(out, e);
    put(out, s.counts.size());
    for (long long c : s.counts) put(out, static_cast<std::uint64_t>(c));
  }
  return out;
}

std::vector<perf::RegionSample> decode_samples(std::string_view bytes) {
  Reader in(bytes);
  // Each sample takes 7 words at least.
  std::vector<perf::RegionSample> out(in.count(7 * 8, "samples"));
  for (auto& s : out) s = read_sample(in);
  if (!in.done())
    throw std::invalid_argument("region samples: " + std::to_string(in.left()) +
                                " bytes left over after the last sample");
  return out;
}

}  // namespace compas::detail

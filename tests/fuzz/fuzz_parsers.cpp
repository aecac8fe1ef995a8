// libFuzzer target: the parsers of user input that take free text: cpu lists ("0,2,4-7"), bind
// specs, sizes ("64KiB", "1.5G"), event lists ("ipc,PAPI_L3_TCM"), and the plain decimal numbers
// every numeric flag and variable takes. Each either throws std::invalid_argument (or returns
// nullopt) or returns a value that round-trips: a parsed cpu list formats and parses back to
// itself, a size is positive and its formatted form parses back within the formatting's rounding,
// an expanded event list joined by commas expands to itself, an integer lies within its bounds and
// its decimal form parses back to it, a decimal is finite. (The command line's table of hostile
// values runs these parsers in the unsanitized build; this target takes them through the
// sanitizers.)
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "compas/base/number.hpp"
#include "compas/perf/counters.hpp"
#include "compas/probes/membw.hpp"
#include "compas/threads/placement.hpp"

#define CHECK(cond)                                                \
  do {                                                             \
    if (!(cond)) {                                                 \
      __builtin_printf("fuzz_parsers: check failed: %s\n", #cond); \
      std::abort();                                                \
    }                                                              \
  } while (0)

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const std::vector<int> cpus = compas::threads::parse_cpu_list(text);
    CHECK(!cpus.empty());
    for (int c : cpus) CHECK(c >= 0);
    CHECK(compas::threads::parse_cpu_list(compas::threads::format_cpu_list(cpus)) == cpus);
  } catch (const std::invalid_argument&) {
  }
  try {
    (void)compas::threads::BindSpec::parse(text);
  } catch (const std::invalid_argument&) {
  }
  try {
    const std::size_t bytes = compas::base::parse_size(text);
    CHECK(bytes > 0);
    const std::size_t again = compas::base::parse_size(compas::base::format_size(bytes));
    const double ratio = static_cast<double>(again) / static_cast<double>(bytes);
    CHECK(ratio > 0.99 && ratio < 1.01);
  } catch (const std::invalid_argument&) {
  }
  try {
    const std::vector<std::string> events = compas::perf::expand_event_request(text);
    std::string joined;
    for (const auto& e : events) {
      CHECK(!e.empty() && e.find(',') == std::string::npos);
      CHECK(!compas::perf::is_group(e));
      joined += (joined.empty() ? "" : ",") + e;
    }
    CHECK(compas::perf::expand_event_request(joined) == events);
  } catch (const std::invalid_argument&) {
  }
  for (const auto& [min, max] : {std::pair{0LL, 1LL << 40}, std::pair{-100LL, 100LL}}) {
    if (const std::optional<long long> v = compas::base::parse_integer(text, min, max)) {
      CHECK(*v >= min && *v <= max);
      CHECK(compas::base::parse_integer(std::to_string(*v), min, max) == v);
    }
  }
  if (const std::optional<double> d = compas::base::parse_decimal(text)) CHECK(std::isfinite(*d));
  return 0;
}

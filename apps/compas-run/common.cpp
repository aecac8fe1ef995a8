#include "common.hpp"

#include <fmt/core.h>
#include <cstring>

#include "output.hpp"

namespace compas::run {

std::string signal_text(int sig) {
  const char* name = ::strsignal(sig);
  return fmt::format("signal {} ({})", sig, name ? name : "unknown");
}

void say(const std::string& line) {
  stderr_outlet().add_message("compas-run: " + line + "\n");
}

std::string plural(int n, const char* one, const char* many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

}  // namespace compas::run

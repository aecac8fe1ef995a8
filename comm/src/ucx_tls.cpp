// Reading UCX_TLS for the endpoints' error handling mode (CommImpl::ep).
#include "ucx_tls.hpp"

#include <array>
#include <string>
#include "internals.hpp"

namespace compas::comm::detail {

namespace {

bool is_shared_memory(std::string_view name) {
  constexpr std::array<std::string_view, 9> kNames = {"all",  "sm",    "shm", "mm",  "posix",
                                                      "sysv", "xpmem", "cma", "knem"};
  for (auto k : kNames)
    if (name == k) return true;
  return false;
}

}  // namespace

bool shared_memory_allowed(const char* ucx_tls) {
  std::string_view list = ucx_tls ? ucx_tls : "";
  if (list.empty()) return true;
  const bool excluding = list.front() == '^';
  if (excluding) list.remove_prefix(1);
  bool named = false;
  while (!list.empty()) {
    const auto comma = list.find(',');
    const auto item = list.substr(0, comma);
    if (excluding ? (item == "sm" || item == "shm") : is_shared_memory(item)) named = true;
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
  }
  return excluding ? !named : named;
}

}  // namespace compas::comm::detail

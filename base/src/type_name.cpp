// Readable names and ids of types (type_name.hpp).
#include "compas/base/type_name.hpp"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

namespace compas::base {

std::string type_name(const std::type_info& type) {
  int status = 0;
  const std::unique_ptr<char, void (*)(void*)> readable(
      abi::__cxa_demangle(type.name(), nullptr, nullptr, &status), std::free);
  return status == 0 && readable ? std::string(readable.get()) : std::string(type.name());
}

std::uint64_t type_id(const std::type_info& type) {
  std::uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a, 64 bits
  for (const char* c = type.name(); *c; ++c) {
    h ^= static_cast<unsigned char>(*c);
    h *= 0x100000001b3ULL;
  }
  return h;
}

}  // namespace compas::base

// Readable names and ids of types (type_name.hpp).
#include "compas/base/type_name.hpp"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

#include "compas/base/hash.hpp"

namespace compas::base {

std::string type_name(const std::type_info& type) {
  int status = 0;
  const std::unique_ptr<char, void (*)(void*)> readable(
      abi::__cxa_demangle(type.name(), nullptr, nullptr, &status), std::free);
  return status == 0 && readable ? std::string(readable.get()) : std::string(type.name());
}

std::uint64_t type_id(const std::type_info& type) {
  return fnv1a(type.name());
}

}  // namespace compas::base

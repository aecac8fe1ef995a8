#include "compas/base/stores.hpp"

#include <stdexcept>

namespace compas::base {

std::string to_string(Stores s) {
  switch (s) {
    case Stores::automatic:
      return "auto";
    case Stores::cached:
      return "cached";
    case Stores::streaming:
      return "streaming";
    case Stores::direct:
      return "direct";
  }
  return "?";
}

Stores parse_stores(const std::string& what, const std::string& text, bool direct_allowed) {
  if (text == "auto") return Stores::automatic;
  if (text == "cached") return Stores::cached;
  if (text == "streaming") return Stores::streaming;
  if (text == "direct" && direct_allowed) return Stores::direct;
  throw std::invalid_argument(what + " '" + text + "' is not allowed: auto, cached, streaming" +
                              (direct_allowed ? " or direct" : ""));
}

}  // namespace compas::base

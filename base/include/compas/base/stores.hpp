// How a kernel or probe stores what it writes: the one choice Laplace, the sort and `compas
// membw` offer (each takes the kinds it has; the names are the flags' values).
#pragma once

#include <string>

namespace compas::base {

enum class Stores {
  automatic,  // the code decides: by a cache rule, or by timing both kinds
  cached,     // ordinary stores: the line is read for ownership, then written back
  streaming,  // non-temporal stores that bypass the caches (then an sfence)
  direct,     // the sort only: no write-combining buffers, each key stored straight to its place
};

// "auto", "cached", "streaming", "direct"
std::string to_string(Stores s);

// "auto", "cached", "streaming", and "direct" when `direct_allowed`. Throws
// std::invalid_argument naming `what` (the flag), the value and what is allowed.
Stores parse_stores(const std::string& what, const std::string& text, bool direct_allowed);

}  // namespace compas::base

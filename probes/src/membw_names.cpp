// Memory-bandwidth probe: the names of kernels, instruction sets and store kinds, and which
// instruction sets this CPU runs. See compas/probes/membw.hpp.
#include "compas/probes/membw.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <stdexcept>

#if defined(__x86_64__)
#define COMPAS_MEMBW_X86 1
#else
#define COMPAS_MEMBW_X86 0
#endif

namespace compas::probes {

// ---- names ----------------------------------------------------------------------------------

std::string to_string(MembwKernel k) {
  switch (k) {
    case MembwKernel::load:
      return "load";
    case MembwKernel::store:
      return "store";
    case MembwKernel::copy:
      return "copy";
    case MembwKernel::triad:
      return "triad";
  }
  return "?";
}

MembwKernel parse_membw_kernel(const std::string& name) {
  if (name == "load" || name == "read") return MembwKernel::load;
  if (name == "store" || name == "write") return MembwKernel::store;
  if (name == "copy") return MembwKernel::copy;
  if (name == "triad") return MembwKernel::triad;
  throw std::invalid_argument("kernel '" + name + "': allowed are load, store, copy, triad");
}

std::vector<MembwKernel> parse_membw_kernels(const std::string& list) {
  std::vector<MembwKernel> out;
  std::size_t pos = 0;
  while (true) {
    const std::size_t comma = list.find(',', pos);
    const std::string item =
        list.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    if (item.empty())
      throw std::invalid_argument("kernels '" + list +
                                  "': expected a list like load,store,copy,triad");
    MembwKernel k;
    try {
      k = parse_membw_kernel(item);
    } catch (const std::invalid_argument&) {
      throw std::invalid_argument("kernels '" + list + "': '" + item +
                                  "' is not one of load, store, copy, triad");
    }
    if (std::find(out.begin(), out.end(), k) == out.end()) out.push_back(k);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return out;
}

int membw_arrays(MembwKernel k) {
  switch (k) {
    case MembwKernel::load:
    case MembwKernel::store:
      return 1;
    case MembwKernel::copy:
      return 2;
    case MembwKernel::triad:
      return 3;
  }
  return 1;
}

int membw_bytes_per_element(MembwKernel k) {
  return 8 * membw_arrays(k);
}

bool membw_has_stores(MembwKernel k) {
  return k != MembwKernel::load;
}

base::Isa best_membw_isa() {
  for (base::Isa isa : {base::Isa::avx512, base::Isa::avx2, base::Isa::sse2})
    if (base::cpu_runs(isa)) return isa;
  return base::Isa::generic;
}

std::optional<base::Isa> parse_membw_isa(const std::string& name) {
  if (name == "auto") return std::nullopt;
  base::Isa isa;
  if (name == "avx512" || name == "avx512f")
    isa = base::Isa::avx512;
  else if (name == "avx2")
    isa = base::Isa::avx2;
  else if (name == "sse2")
    isa = base::Isa::sse2;
  else if (name == "generic" || name == "scalar")
    isa = base::Isa::generic;
  else
    throw std::invalid_argument("isa '" + name +
                                "': allowed are auto, avx512, avx2, sse2, generic");
  if (!base::cpu_runs(isa))
    throw std::invalid_argument("isa '" + name + "': this CPU does not support it (best: " +
                                to_string(best_membw_isa()) + ")");
  return isa;
}

std::string store_mode_name(base::Stores m) {
  switch (m) {
    case base::Stores::automatic:
      return "auto";
    case base::Stores::cached:
      return "temporal";
    case base::Stores::streaming:
      return "non-temporal";
    case base::Stores::direct:
      break;
  }
  return "?";
}

base::Stores parse_store_mode(const std::string& name) {
  if (name == "auto") return base::Stores::automatic;
  if (name == "temporal" || name == "cached") return base::Stores::cached;
  if (name == "non-temporal" || name == "nontemporal" || name == "nt" || name == "streaming")
    return base::Stores::streaming;
  throw std::invalid_argument("stores '" + name +
                              "': allowed are auto, temporal (or cached), non-temporal (or nt, "
                              "streaming)");
}

}  // namespace compas::probes

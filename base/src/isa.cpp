// What this CPU runs (isa.hpp).
#include "compas/base/isa.hpp"

namespace compas::base {

const char* to_string(Isa isa) {
  switch (isa) {
    case Isa::generic:
      return "generic";
    case Isa::sse2:
      return "sse2";
    case Isa::avx2:
      return "avx2";
    case Isa::avx512:
      return "avx512";
  }
  return "?";
}

bool cpu_runs(Isa isa) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  static const bool avx2 = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  }();
  static const bool avx512 = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") != 0;
  }();
  switch (isa) {
    case Isa::generic:
    case Isa::sse2:
      return true;
    case Isa::avx2:
      return avx2;
    case Isa::avx512:
      return avx512;
  }
  return false;
#else
  return isa == Isa::generic;
#endif
}

}  // namespace compas::base

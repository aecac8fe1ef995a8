// Memory-bandwidth probe: kernels (one variant per instruction set, chosen at run time) and the
// driver that runs them on pinned teams of growing size. See compas/perf/membw.hpp.
#include "compas/perf/membw.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <utility>

#include "compas/base/statistics.hpp"
#include "compas/perf/timer.hpp"
#include "compas/threads/domain.hpp"
#include "compas/threads/ops.hpp"
#include "compas/threads/team.hpp"

#if defined(__x86_64__)
#include <immintrin.h>
#define COMPAS_MEMBW_X86 1
#else
#define COMPAS_MEMBW_X86 0
#endif

namespace compas::perf {

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

std::string to_string(MembwIsa isa) {
  switch (isa) {
    case MembwIsa::generic:
      return "generic";
    case MembwIsa::sse2:
      return "sse2";
    case MembwIsa::avx2:
      return "avx2";
    case MembwIsa::avx512:
      return "avx512";
  }
  return "?";
}

bool membw_isa_supported(MembwIsa isa) {
#if COMPAS_MEMBW_X86
  static const bool avx2 = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  }();
  static const bool avx512 = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") != 0;
  }();
  switch (isa) {
    case MembwIsa::generic:
    case MembwIsa::sse2:
      return true;
    case MembwIsa::avx2:
      return avx2;
    case MembwIsa::avx512:
      return avx512;
  }
  return false;
#else
  return isa == MembwIsa::generic;
#endif
}

MembwIsa best_membw_isa() {
  for (MembwIsa isa : {MembwIsa::avx512, MembwIsa::avx2, MembwIsa::sse2})
    if (membw_isa_supported(isa)) return isa;
  return MembwIsa::generic;
}

std::optional<MembwIsa> parse_membw_isa(const std::string& name) {
  if (name == "auto") return std::nullopt;
  MembwIsa isa;
  if (name == "avx512" || name == "avx512f")
    isa = MembwIsa::avx512;
  else if (name == "avx2")
    isa = MembwIsa::avx2;
  else if (name == "sse2")
    isa = MembwIsa::sse2;
  else if (name == "generic" || name == "scalar")
    isa = MembwIsa::generic;
  else
    throw std::invalid_argument("isa '" + name +
                                "': allowed are auto, avx512, avx2, sse2, generic");
  if (!membw_isa_supported(isa))
    throw std::invalid_argument("isa '" + name + "': this CPU does not support it (best: " +
                                to_string(best_membw_isa()) + ")");
  return isa;
}

std::string to_string(StoreMode m) {
  switch (m) {
    case StoreMode::automatic:
      return "auto";
    case StoreMode::temporal:
      return "temporal";
    case StoreMode::non_temporal:
      return "non-temporal";
  }
  return "?";
}

StoreMode parse_store_mode(const std::string& name) {
  if (name == "auto") return StoreMode::automatic;
  if (name == "temporal") return StoreMode::temporal;
  if (name == "non-temporal" || name == "nontemporal" || name == "nt")
    return StoreMode::non_temporal;
  throw std::invalid_argument("stores '" + name + "': allowed are auto, temporal, non-temporal");
}

// ---- sizes ----------------------------------------------------------------------------------

std::string format_size(std::size_t bytes) {
  static const char* const bin[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  static const char* const dec[] = {"B", "KB", "MB", "GB", "TB"};
  char buf[64];
  int ub = 0, ud = 0;
  std::size_t pb = 1, pd = 1;
  while (ub < 4 && bytes / pb >= 1024) pb *= 1024, ++ub;
  while (ud < 4 && bytes / pd >= 1000) pd *= 1000, ++ud;
  // A whole number of the largest binary unit, else of the largest decimal one, else decimals.
  if (bytes % pb == 0)
    std::snprintf(buf, sizeof buf, "%zu %s", bytes / pb, bin[ub]);
  else if (bytes % pd == 0)
    std::snprintf(buf, sizeof buf, "%zu %s", bytes / pd, dec[ud]);
  else
    std::snprintf(buf, sizeof buf, "%.4g %s", static_cast<double>(bytes) / static_cast<double>(pb),
                  bin[ub]);
  return buf;
}

std::uint64_t physical_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return 0;
  return static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page);
}

// ---- kernels --------------------------------------------------------------------------------
//
// Each instruction set has its own load, store, copy and triad. The vector bodies work on whole
// cache lines from a 64-byte-aligned position of the array written to (the one read, for load):
// a scalar head gets there, a scalar tail finishes. Non-temporal variants end with an sfence so
// the streamed lines are globally visible before the caller's next barrier.

namespace {

inline bool misaligned(const void* p, std::uintptr_t bytes) {
  return (reinterpret_cast<std::uintptr_t>(p) & (bytes - 1)) != 0;
}

// Generic / sse2: plain loops the compiler vectorizes with the baseline instruction set, eight
// independent partial sums for the reduction.
double load_generic(const double* a, std::size_t n) {
  double s0 = 0, s1 = 0, s2 = 0, s3 = 0, s4 = 0, s5 = 0, s6 = 0, s7 = 0;
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    s0 += a[i];
    s1 += a[i + 1];
    s2 += a[i + 2];
    s3 += a[i + 3];
    s4 += a[i + 4];
    s5 += a[i + 5];
    s6 += a[i + 6];
    s7 += a[i + 7];
  }
  double s = ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7));
  for (; i < n; ++i) s += a[i];
  return s;
}

void store_generic(double* __restrict a, std::size_t n, double s) {
  for (std::size_t i = 0; i < n; ++i) a[i] = s;
}

void copy_generic(double* __restrict c, const double* __restrict a, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) c[i] = a[i];
}

void triad_generic(double* __restrict a, const double* __restrict b, const double* __restrict c,
                   double s, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) a[i] = b[i] + s * c[i];
}

#if COMPAS_MEMBW_X86

void store_sse2_nt(double* a, std::size_t n, double s) {
  std::size_t i = 0;
  for (; i < n && misaligned(a + i, 16); ++i) a[i] = s;
  const __m128d v = _mm_set1_pd(s);
  for (; i + 8 <= n; i += 8) {
    _mm_stream_pd(a + i, v);
    _mm_stream_pd(a + i + 2, v);
    _mm_stream_pd(a + i + 4, v);
    _mm_stream_pd(a + i + 6, v);
  }
  for (; i + 2 <= n; i += 2) _mm_stream_pd(a + i, v);
  _mm_sfence();
  for (; i < n; ++i) a[i] = s;
}

void copy_sse2_nt(double* c, const double* a, std::size_t n) {
  std::size_t i = 0;
  for (; i < n && misaligned(c + i, 16); ++i) c[i] = a[i];
  for (; i + 8 <= n; i += 8) {
    const __m128d x0 = _mm_loadu_pd(a + i), x1 = _mm_loadu_pd(a + i + 2);
    const __m128d x2 = _mm_loadu_pd(a + i + 4), x3 = _mm_loadu_pd(a + i + 6);
    _mm_stream_pd(c + i, x0);
    _mm_stream_pd(c + i + 2, x1);
    _mm_stream_pd(c + i + 4, x2);
    _mm_stream_pd(c + i + 6, x3);
  }
  for (; i + 2 <= n; i += 2) _mm_stream_pd(c + i, _mm_loadu_pd(a + i));
  _mm_sfence();
  for (; i < n; ++i) c[i] = a[i];
}

void triad_sse2_nt(double* a, const double* b, const double* c, double s, std::size_t n) {
  std::size_t i = 0;
  for (; i < n && misaligned(a + i, 16); ++i) a[i] = b[i] + s * c[i];
  const __m128d vs = _mm_set1_pd(s);
  for (; i + 4 <= n; i += 4) {
    const __m128d x0 = _mm_add_pd(_mm_loadu_pd(b + i), _mm_mul_pd(vs, _mm_loadu_pd(c + i)));
    const __m128d x1 = _mm_add_pd(_mm_loadu_pd(b + i + 2), _mm_mul_pd(vs, _mm_loadu_pd(c + i + 2)));
    _mm_stream_pd(a + i, x0);
    _mm_stream_pd(a + i + 2, x1);
  }
  _mm_sfence();
  for (; i < n; ++i) a[i] = b[i] + s * c[i];
}

// AVX2: four 32-byte vectors (two cache lines) per iteration, eight accumulators for load.
#define COMPAS_AVX2 __attribute__((target("avx2,fma")))

COMPAS_AVX2 double load_avx2(const double* a, std::size_t n) {
  std::size_t i = 0;
  double head = 0;
  for (; i < n && misaligned(a + i, 64); ++i) head += a[i];
  __m256d s0 = _mm256_setzero_pd(), s1 = s0, s2 = s0, s3 = s0, s4 = s0, s5 = s0, s6 = s0, s7 = s0;
  for (; i + 32 <= n; i += 32) {
    s0 = _mm256_add_pd(s0, _mm256_load_pd(a + i));
    s1 = _mm256_add_pd(s1, _mm256_load_pd(a + i + 4));
    s2 = _mm256_add_pd(s2, _mm256_load_pd(a + i + 8));
    s3 = _mm256_add_pd(s3, _mm256_load_pd(a + i + 12));
    s4 = _mm256_add_pd(s4, _mm256_load_pd(a + i + 16));
    s5 = _mm256_add_pd(s5, _mm256_load_pd(a + i + 20));
    s6 = _mm256_add_pd(s6, _mm256_load_pd(a + i + 24));
    s7 = _mm256_add_pd(s7, _mm256_load_pd(a + i + 28));
  }
  for (; i + 4 <= n; i += 4) s0 = _mm256_add_pd(s0, _mm256_load_pd(a + i));
  s0 = _mm256_add_pd(_mm256_add_pd(_mm256_add_pd(s0, s1), _mm256_add_pd(s2, s3)),
                     _mm256_add_pd(_mm256_add_pd(s4, s5), _mm256_add_pd(s6, s7)));
  alignas(32) double lanes[4];
  _mm256_store_pd(lanes, s0);
  double s = head + ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3]));
  for (; i < n; ++i) s += a[i];
  return s;
}

COMPAS_AVX2 void store_avx2(double* a, std::size_t n, double s, bool nt) {
  std::size_t i = 0;
  for (; i < n && misaligned(a + i, 64); ++i) a[i] = s;
  const __m256d v = _mm256_set1_pd(s);
  if (nt) {
    for (; i + 16 <= n; i += 16) {
      _mm256_stream_pd(a + i, v);
      _mm256_stream_pd(a + i + 4, v);
      _mm256_stream_pd(a + i + 8, v);
      _mm256_stream_pd(a + i + 12, v);
    }
    for (; i + 4 <= n; i += 4) _mm256_stream_pd(a + i, v);
    _mm_sfence();
  } else {
    for (; i + 16 <= n; i += 16) {
      _mm256_store_pd(a + i, v);
      _mm256_store_pd(a + i + 4, v);
      _mm256_store_pd(a + i + 8, v);
      _mm256_store_pd(a + i + 12, v);
    }
    for (; i + 4 <= n; i += 4) _mm256_store_pd(a + i, v);
  }
  for (; i < n; ++i) a[i] = s;
}

COMPAS_AVX2 void copy_avx2(double* c, const double* a, std::size_t n, bool nt) {
  std::size_t i = 0;
  for (; i < n && misaligned(c + i, 64); ++i) c[i] = a[i];
  if (nt) {
    for (; i + 16 <= n; i += 16) {
      const __m256d x0 = _mm256_loadu_pd(a + i), x1 = _mm256_loadu_pd(a + i + 4);
      const __m256d x2 = _mm256_loadu_pd(a + i + 8), x3 = _mm256_loadu_pd(a + i + 12);
      _mm256_stream_pd(c + i, x0);
      _mm256_stream_pd(c + i + 4, x1);
      _mm256_stream_pd(c + i + 8, x2);
      _mm256_stream_pd(c + i + 12, x3);
    }
    for (; i + 4 <= n; i += 4) _mm256_stream_pd(c + i, _mm256_loadu_pd(a + i));
    _mm_sfence();
  } else {
    for (; i + 16 <= n; i += 16) {
      const __m256d x0 = _mm256_loadu_pd(a + i), x1 = _mm256_loadu_pd(a + i + 4);
      const __m256d x2 = _mm256_loadu_pd(a + i + 8), x3 = _mm256_loadu_pd(a + i + 12);
      _mm256_store_pd(c + i, x0);
      _mm256_store_pd(c + i + 4, x1);
      _mm256_store_pd(c + i + 8, x2);
      _mm256_store_pd(c + i + 12, x3);
    }
    for (; i + 4 <= n; i += 4) _mm256_store_pd(c + i, _mm256_loadu_pd(a + i));
  }
  for (; i < n; ++i) c[i] = a[i];
}

COMPAS_AVX2 inline __m256d triad_at_avx2(const double* b, const double* c, __m256d vs,
                                         std::size_t k) {
  return _mm256_fmadd_pd(vs, _mm256_loadu_pd(c + k), _mm256_loadu_pd(b + k));
}

COMPAS_AVX2 void triad_avx2(double* a, const double* b, const double* c, double s, std::size_t n,
                            bool nt) {
  std::size_t i = 0;
  for (; i < n && misaligned(a + i, 64); ++i) a[i] = b[i] + s * c[i];
  const __m256d vs = _mm256_set1_pd(s);
  if (nt) {
    for (; i + 16 <= n; i += 16) {
      const __m256d x0 = triad_at_avx2(b, c, vs, i), x1 = triad_at_avx2(b, c, vs, i + 4),
                    x2 = triad_at_avx2(b, c, vs, i + 8), x3 = triad_at_avx2(b, c, vs, i + 12);
      _mm256_stream_pd(a + i, x0);
      _mm256_stream_pd(a + i + 4, x1);
      _mm256_stream_pd(a + i + 8, x2);
      _mm256_stream_pd(a + i + 12, x3);
    }
    for (; i + 4 <= n; i += 4) _mm256_stream_pd(a + i, triad_at_avx2(b, c, vs, i));
    _mm_sfence();
  } else {
    for (; i + 16 <= n; i += 16) {
      const __m256d x0 = triad_at_avx2(b, c, vs, i), x1 = triad_at_avx2(b, c, vs, i + 4),
                    x2 = triad_at_avx2(b, c, vs, i + 8), x3 = triad_at_avx2(b, c, vs, i + 12);
      _mm256_store_pd(a + i, x0);
      _mm256_store_pd(a + i + 4, x1);
      _mm256_store_pd(a + i + 8, x2);
      _mm256_store_pd(a + i + 12, x3);
    }
    for (; i + 4 <= n; i += 4) _mm256_store_pd(a + i, triad_at_avx2(b, c, vs, i));
  }
  for (; i < n; ++i) a[i] = b[i] + s * c[i];
}

// AVX-512: four 64-byte vectors (four cache lines) per iteration, eight accumulators for load.
#define COMPAS_AVX512 __attribute__((target("avx512f")))

COMPAS_AVX512 double load_avx512(const double* a, std::size_t n) {
  std::size_t i = 0;
  double head = 0;
  for (; i < n && misaligned(a + i, 64); ++i) head += a[i];
  __m512d s0 = _mm512_setzero_pd(), s1 = s0, s2 = s0, s3 = s0, s4 = s0, s5 = s0, s6 = s0, s7 = s0;
  for (; i + 64 <= n; i += 64) {
    s0 = _mm512_add_pd(s0, _mm512_load_pd(a + i));
    s1 = _mm512_add_pd(s1, _mm512_load_pd(a + i + 8));
    s2 = _mm512_add_pd(s2, _mm512_load_pd(a + i + 16));
    s3 = _mm512_add_pd(s3, _mm512_load_pd(a + i + 24));
    s4 = _mm512_add_pd(s4, _mm512_load_pd(a + i + 32));
    s5 = _mm512_add_pd(s5, _mm512_load_pd(a + i + 40));
    s6 = _mm512_add_pd(s6, _mm512_load_pd(a + i + 48));
    s7 = _mm512_add_pd(s7, _mm512_load_pd(a + i + 56));
  }
  for (; i + 8 <= n; i += 8) s0 = _mm512_add_pd(s0, _mm512_load_pd(a + i));
  s0 = _mm512_add_pd(_mm512_add_pd(_mm512_add_pd(s0, s1), _mm512_add_pd(s2, s3)),
                     _mm512_add_pd(_mm512_add_pd(s4, s5), _mm512_add_pd(s6, s7)));
  // Lanes summed by hand: GCC 12's _mm512_reduce_add_pd warns (-Wuninitialized) in its header.
  alignas(64) double lanes[8];
  _mm512_store_pd(lanes, s0);
  double s = head + (((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) +
                     ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7])));
  for (; i < n; ++i) s += a[i];
  return s;
}

COMPAS_AVX512 void store_avx512(double* a, std::size_t n, double s, bool nt) {
  std::size_t i = 0;
  for (; i < n && misaligned(a + i, 64); ++i) a[i] = s;
  const __m512d v = _mm512_set1_pd(s);
  if (nt) {
    for (; i + 32 <= n; i += 32) {
      _mm512_stream_pd(a + i, v);
      _mm512_stream_pd(a + i + 8, v);
      _mm512_stream_pd(a + i + 16, v);
      _mm512_stream_pd(a + i + 24, v);
    }
    for (; i + 8 <= n; i += 8) _mm512_stream_pd(a + i, v);
    _mm_sfence();
  } else {
    for (; i + 32 <= n; i += 32) {
      _mm512_store_pd(a + i, v);
      _mm512_store_pd(a + i + 8, v);
      _mm512_store_pd(a + i + 16, v);
      _mm512_store_pd(a + i + 24, v);
    }
    for (; i + 8 <= n; i += 8) _mm512_store_pd(a + i, v);
  }
  for (; i < n; ++i) a[i] = s;
}

COMPAS_AVX512 void copy_avx512(double* c, const double* a, std::size_t n, bool nt) {
  std::size_t i = 0;
  for (; i < n && misaligned(c + i, 64); ++i) c[i] = a[i];
  if (nt) {
    for (; i + 32 <= n; i += 32) {
      const __m512d x0 = _mm512_loadu_pd(a + i), x1 = _mm512_loadu_pd(a + i + 8);
      const __m512d x2 = _mm512_loadu_pd(a + i + 16), x3 = _mm512_loadu_pd(a + i + 24);
      _mm512_stream_pd(c + i, x0);
      _mm512_stream_pd(c + i + 8, x1);
      _mm512_stream_pd(c + i + 16, x2);
      _mm512_stream_pd(c + i + 24, x3);
    }
    for (; i + 8 <= n; i += 8) _mm512_stream_pd(c + i, _mm512_loadu_pd(a + i));
    _mm_sfence();
  } else {
    for (; i + 32 <= n; i += 32) {
      const __m512d x0 = _mm512_loadu_pd(a + i), x1 = _mm512_loadu_pd(a + i + 8);
      const __m512d x2 = _mm512_loadu_pd(a + i + 16), x3 = _mm512_loadu_pd(a + i + 24);
      _mm512_store_pd(c + i, x0);
      _mm512_store_pd(c + i + 8, x1);
      _mm512_store_pd(c + i + 16, x2);
      _mm512_store_pd(c + i + 24, x3);
    }
    for (; i + 8 <= n; i += 8) _mm512_store_pd(c + i, _mm512_loadu_pd(a + i));
  }
  for (; i < n; ++i) c[i] = a[i];
}

COMPAS_AVX512 inline __m512d triad_at_avx512(const double* b, const double* c, __m512d vs,
                                             std::size_t k) {
  return _mm512_fmadd_pd(vs, _mm512_loadu_pd(c + k), _mm512_loadu_pd(b + k));
}

COMPAS_AVX512 void triad_avx512(double* a, const double* b, const double* c, double s,
                                std::size_t n, bool nt) {
  std::size_t i = 0;
  for (; i < n && misaligned(a + i, 64); ++i) a[i] = b[i] + s * c[i];
  const __m512d vs = _mm512_set1_pd(s);
  if (nt) {
    for (; i + 32 <= n; i += 32) {
      const __m512d x0 = triad_at_avx512(b, c, vs, i), x1 = triad_at_avx512(b, c, vs, i + 8),
                    x2 = triad_at_avx512(b, c, vs, i + 16), x3 = triad_at_avx512(b, c, vs, i + 24);
      _mm512_stream_pd(a + i, x0);
      _mm512_stream_pd(a + i + 8, x1);
      _mm512_stream_pd(a + i + 16, x2);
      _mm512_stream_pd(a + i + 24, x3);
    }
    for (; i + 8 <= n; i += 8) _mm512_stream_pd(a + i, triad_at_avx512(b, c, vs, i));
    _mm_sfence();
  } else {
    for (; i + 32 <= n; i += 32) {
      const __m512d x0 = triad_at_avx512(b, c, vs, i), x1 = triad_at_avx512(b, c, vs, i + 8),
                    x2 = triad_at_avx512(b, c, vs, i + 16), x3 = triad_at_avx512(b, c, vs, i + 24);
      _mm512_store_pd(a + i, x0);
      _mm512_store_pd(a + i + 8, x1);
      _mm512_store_pd(a + i + 16, x2);
      _mm512_store_pd(a + i + 24, x3);
    }
    for (; i + 8 <= n; i += 8) _mm512_store_pd(a + i, triad_at_avx512(b, c, vs, i));
  }
  for (; i < n; ++i) a[i] = b[i] + s * c[i];
}

#endif  // COMPAS_MEMBW_X86

void require_isa(MembwIsa isa) {
  if (!membw_isa_supported(isa))
    throw std::invalid_argument("isa '" + to_string(isa) + "': not supported by this CPU");
}

}  // namespace

namespace membw {

double load(MembwIsa isa, const double* a, std::size_t n) {
  require_isa(isa);
#if COMPAS_MEMBW_X86
  if (isa == MembwIsa::avx512) return load_avx512(a, n);
  if (isa == MembwIsa::avx2) return load_avx2(a, n);
#endif
  return load_generic(a, n);
}

void store(MembwIsa isa, double* a, std::size_t n, double s, bool non_temporal) {
  require_isa(isa);
#if COMPAS_MEMBW_X86
  if (isa == MembwIsa::avx512) return store_avx512(a, n, s, non_temporal);
  if (isa == MembwIsa::avx2) return store_avx2(a, n, s, non_temporal);
  if (non_temporal && isa == MembwIsa::sse2) return store_sse2_nt(a, n, s);
#endif
  store_generic(a, n, s);
}

void copy(MembwIsa isa, double* c, const double* a, std::size_t n, bool non_temporal) {
  require_isa(isa);
#if COMPAS_MEMBW_X86
  if (isa == MembwIsa::avx512) return copy_avx512(c, a, n, non_temporal);
  if (isa == MembwIsa::avx2) return copy_avx2(c, a, n, non_temporal);
  if (non_temporal && isa == MembwIsa::sse2) return copy_sse2_nt(c, a, n);
#endif
  copy_generic(c, a, n);
}

void triad(MembwIsa isa, double* a, const double* b, const double* c, double s, std::size_t n,
           bool non_temporal) {
  require_isa(isa);
#if COMPAS_MEMBW_X86
  if (isa == MembwIsa::avx512) return triad_avx512(a, b, c, s, n, non_temporal);
  if (isa == MembwIsa::avx2) return triad_avx2(a, b, c, s, n, non_temporal);
  if (non_temporal && isa == MembwIsa::sse2) return triad_sse2_nt(a, b, c, s, n);
#endif
  triad_generic(a, b, c, s, n);
}

}  // namespace membw

// ---- saturation point -----------------------------------------------------------------------

std::optional<int> membw_saturation_point(const std::vector<int>& threads,
                                          const std::vector<double>& total_gbs, double min_gain) {
  if (threads.size() != total_gbs.size())
    throw std::invalid_argument("saturation point: " + std::to_string(threads.size()) +
                                " thread counts but " + std::to_string(total_gbs.size()) +
                                " bandwidths");
  // The relative slack keeps a gain of exactly min_gain (11 after 10) from counting as less
  // through rounding.
  for (std::size_t i = 0; i + 1 < threads.size(); ++i)
    if (total_gbs[i + 1] < total_gbs[i] * (1.0 + min_gain) * (1.0 - 1e-12)) return threads[i];
  return std::nullopt;
}

Saturation membw_saturation(const std::vector<int>& threads,
                            const std::vector<BandwidthSpread>& total, double min_gain) {
  if (threads.size() != total.size())
    throw std::invalid_argument("saturation point: " + std::to_string(threads.size()) +
                                " thread counts but " + std::to_string(total.size()) +
                                " bandwidths");
  const double threshold = (1.0 + min_gain) * (1.0 - 1e-12);  // as membw_saturation_point
  Saturation s;
  for (std::size_t i = 0; i + 1 < threads.size(); ++i) {
    const BandwidthSpread &a = total[i], &b = total[i + 1];
    const double widest = b.max / a.min, narrowest = b.min / a.max;
    if (widest < threshold) {
      s.threads = threads[i];
      return s;
    }
    if (narrowest >= threshold) continue;
    s.resolved = false;
    s.from = threads[i];
    s.to = threads[i + 1];
    s.gain = b.median / a.median - 1;
    s.gain_min = narrowest - 1;
    s.gain_max = widest - 1;
    return s;
  }
  return s;
}

std::string Saturation::note() const {
  if (resolved) return "";
  char buf[224];
  std::snprintf(buf, sizeof buf,
                "not resolved: from %d to %d threads the total grows %+.0f%% (%+.0f%% to %+.0f%% "
                "over the repeats), across the 10%% threshold",
                from, to, gain * 100, gain_min * 100, gain_max * 100);
  return buf;
}

// ---- the driver -----------------------------------------------------------------------------

namespace {

constexpr std::size_t kHugePage = std::size_t{2} << 20;
constexpr std::size_t kLine = 8;  // doubles per 64-byte cache line
// Arrays of one kernel start this many bytes apart beyond a 2 MiB boundary, so that the
// element i of each array does not map to the same 4 KiB offset (4K aliasing between the
// loads of one array and the stores of another).
constexpr std::size_t kArrayShift = 5 * 64;

std::size_t round_up(std::size_t x, std::size_t to) {
  return (x + to - 1) / to * to;
}

// Anonymous memory for the arrays of one kernel, 2 MiB aligned, transparent huge pages asked
// for. Untouched until the threads first-touch their blocks.
class Arena {
 public:
  Arena(std::size_t bytes, bool huge) : bytes_(bytes + kHugePage) {
    raw_ = ::mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw_ == MAP_FAILED)
      throw std::runtime_error("membw: cannot map " + format_size(bytes_) + ": " +
                               std::strerror(errno));
    base_ = reinterpret_cast<char*>(round_up(reinterpret_cast<std::uintptr_t>(raw_), kHugePage));
#ifdef MADV_HUGEPAGE
    if (huge) ::madvise(base_, bytes, MADV_HUGEPAGE);
#else
    (void)huge;
#endif
  }
  ~Arena() {
    ::munmap(raw_, bytes_);
  }
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;
  char* base() const {
    return base_;
  }

 private:
  std::size_t bytes_;
  void* raw_;
  char* base_;
};

// Values the arrays start with: small integers, so every sum and every b + s*c is exact in any
// order and with or without FMA.
inline double pattern_a(std::size_t i) {
  return static_cast<double>(i & 1023);
}
inline double pattern_c(std::size_t i) {
  return static_cast<double>((i >> 10) & 255);
}
constexpr double kScalar = 3.0;
constexpr double kStoreValue = 2.0;

// Start and end of one timed stretch on every thread.
struct Stamps {
  std::vector<std::uint64_t> start, end;  // [thread]
  explicit Stamps(int t) : start(static_cast<std::size_t>(t)), end(static_cast<std::size_t>(t)) {}
  double span_ns() const {
    const auto s = *std::min_element(start.begin(), start.end());
    const auto e = *std::max_element(end.begin(), end.end());
    return static_cast<double>(std::max<std::uint64_t>(e - s, 1));
  }
};

// The kernel variants worth trying: instruction sets x store kinds.
std::vector<std::pair<MembwIsa, bool>> candidates(const threads::Topology& topo,
                                                  const threads::Team& team, MembwKernel kernel,
                                                  const MembwOptions& o) {
  std::vector<MembwIsa> isas;
  if (o.isa) {
    isas.push_back(*o.isa);
  } else {
    isas.push_back(best_membw_isa());
    if (isas[0] == MembwIsa::avx512) isas.push_back(MembwIsa::avx2);
  }
  std::vector<std::pair<MembwIsa, bool>> out;
  for (auto isa : isas) {
    const bool nt_possible = membw_has_stores(kernel) && isa != MembwIsa::generic;
    const bool try_both = nt_possible && o.stores == StoreMode::automatic &&
                          o.size_bytes > threads::nt_threshold(topo, team.placement());
    if (try_both || !nt_possible || o.stores != StoreMode::non_temporal)
      out.emplace_back(isa, false);
    if (try_both || (nt_possible && o.stores == StoreMode::non_temporal))
      out.emplace_back(isa, true);
  }
  return out;
}

// The region of a kernel's timed repeats. Regions are told apart by the address of their name,
// so each has one literal.
const char* region_name(MembwKernel k) {
  switch (k) {
    case MembwKernel::load:
      return "membw load";
    case MembwKernel::store:
      return "membw store";
    case MembwKernel::copy:
      return "membw copy";
    case MembwKernel::triad:
      return "membw triad";
  }
  return "membw";
}

// Bytes of a cache line, for memory traffic estimated from last-level misses.
int line_bytes(const threads::Topology& topo) {
  int line = 0, level = 0;
  for (const auto& c : topo.caches())
    if (c.type != "instruction" && c.line_bytes > 0 && c.level > level)
      line = c.line_bytes, level = c.level;
  return line > 0 ? line : 64;
}

MembwRecord measure(threads::Team& team, const threads::Topology& topo, MembwKernel kernel,
                    const MembwOptions& o) {
  const int t = team.size();
  const int arrays = membw_arrays(kernel);
  const std::size_t lines = o.size_bytes / (8 * kLine * static_cast<std::size_t>(arrays));
  const std::size_t n = lines * kLine;
  const std::size_t stride = round_up(n * 8, kHugePage) + kArrayShift;
  Arena arena(stride * static_cast<std::size_t>(arrays), o.huge_pages);
  if (o.memory_numa)
    threads::bind_memory_to_numa(topo, arena.base(), stride * static_cast<std::size_t>(arrays),
                                 *o.memory_numa);
  double* arr[3] = {nullptr, nullptr, nullptr};
  for (int j = 0; j < arrays; ++j)
    arr[j] = reinterpret_cast<double*>(arena.base() + stride * static_cast<std::size_t>(j));

  const auto cands = candidates(topo, team, kernel, o);
  const int nc = static_cast<int>(cands.size());
  const int R = o.repeats;
  const std::uint64_t bpe = static_cast<std::uint64_t>(membw_bytes_per_element(kernel));
  std::vector<Stamps> timed(static_cast<std::size_t>(R), Stamps(t));
  constexpr int kCalRounds = 3;
  std::vector<Stamps> cal(static_cast<std::size_t>(nc * kCalRounds), Stamps(t));
  Stamps warm(t);
  int passes = 1;
  int chosen = 0;  // index into cands, written by thread 0
  std::vector<double> cal_best(static_cast<std::size_t>(nc), 0.0);
  std::vector<int> ok(static_cast<std::size_t>(t), 1);
  std::vector<std::size_t> count(static_cast<std::size_t>(t));

  team.run([&](threads::ThreadCtx& c) {
    const auto [l0, l1] = c.block(lines);
    const std::size_t lo = l0 * kLine, hi = l1 * kLine, m = hi - lo;
    const auto me = static_cast<std::size_t>(c.tid());
    count[me] = m;
    double* const a = arr[0] + lo;
    double* const b = arrays > 1 ? arr[1] + lo : nullptr;
    double* const cc = arrays > 2 ? arr[2] + lo : nullptr;
    // First touch: this thread's block of every array lands on this thread's NUMA node.
    double expect = 0;
    switch (kernel) {
      case MembwKernel::load:
        for (std::size_t i = 0; i < m; ++i) expect += a[i] = pattern_a(lo + i);
        break;
      case MembwKernel::store:
        std::memset(a, 0, m * 8);
        break;
      case MembwKernel::copy:  // c[i] = a[i]: a is arr[0], c is arr[1]
        for (std::size_t i = 0; i < m; ++i) a[i] = pattern_a(lo + i);
        std::memset(b, 0, m * 8);
        break;
      case MembwKernel::triad:  // a[i] = b[i] + s*c[i]
        std::memset(a, 0, m * 8);
        for (std::size_t i = 0; i < m; ++i) b[i] = pattern_a(lo + i), cc[i] = pattern_c(lo + i);
        break;
    }
    bool good = true;
    auto pass = [&](int v) {
      const auto [isa, nt] = cands[static_cast<std::size_t>(v)];
      switch (kernel) {
        case MembwKernel::load:
          good &= membw::load(isa, a, m) == expect;
          break;
        case MembwKernel::store:
          membw::store(isa, a, m, kStoreValue, nt);
          break;
        case MembwKernel::copy:
          membw::copy(isa, b, a, m, nt);
          break;
        case MembwKernel::triad:
          membw::triad(isa, a, b, cc, kScalar, m, nt);
          break;
      }
    };
    // `region`: count this stretch as that region when a profile is active; its counters are
    // read outside the stamps.
    auto timed_run = [&](Stamps& st, int reps, int v, const char* region = nullptr) {
      c.barrier();
      std::optional<Region> counted;
      if (region) counted.emplace(c, region);
      st.start[me] = now_ns();
      for (int p = 0; p < reps; ++p) pass(v);
      st.end[me] = now_ns();
    };
    auto total_bytes = [&] {
      double bytes = 0;
      for (auto q : count) bytes += static_cast<double>(q * bpe);
      return bytes;
    };

    // Warm-up sweep, which also sets how many sweeps make one repeat last min_repeat_ms.
    timed_run(warm, 1, 0);
    c.barrier();
    int want = 0;
    if (c.is_leader())
      want = passes =
          static_cast<int>(std::clamp(std::ceil(o.min_repeat_ms * 1e6 / warm.span_ns()), 1.0, 1e6));
    const int reps = c.broadcast(want);

    int variant = 0;
    if (nc > 1) {
      // Every variant kCalRounds times, the order rotated each round so drift hits all alike;
      // the best try of each counts.
      for (int r = 0; r < kCalRounds; ++r)
        for (int k = 0; k < nc; ++k)
          timed_run(cal[static_cast<std::size_t>(r * nc + k)], reps, (k + r) % nc);
      c.barrier();
      if (c.is_leader()) {
        for (int r = 0; r < kCalRounds; ++r)
          for (int k = 0; k < nc; ++k) {
            auto& best = cal_best[static_cast<std::size_t>((k + r) % nc)];
            best = std::max(
                best, total_bytes() * reps / cal[static_cast<std::size_t>(r * nc + k)].span_ns());
          }
        chosen =
            static_cast<int>(std::max_element(cal_best.begin(), cal_best.end()) - cal_best.begin());
      }
      variant = c.broadcast(c.is_leader() ? chosen : 0);
    }

    for (int r = 0; r < R; ++r)
      timed_run(timed[static_cast<std::size_t>(r)], reps, variant, region_name(kernel));
    c.barrier();

    // Check what the kernel left in memory.
    switch (kernel) {
      case MembwKernel::load:
        break;
      case MembwKernel::store:
        for (std::size_t i = 0; i < m; ++i) good &= a[i] == kStoreValue;
        break;
      case MembwKernel::copy:
        for (std::size_t i = 0; i < m; ++i) good &= b[i] == pattern_a(lo + i);
        break;
      case MembwKernel::triad:
        for (std::size_t i = 0; i < m; ++i)
          good &= a[i] == pattern_a(lo + i) + kScalar * pattern_c(lo + i);
        break;
    }
    ok[me] = good ? 1 : 0;
  });

  MembwRecord rec;
  rec.kernel = kernel;
  rec.threads = t;
  rec.cpus = threads::format_cpu_list(team.placement().pu_of_thread);
  rec.oversubscribed = team.placement().oversubscribed;
  rec.elements = n;
  rec.working_set_bytes = n * 8 * static_cast<std::size_t>(arrays);
  rec.passes = passes;
  rec.repeats = R;
  rec.bytes_per_repeat = static_cast<std::uint64_t>(n) * bpe * static_cast<std::uint64_t>(passes);
  const auto [isa, nt] = cands[static_cast<std::size_t>(chosen)];
  rec.isa = isa;
  if (membw_has_stores(kernel)) rec.non_temporal = nt;
  if (nc > 1)
    for (int k = 0; k < nc; ++k) {
      const auto kk = static_cast<std::size_t>(k);
      rec.tried.push_back({cands[kk].first, cands[kk].second, cal_best[kk]});
    }
  std::vector<double> gbs;
  for (const auto& st : timed)
    gbs.push_back(static_cast<double>(rec.bytes_per_repeat) / st.span_ns());
  const auto spread = base::spread(gbs);
  rec.bandwidth_gbs = spread.median;
  rec.min_bandwidth_gbs = spread.min;
  rec.max_bandwidth_gbs = spread.max;
  rec.per_thread_gbs = rec.bandwidth_gbs / t;
  rec.seconds = static_cast<double>(rec.bytes_per_repeat) / (rec.bandwidth_gbs * 1e9);
  for (int k = 0; k < t; ++k) {
    const auto kk = static_cast<std::size_t>(k);
    const double bytes = static_cast<double>(count[kk] * bpe) * passes;
    std::vector<double> own;
    for (const auto& st : timed)
      own.push_back(bytes /
                    static_cast<double>(std::max<std::uint64_t>(st.end[kk] - st.start[kk], 1)));
    rec.thread_gbs.push_back(base::median(std::move(own)));
  }
  rec.verified = std::all_of(ok.begin(), ok.end(), [](int v) { return v == 1; });
  return rec;
}

}  // namespace

MembwResult run_membw(const threads::Topology& topo, const MembwOptions& options) {
  MembwOptions o = options;
  if (o.threads.empty()) throw std::invalid_argument("membw: no thread counts given");
  for (int t : o.threads)
    if (t < 1)
      throw std::invalid_argument("membw: thread count " + std::to_string(t) + " is not positive");
  std::sort(o.threads.begin(), o.threads.end());
  o.threads.erase(std::unique(o.threads.begin(), o.threads.end()), o.threads.end());
  if (o.kernels.empty()) throw std::invalid_argument("membw: no kernels given");
  if (o.repeats < 1)
    throw std::invalid_argument("membw: repeats " + std::to_string(o.repeats) +
                                " must be at least 1");
  if (!(o.min_repeat_ms >= 0))
    throw std::invalid_argument("membw: min_repeat_ms must not be negative");
  if (o.isa) require_isa(*o.isa);
  const int tmax = o.threads.back();
  int max_arrays = 1;
  for (auto k : o.kernels) max_arrays = std::max(max_arrays, membw_arrays(k));
  const std::size_t min_bytes =
      static_cast<std::size_t>(max_arrays) * 8 * kLine * static_cast<std::size_t>(tmax);
  if (o.size_bytes < min_bytes)
    throw std::invalid_argument("size '" + std::to_string(o.size_bytes) + "': too small for " +
                                std::to_string(tmax) + " threads; need at least " +
                                std::to_string(min_bytes) +
                                " bytes (one 64-byte line per array per thread)");
  const std::uint64_t phys = physical_memory_bytes();
  if (phys > 0 && o.size_bytes > phys / 2)
    throw std::invalid_argument(
        "size '" + format_size(o.size_bytes) + "' (" + std::to_string(o.size_bytes) +
        " bytes) is more than half of physical memory (" + format_size(phys) + ")");
  // Check every placement before measuring anything, so a bad flag fails at once.
  for (int t : o.threads) threads::place_threads(topo, t, o.bind, o.oversubscribe);

  MembwResult result;
  result.threads = o.threads;
  for (int t : o.threads) {
    threads::TeamOptions to;
    to.threads = t;
    to.bind = o.bind;
    to.allow_oversubscribe = o.oversubscribe;
    to.pin = !topo.is_synthetic();
    threads::Team team(topo, to);
    std::optional<Profile> profile;
    if (!o.events.requested.empty()) profile.emplace(team, o.events);
    for (auto k : o.kernels) {
      MembwRecord rec = measure(team, topo, k, o);
      if (profile) {
        std::vector<RegionSample> mine;
        for (auto& sample : profile->samples())
          if (sample.region == region_name(k)) mine.push_back(std::move(sample));
        const WorkModel work{0, static_cast<double>(rec.bytes_per_repeat) * rec.repeats};
        auto summary = aggregate(mine, line_bytes(topo), {{region_name(k), work}});
        if (!summary.empty()) {
          rec.region = std::move(summary.front());
          rec.region->region = to_string(k) + " T=" + std::to_string(t);
        }
      }
      result.records.push_back(std::move(rec));
    }
    if (profile)
      for (auto& e : profile->thread_errors())
        if (std::find(result.counter_errors.begin(), result.counter_errors.end(), e) ==
            result.counter_errors.end())
          result.counter_errors.push_back(std::move(e));
  }
  std::stable_sort(result.records.begin(), result.records.end(),
                   [&](const MembwRecord& x, const MembwRecord& y) {
                     const auto ix = std::find(o.kernels.begin(), o.kernels.end(), x.kernel);
                     const auto iy = std::find(o.kernels.begin(), o.kernels.end(), y.kernel);
                     return ix != iy ? ix < iy : x.threads < y.threads;
                   });
  for (auto k : o.kernels) {
    MembwSummary s;
    s.kernel = k;
    std::vector<int> ts;
    std::vector<BandwidthSpread> bw;
    int nt = 0, temporal = 0;
    for (const auto& r : result.records) {
      if (r.kernel != k) continue;
      ts.push_back(r.threads);
      bw.push_back({r.bandwidth_gbs, r.min_bandwidth_gbs, r.max_bandwidth_gbs});
      if (r.bandwidth_gbs > s.peak_gbs) s.peak_gbs = r.bandwidth_gbs, s.peak_threads = r.threads;
      if (r.non_temporal) (*r.non_temporal ? nt : temporal)++;
    }
    const Saturation sat = membw_saturation(ts, bw);
    s.saturation_threads = sat.threads;
    s.saturation_resolved = sat.resolved;
    s.saturation_note = sat.note();
    s.max_threads = ts.empty() ? 0 : ts.back();
    s.counts = static_cast<int>(ts.size());
    s.stores = !membw_has_stores(k) ? "none"
               : nt && temporal     ? "mixed"
               : nt                 ? "non-temporal"
                                    : "temporal";
    result.summaries.push_back(s);
  }
  return result;
}

}  // namespace compas::perf

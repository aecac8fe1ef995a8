// Machine primitives shared by the layers: the pause of a spin loop and futex sleeps and wakes on
// a 32-bit word (Linux).
#pragma once

#include <atomic>
#include <cstdint>

namespace compas::base {

// One pause of a spin loop: tells the core that this thread busy-waits (x86 pause, Arm yield).
inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#else
  std::atomic_signal_fence(std::memory_order_seq_cst);
#endif
}

// Who may wait on and wake a futex word: the threads of this process only (the kernel's faster
// private futexes) or any process that maps the word (shared memory).
enum class FutexScope { process, shared };

// Sleeps while *word == expected, at most timeout_ns nanoseconds (< 0: no limit). May return
// early (a wake, a signal, a spurious wake-up); callers check their condition again.
void futex_wait(const std::uint32_t* word, std::uint32_t expected, long timeout_ns = -1,
                FutexScope scope = FutexScope::process) noexcept;
// Wakes at most `count` sleepers of `word` (futex_wake_all: every one).
void futex_wake(const std::uint32_t* word, int count,
                FutexScope scope = FutexScope::process) noexcept;
void futex_wake_all(const std::uint32_t* word, FutexScope scope = FutexScope::process) noexcept;

// The same on an atomic word.
inline const std::uint32_t* futex_word(const std::atomic<std::uint32_t>& a) noexcept {
  static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t));
  return reinterpret_cast<const std::uint32_t*>(&a);
}
inline void futex_wait(const std::atomic<std::uint32_t>& a, std::uint32_t expected,
                       long timeout_ns = -1, FutexScope scope = FutexScope::process) noexcept {
  futex_wait(futex_word(a), expected, timeout_ns, scope);
}
inline void futex_wake(const std::atomic<std::uint32_t>& a, int count,
                       FutexScope scope = FutexScope::process) noexcept {
  futex_wake(futex_word(a), count, scope);
}
inline void futex_wake_all(const std::atomic<std::uint32_t>& a,
                           FutexScope scope = FutexScope::process) noexcept {
  futex_wake_all(futex_word(a), scope);
}

}  // namespace compas::base

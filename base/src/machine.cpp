#include "compas/base/machine.hpp"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <climits>

namespace compas::base {

namespace {

int op(int futex_op, FutexScope scope) {
  return scope == FutexScope::process ? futex_op | FUTEX_PRIVATE_FLAG : futex_op;
}

}  // namespace

void futex_wait(const std::uint32_t* word, std::uint32_t expected, long timeout_ns,
                FutexScope scope) noexcept {
  timespec ts{timeout_ns / 1'000'000'000, timeout_ns % 1'000'000'000};
  ::syscall(SYS_futex, word, op(FUTEX_WAIT, scope), expected, timeout_ns < 0 ? nullptr : &ts,
            nullptr, 0);
}

void futex_wake(const std::uint32_t* word, int count, FutexScope scope) noexcept {
  ::syscall(SYS_futex, word, op(FUTEX_WAKE, scope), count, nullptr, nullptr, 0);
}

void futex_wake_all(const std::uint32_t* word, FutexScope scope) noexcept {
  futex_wake(word, INT_MAX, scope);
}

}  // namespace compas::base

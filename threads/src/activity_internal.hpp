// Internal hooks of the activity accounting, used by wait.cpp.
#pragma once

#include <atomic>
#include <cstdint>

namespace compas::threads::detail {

extern std::atomic<bool> g_wait_accounting;
std::uint64_t wait_clock_ns() noexcept;
void record_wait(std::uint64_t ns) noexcept;

}  // namespace compas::threads::detail

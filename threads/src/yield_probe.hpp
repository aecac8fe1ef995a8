// Whether a yield hands the CPU over to another runnable thread on it (the oversubscribed `auto`
// wait uses yields only where it does; yields_hand_over() in wait.hpp runs this once per process).
#pragma once

#include <chrono>

namespace compas::threads::detail {

// Two threads pinned to one CPU of this process take `turns` turns each through a flag, each
// calling `yield` while it is not its turn. True when all turns are done within `limit`; false
// when the limit passes first (a yield that keeps the yielder running until the scheduler's next
// tick makes every turn cost a tick) or a thread cannot be pinned.
bool yield_hands_over(void (*yield)(), int turns, std::chrono::nanoseconds limit);

}  // namespace compas::threads::detail

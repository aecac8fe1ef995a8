// What the tests of mismatched collectives check on every process: the message a call throws, and
// that every process threw the same one (a CollectiveError is said alike everywhere).
#pragma once

#include <gtest/gtest.h>

#include <exception>
#include <functional>
#include <string>
#include <vector>

#include "../common/job_main.hpp"
#include "compas/compas.hpp"

namespace alike {

// The message of what `call` throws; "" when it returns.
template <class F>
std::string error_of(F&& call) {
  try {
    call();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

// Every process holds the same `message` (compared by hash and length in one allgather each).
inline void expect_everywhere(const std::string& message) {
  const std::size_t h = std::hash<std::string>{}(message);
  const std::vector<std::size_t> hashes = compas::allgather(*g_rt, h);
  const std::vector<std::size_t> lengths = compas::allgather(*g_rt, message.size());
  for (std::size_t r = 0; r < hashes.size(); ++r) {
    EXPECT_EQ(hashes[r], h) << "process " << r << " has another message than this one: " << message;
    EXPECT_EQ(lengths[r], message.size()) << "process " << r;
  }
}

}  // namespace alike

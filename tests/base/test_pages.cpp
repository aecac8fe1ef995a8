// Memory granules and buffers (compas/base/pages.hpp): rounding that refuses to wrap, huge-page
// aligned mappings and heap buffers of the sizes asked for.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

#include "compas/base/pages.hpp"

namespace {

namespace cb = compas::base;

TEST(Pages, RoundUpReachesTheNextMultipleAndRefusesToWrap) {
  EXPECT_EQ(cb::round_up(0, 64), 0u);
  EXPECT_EQ(cb::round_up(1, 64), 64u);
  EXPECT_EQ(cb::round_up(64, 64), 64u);
  EXPECT_EQ(cb::round_up(65, 64), 128u);
  EXPECT_EQ(cb::round_up(SIZE_MAX - 63, 64), SIZE_MAX - 63);  // a multiple already
  try {
    cb::round_up(SIZE_MAX - 10, 64, "window data");
    ADD_FAILURE() << "wrapped";
  } catch (const std::length_error& e) {
    EXPECT_NE(std::string(e.what()).find("window data: "), std::string::npos) << e.what();
  }
}

TEST(Pages, AMappingStartsOnAHugePageAndCoversWholeHugePages) {
  cb::HugePageMapping m(3 * cb::kHugePage + 5, true, "test");
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(m.data()) % cb::kHugePage, 0u);
  EXPECT_EQ(m.bytes(), 4 * cb::kHugePage);
  std::memset(m.data(), 7, m.bytes());  // every byte is ours to write
  EXPECT_EQ(m.data()[m.bytes() - 1], 7);
  cb::HugePageMapping moved(std::move(m));
  EXPECT_EQ(moved.bytes(), 4 * cb::kHugePage);
  EXPECT_EQ(m.data(), nullptr);  // NOLINT(bugprone-use-after-move): the moved-from state
  try {
    cb::HugePageMapping too_big(SIZE_MAX - cb::kHugePage, false, "the probe's buffer");
    ADD_FAILURE() << "mapped";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("the probe's buffer"), std::string::npos) << e.what();
  }
}

TEST(Pages, HeapBuffersArePageAlignedBelowAHugePageAndHugePageAlignedFromIt) {
  std::size_t size = 0;
  auto small = cb::huge_aligned_alloc(100, &size);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(small.get()) % cb::kPage, 0u);
  EXPECT_EQ(size, cb::kPage);
  auto large = cb::huge_aligned_alloc(cb::kHugePage + 1, &size);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(large.get()) % cb::kHugePage, 0u);
  EXPECT_EQ(size, 2 * cb::kHugePage);
  std::memset(large.get(), 1, size);
  EXPECT_THROW(cb::huge_aligned_alloc(SIZE_MAX, &size), std::bad_alloc);
}

}  // namespace

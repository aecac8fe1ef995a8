#include "compas/base/stores.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace {

using compas::base::parse_stores;
using compas::base::Stores;

TEST(Stores, EveryKindRoundTripsThroughItsName) {
  for (Stores s : {Stores::automatic, Stores::cached, Stores::streaming, Stores::direct})
    EXPECT_EQ(parse_stores("--stores", to_string(s), true), s) << to_string(s);
}

TEST(Stores, DirectOnlyWhereAllowedAndBadNamesAreNamed) {
  EXPECT_THROW(parse_stores("--stores", "direct", false), std::invalid_argument);
  for (const char* bad : {"", "Cached", "nt", "bogus"}) {
    try {
      parse_stores("--stores", bad, false);
      ADD_FAILURE() << "'" << bad << "' was accepted";
    } catch (const std::invalid_argument& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("--stores '" + std::string(bad) + "'"), std::string::npos) << what;
      EXPECT_NE(what.find("auto, cached, streaming"), std::string::npos) << what;
      EXPECT_EQ(what.find("direct"), std::string::npos) << what;
    }
  }
}

}  // namespace

#include "compas/base/type_name.hpp"

#include <gtest/gtest.h>

#include <cstdint>

namespace {

struct plus {};

TEST(TypeName, ReadableNamesAndIdsThatTellTypesApart) {
  EXPECT_EQ(compas::base::type_name(typeid(double)), "double");
  EXPECT_EQ(compas::base::type_name(typeid(std::int64_t)), "long");
  EXPECT_EQ(compas::base::type_name(typeid(plus)), "(anonymous namespace)::plus");
  const auto one = [](double a, double b) { return a + b; };
  const auto two = [](double a, double b) { return a + b; };
  EXPECT_NE(compas::base::type_id(typeid(one)), compas::base::type_id(typeid(two)));
  EXPECT_NE(compas::base::type_id(typeid(double)), compas::base::type_id(typeid(std::int64_t)));
  EXPECT_EQ(compas::base::type_id(typeid(double)), compas::base::type_id(typeid(const double)));
  // FNV-1a of the mangled name "d": the id is a function of the name alone, not of the process.
  EXPECT_EQ(compas::base::type_id(typeid(double)),
            (0xcbf29ce484222325ULL ^ 'd') * 0x100000001b3ULL);
}

}  // namespace

#include "compas/base/env.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <optional>
#include <string>

namespace {

using namespace compas::base;

// Sets (or with nullopt unsets) one variable and restores it on exit.
class ScopedVar {
 public:
  ScopedVar(std::string name, std::optional<std::string> value) : name_(std::move(name)) {
    if (const char* old = std::getenv(name_.c_str())) old_ = old;
    if (value)
      ::setenv(name_.c_str(), value->c_str(), 1);
    else
      ::unsetenv(name_.c_str());
  }
  ~ScopedVar() {
    if (old_)
      ::setenv(name_.c_str(), old_->c_str(), 1);
    else
      ::unsetenv(name_.c_str());
  }

 private:
  std::string name_;
  std::optional<std::string> old_;
};

const EnvVar kCount{.name = "COMPAS_TEST_COUNT", .kind = EnvKind::integer, .min = 2, .max = 64};
const EnvVar kLevel{.name = "COMPAS_TEST_LEVEL", .kind = EnvKind::integer, .min = -3, .max = 3};
const EnvVar kMode{
    .name = "COMPAS_TEST_MODE", .kind = EnvKind::choice, .choices = {"fast", "slow", "auto"}};
const EnvVar kFlag{.name = "COMPAS_TEST_FLAG", .kind = EnvKind::boolean, .empty_is_unset = true};
const EnvVar kBytes{
    .name = "COMPAS_TEST_BYTES", .kind = EnvKind::size, .min = 4096, .max = 1 << 30};

// The message of the EnvError that `f` throws, or "accepted".
template <class F>
std::string message(F f) {
  try {
    f();
  } catch (const EnvError& e) {
    return e.what();
  }
  return "accepted";
}

TEST(Env, UnsetIsNullopt) {
  ScopedVar v("COMPAS_TEST_COUNT", std::nullopt);
  EXPECT_EQ(env_integer(kCount), std::nullopt);
  EXPECT_EQ(env_text(kCount), std::nullopt);
}

TEST(Env, ReadsGoodValuesOfEveryKind) {
  {
    ScopedVar v("COMPAS_TEST_COUNT", "64");
    EXPECT_EQ(env_integer(kCount), 64);
  }
  EXPECT_EQ(parse_env_integer(kLevel, "-3"), -3);
  EXPECT_EQ(parse_env_integer(kCount, "2"), 2);
  {
    ScopedVar v("COMPAS_TIMEOUT", "2.5");
    EXPECT_EQ(env_seconds(vars::timeout), 2.5);
  }
  EXPECT_EQ(parse_env_seconds(vars::timeout, "10000000"), 1e7);
  EXPECT_EQ(parse_env_seconds(vars::timeout, ".5"), 0.5);
  {
    ScopedVar v("COMPAS_TEST_MODE", "slow");
    EXPECT_EQ(env_choice(kMode), 1u);
  }
  {
    ScopedVar v("COMPAS_TEST_FLAG", "1");
    EXPECT_EQ(env_bool(kFlag), true);
  }
  EXPECT_FALSE(parse_env_bool(kFlag, "0"));
  {
    ScopedVar v("COMPAS_TEST_BYTES", "64KiB");
    EXPECT_EQ(env_size(kBytes), 65536u);
  }
}

TEST(Env, BadValuesNameTheVariableTheValueAndWhatIsAllowed) {
  EXPECT_EQ(message([] { parse_env_integer(kCount, "65"); }),
            "COMPAS_TEST_COUNT='65' is not allowed: expected an integer 2..64");
  EXPECT_EQ(message([] { parse_env_integer(kCount, "1"); }),
            "COMPAS_TEST_COUNT='1' is not allowed: expected an integer 2..64");
  EXPECT_EQ(message([] { parse_env_integer(kCount, "-4"); }),
            "COMPAS_TEST_COUNT='-4' is not allowed: expected an integer 2..64");
  for (const char* bad : {"abc", "4x", " 4", "+4", "4.0", "0x10", "9999999999999999999999"})
    EXPECT_NE(message([&] {
                parse_env_integer(kCount, bad);
              }).find(std::string("COMPAS_TEST_COUNT='") + bad + "' is not allowed: expected"),
              std::string::npos)
        << bad;
  EXPECT_EQ(message([] { parse_env_integer(kLevel, "-4"); }),
            "COMPAS_TEST_LEVEL='-4' is not allowed: expected an integer -3..3");
  EXPECT_EQ(message([] { parse_env_choice(kMode, "medium"); }),
            "COMPAS_TEST_MODE='medium' is not allowed: expected fast, slow or auto");
  EXPECT_EQ(message([] { parse_env_bool(kFlag, "yes"); }),
            "COMPAS_TEST_FLAG='yes' is not allowed: expected 0 or 1");
  EXPECT_EQ(message([] { parse_env_size(kBytes, "1KiB"); }),
            "COMPAS_TEST_BYTES='1KiB' is not allowed: expected a byte count 4096..1073741824 "
            "(like 4096, 64KiB, 1MiB, 1GB)");
  EXPECT_NE(message([] { parse_env_size(kBytes, "lots"); }).find("COMPAS_TEST_BYTES='lots'"),
            std::string::npos);
}

TEST(Env, TimeoutTakesPositiveSecondsUpToTenMillion) {
  const std::string allowed =
      "is not allowed: expected a positive number of seconds, at most 10000000 (default 60)";
  for (const char* bad :
       {"0", "-1", "abc", "10s", "inf", "nan", "10000001", "1e400", " 5", "+5", "0x10", "5 "})
    EXPECT_EQ(message([&] { parse_env_seconds(vars::timeout, bad); }),
              std::string("COMPAS_TIMEOUT='") + bad + "' " + allowed)
        << bad;
  ScopedVar v("COMPAS_TIMEOUT", "-5");
  EXPECT_EQ(message([] { env_seconds(vars::timeout); }), "COMPAS_TIMEOUT='-5' " + allowed);
}

TEST(Env, AnEmptyValueIsBadInputNamedAsSuch) {
  ScopedVar v("COMPAS_TIMEOUT", "");
  EXPECT_EQ(message([] { env_seconds(vars::timeout); }),
            "COMPAS_TIMEOUT='' is not allowed: an empty value; expected a positive number of "
            "seconds, at most 10000000 (default 60)");
  EXPECT_EQ(message([] { parse_env_integer(kCount, ""); }),
            "COMPAS_TEST_COUNT='' is not allowed: an empty value; expected an integer 2..64");
  ScopedVar t("COMPAS_TEST_COUNT", "");
  EXPECT_EQ(message([] { env_text(kCount); }),
            "COMPAS_TEST_COUNT='' is not allowed: an empty value; expected an integer 2..64");
}

TEST(Env, AnEmptyValueIsUnsetWhereTheVariableSaysSo) {
  ScopedVar v("COMPAS_TEST_FLAG", "");
  EXPECT_EQ(env_bool(kFlag), std::nullopt);
  EXPECT_EQ(env_text(kFlag), std::nullopt);
}

TEST(Env, ReportBindingIsZeroOrOneAndNeverEmpty) {
  {
    ScopedVar v("COMPAS_REPORT_BINDING", "1");
    EXPECT_EQ(env_bool(vars::report_binding), true);
  }
  {
    ScopedVar v("COMPAS_REPORT_BINDING", "0");
    EXPECT_EQ(env_bool(vars::report_binding), false);
  }
  {
    ScopedVar v("COMPAS_REPORT_BINDING", std::nullopt);
    EXPECT_EQ(env_bool(vars::report_binding), std::nullopt);
  }
  {
    ScopedVar v("COMPAS_REPORT_BINDING", "yes");
    EXPECT_EQ(message([] { env_bool(vars::report_binding); }),
              "COMPAS_REPORT_BINDING='yes' is not allowed: expected 0 or 1 (default 0)");
  }
  ScopedVar v("COMPAS_REPORT_BINDING", "");
  EXPECT_EQ(message([] { env_bool(vars::report_binding); }),
            "COMPAS_REPORT_BINDING='' is not allowed: an empty value; expected 0 or 1 (default "
            "0)");
  EXPECT_EQ(message([] { parse_env_bool(vars::report_binding, "2", "--report-bindings"); }),
            "--report-bindings='2' is not allowed: expected 0 or 1 (default 0)");
}

TEST(Env, HugePagesIsZeroOrOneAndNeverEmpty) {
  {
    ScopedVar v("COMPAS_HUGE_PAGES", "1");
    EXPECT_EQ(env_bool(vars::huge_pages), true);
  }
  {
    ScopedVar v("COMPAS_HUGE_PAGES", std::nullopt);
    EXPECT_EQ(env_bool(vars::huge_pages), std::nullopt);
  }
  {
    ScopedVar v("COMPAS_HUGE_PAGES", "always");
    EXPECT_EQ(message([] { env_bool(vars::huge_pages); }),
              "COMPAS_HUGE_PAGES='always' is not allowed: expected 0 or 1 (default 0)");
  }
  ScopedVar v("COMPAS_HUGE_PAGES", "");
  EXPECT_EQ(message([] { env_bool(vars::huge_pages); }),
            "COMPAS_HUGE_PAGES='' is not allowed: an empty value; expected 0 or 1 (default 0)");
}

TEST(Env, AFlagStandingForTheVariableIsNamedInstead) {
  EXPECT_EQ(message([] { parse_env_integer(vars::threads, "0", "--threads"); }),
            "--threads='0' is not allowed: expected an integer 1..4096");
  EXPECT_EQ(message([] { env_reject("COMPAS_RANK", "2", "expected an integer 0..1"); }),
            "COMPAS_RANK='2' is not allowed: expected an integer 0..1");
}

TEST(Env, TextSaysWhatItExpects) {
  EXPECT_EQ(vars::rendezvous.allowed(),
            "expected host:port (an IPv4 address or host name, port 1..65535), or :port for "
            "127.0.0.1");
  const EnvVar any{.name = "COMPAS_TEST_ANY"};
  EXPECT_EQ(message([&] { parse_env_integer(vars::size, "x"); }),
            "COMPAS_SIZE='x' is not allowed: expected an integer 1..65536");
  ScopedVar v("COMPAS_TEST_ANY", "");
  EXPECT_EQ(message([&] { env_text(any); }),
            "COMPAS_TEST_ANY='' is not allowed: an empty value; expected a value");
}

TEST(Env, EnvErrorIsAnInvalidArgument) {
  EXPECT_THROW(parse_env_bool(kFlag, "2"), std::invalid_argument);
}

}  // namespace

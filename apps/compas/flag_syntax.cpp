#include "flag_syntax.hpp"

#include <functional>
#include <string>

#include "compas/base/number.hpp"

namespace compas::app {

namespace {

// An empty value (`--size ""`: a script's unset variable) is never meaningful: refused with exit
// 2 naming the flag, instead of silently meaning the default. It names what the option takes, as
// its help does (a range check would say "Value  not in range").
CLI::Validator non_empty(const CLI::Option* o) {
  const std::string takes = o->get_type_name();
  return CLI::Validator(
      [takes](std::string& value) {
        return value.empty() ? "an empty value is not allowed" +
                                   (takes.empty() ? std::string() : " (expected " + takes + ")")
                             : std::string();
      },
      "", "non-empty");
}

// The parser's own conversion takes "0x10", "0b11", " 2" and "1'000"; the environment's parser
// and the rest of compas do not. One syntax everywhere: plain decimal.
bool is_numeric(const CLI::Option* o) {
  const std::string type = o->get_type_name();
  for (const char* kind : {"INT", "UINT", "FLOAT"}) {
    const std::string k = kind;
    if (type.compare(0, k.size(), k) == 0 && (type.size() == k.size() || type[k.size()] == ':'))
      return true;
  }
  return false;
}

CLI::Validator plain_decimal() {
  return CLI::Validator(
      [](std::string& value) {
        return value.empty() || base::parse_decimal(value)
                   ? std::string()
                   : "'" + value + "' is not a number: expected " + base::kDecimalSyntax;
      },
      "", "plain-decimal");
}

}  // namespace

void add_common_flag_checks(CLI::App& app) {
  std::function<void(CLI::App*)> add = [&](CLI::App* a) {
    for (CLI::Option* o : a->get_options()) {
      if (o->get_items_expected_max() == 0) continue;
      // After the option's own checks, whose messages say what it takes; before its conversion.
      if (is_numeric(o)) o->check(plain_decimal());
      o->transform(non_empty(o));
    }
    for (CLI::App* sub : a->get_subcommands([](CLI::App*) { return true; })) add(sub);
  };
  add(&app);
}

}  // namespace compas::app

// Checks every command's flags share, put on each option after the commands are set up: no flag
// takes an empty value, and a numeric flag takes plain decimal only (base::parse_decimal), from
// the command line and from its COMPAS_<NAME> variable alike.
#pragma once

#include <CLI/CLI.hpp>

namespace compas::app {

// Adds the checks to every option of `app` and of its subcommands: the empty value first, the
// decimal syntax last among each option's own checks.
void add_common_flag_checks(CLI::App& app);

}  // namespace compas::app

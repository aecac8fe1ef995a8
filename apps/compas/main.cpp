// compas: the command-line front end. One subcommand per measurement. Bad input exits 2 with a
// message naming the value; a failed measurement exits 1.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "commands.hpp"
#include "compas/report/report.hpp"
#include "compas/report/run_info.hpp"
#include "flag_syntax.hpp"
#include "printable.hpp"

int main(int argc, char** argv) {
  compas::report::set_command_line(argc, argv);
  CLI::App app{"compas: hybrid threads x processes runtime and its measurements", "compas"};
  app.set_version_flag("--version", "compas " + compas::report::version() + " (commit " +
                                        compas::report::git_commit() + ")");
  app.require_subcommand(1);
  app.fallthrough(false);

  std::vector<std::pair<CLI::App*, std::function<int()>>> commands;
  for (auto& setup : compas::app::all_commands()) commands.push_back(setup(app));

  compas::app::add_common_flag_checks(app);

  std::string names;
  for (auto& [cmd, run] : commands)
    if (!cmd->get_group().empty()) names += (names.empty() ? "" : ", ") + cmd->get_name();
  if (argc < 2) {
    std::fprintf(stderr, "compas: a command is required: %s (see compas --help)\n", names.c_str());
    return 2;
  }
  if (argv[1][0] != '-') {
    bool known = false;
    for (auto& [cmd, run] : commands) known = known || cmd->get_name() == argv[1];
    if (!known) {
      std::fprintf(stderr, "compas: unknown command '%s': allowed are %s\n", argv[1],
                   names.c_str());
      return 2;
    }
  }
  // "--flag=" with nothing after the '=': the parser would take the next word as the value (so
  // "--bind= --json f" binds to "--json"). An empty value is never meaningful here: refuse it.
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--") break;
    if (a.size() > 3 && a.rfind("--", 0) == 0 && a.back() == '=') {
      std::fprintf(stderr, "compas: %s: the value is empty (give one after the '=')\n",
                   a.substr(0, a.size() - 1).c_str());
      return 2;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);  // prints the message
    return 2;
  }
  for (auto& [cmd, run] : commands) {
    if (!cmd->parsed()) continue;
    try {
      return run();
    } catch (const std::invalid_argument& e) {
      std::fprintf(stderr, "compas %s: error: %s\n", cmd->get_name().c_str(),
                   compas::app::printable(e.what()).c_str());
      return 2;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "compas %s: failed: %s\n", cmd->get_name().c_str(),
                   compas::app::printable(e.what()).c_str());
      return 1;
    }
  }
  return 2;
}

// The autotune CLI's command line: CLI11 options for every sub-command (commands.cpp), each handing its parsed
// arguments to run_<name> (args.hpp, cmd_<name>.cpp).
#pragma once
#include <CLI/CLI.hpp>
#include <functional>
#include <string>

namespace autotune::cli {

struct Globals {
  std::string db_path;
  std::function<int()> run;  // set by the chosen sub-command's callback
};

/// Adds every sub-command to `app`, in the order --help lists them. Call after the global options and
/// app.fallthrough(): a sub-command inherits fallthrough when it is added, so that global options are accepted
/// on either side of it.
void register_commands(CLI::App& app, Globals& g);

}  // namespace autotune::cli

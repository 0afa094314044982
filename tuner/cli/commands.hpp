// Sub-commands of the autotune CLI.
#pragma once
#include <CLI/CLI.hpp>
#include <functional>
#include <string>

namespace autotune::cli {

struct Globals {
  std::string db_path;
  std::function<int()> run;  // set by the chosen sub-command's callback
};

void register_commands(CLI::App& app, Globals& g);
/// tune (tuner/cli/commands_tune.cpp).
void register_tune_command(CLI::App& app, Globals& g);
/// compare-strategies (tuner/cli/commands_strategies.cpp).
void register_strategy_commands(CLI::App& app, Globals& g);
/// import, export (tuner/cli/commands_interop.cpp).
void register_interop_commands(CLI::App& app, Globals& g);
/// explore, report (tuner/cli/commands_explore.cpp).
void register_explore_commands(CLI::App& app, Globals& g);
/// merge (tuner/cli/commands_merge.cpp).
void register_merge_command(CLI::App& app, Globals& g);

}  // namespace autotune::cli

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

}  // namespace autotune::cli

// What the command line says when CLI11 refuses it: a message in the command line's own terms (the option and
// the sub-command by name, the value given), never CLI11's text. main() prints it after "error: " and exits 2.
#pragma once
#include <CLI/CLI.hpp>
#include <string>

namespace autotune::cli {

/// The message for a parse error of `app` (after app.parse threw `e`, which is not a CLI::Success: help and
/// --version are not errors). Reads what app kept of the parse (the chosen sub-command, the arguments no parser
/// took).
std::string parse_error_message(const CLI::App& app, const CLI::ParseError& e);

}  // namespace autotune::cli

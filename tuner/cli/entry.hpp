// The command line `autotune ARGS...` as a function (entry.cpp).
#pragma once

namespace autotune::cli {

/// Parses argv (argv[0] the program's name) and runs the sub-command; returns the exit code of the README (0 ok,
/// 1 other failure, 2 bad input, 3 no usable GPU, 4 database error) after printing "error: ..." to stderr. Catches
/// every exception. Not reentrant with itself on other threads (sub-commands print to the process's stdout).
int run_command_line(int argc, const char* const* argv);

}  // namespace autotune::cli

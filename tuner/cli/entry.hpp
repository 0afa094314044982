// The command line `autotune ARGS...` as a function (entry.cpp).
#pragma once
#include <string>

namespace autotune::cli {

/// Parses argv (argv[0] the program's name) and runs the sub-command; returns the exit code of the README (0 ok,
/// 1 other failure, 2 bad input, 3 no usable GPU, 4 database error) after printing "error: ..." to stderr. Catches
/// every exception. Not reentrant with itself on other threads (sub-commands print to the process's stdout).
int run_command_line(int argc, const char* const* argv);

/// The exit code of the README for the exception being handled (call it only inside a catch block), with its
/// message as the command line prints it after "error: " in *message: 2 bad input (UsageError, SpecError as
/// "invalid spec: ...", ExprError), 3 no usable GPU (EnvironmentError), 4 database ("database: ..."), 1 any other
/// std::exception or anything else. The one table of both the command line and the C interface (tuner/capi/).
int exit_code_of_current_exception(std::string* message);

}  // namespace autotune::cli

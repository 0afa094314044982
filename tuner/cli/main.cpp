// autotune: command-line front end (the command line itself is tuner/cli/entry.cpp).
#include "tuner/cli/entry.hpp"
#ifdef AUTOTUNE_WITH_MPI
#include "tuner/cli/tune.hpp"
#endif

int main(int argc, char** argv) {
#ifdef AUTOTUNE_WITH_MPI
  autotune::cli::set_mpi_tune(&autotune::cli::run_tune_if_mpi);
#endif
  return autotune::cli::run_command_line(argc, argv);
}

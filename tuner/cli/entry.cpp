// The command line as a function: what `autotune` runs (main.cpp) and what the C interface runs in the process
// of a program that embeds the tuner (tuner/capi/, gat_main). Wiring only: every decision lives in the modules.
#include "tuner/cli/entry.hpp"

#include <unistd.h>
#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "db/database.hpp"
#include "search/strategy.hpp"
#include "tuner/cli/commands.hpp"
#include "tuner/cli/parse_errors.hpp"
#include "tuner/core/error.hpp"

namespace autotune::cli {

int exit_code_of_current_exception(std::string* message) {
  try {
    throw;
  } catch (const UsageError& e) {
    *message = e.what();
    return 2;
  } catch (const SpecError& e) {
    *message = std::string("invalid spec: ") + e.what();
    return 2;
  } catch (const ExprError& e) {
    *message = e.what();
    return 2;
  } catch (const EnvironmentError& e) {
    *message = e.what();
    return 3;
  } catch (const DbError& e) {
    *message = std::string("database: ") + e.what();
    return 4;
  } catch (const std::exception& e) {
    *message = e.what();
    return 1;
  } catch (...) {
    *message = "unknown error";
    return 1;
  }
}

int run_command_line(int argc, const char* const* argv) {
  CLI::App app{"autotune: tune CUDA kernels on this GPU, record every trial in SQLite, serve the best"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "autotune 0.1.0");
  Globals g;
  const char* env_db = std::getenv("AUTOTUNE_DB");
  g.db_path = env_db && *env_db ? env_db : "autotune.db";
  app.add_option("--db", g.db_path, "SQLite database (default ./autotune.db, or $AUTOTUNE_DB)");
  // Global options are accepted on either side of the sub-command (`autotune tune reduction --db x.db`): an
  // option the sub-command does not know falls through to this parser. Inherited by every sub-command.
  app.fallthrough();

  register_commands(app, g);

  try {
    app.parse(argc, argv);
    return g.run ? g.run() : 0;
  } catch (const CLI::Success& e) {  // --help, --version
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "error: " << parse_error_message(app, e) << "\n";
    return 2;
  } catch (...) {
    std::string message;
    const int code = exit_code_of_current_exception(&message);
    std::cerr << "error: " << message << "\n";
    return code;
  }
}

}  // namespace autotune::cli

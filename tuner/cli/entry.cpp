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

namespace {

/// Prints "error: <what>" (after `kind`, e.g. "database: ") and returns the exit code of the README: 1 other
/// failure, 2 bad input, 3 no usable GPU, 4 database error.
int fail(int code, const std::string& what, const char* kind = "") {
  std::cerr << "error: " << kind << what << "\n";
  return code;
}

}  // namespace

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
    return fail(2, parse_error_message(app, e));
  } catch (const UsageError& e) {
    return fail(2, e.what());
  } catch (const SpecError& e) {
    return fail(2, e.what(), "invalid spec: ");
  } catch (const ExprError& e) {
    return fail(2, e.what());
  } catch (const EnvironmentError& e) {
    return fail(3, e.what());
  } catch (const DbError& e) {
    return fail(4, e.what(), "database: ");
  } catch (const std::exception& e) {
    return fail(1, e.what());
  }
}

}  // namespace autotune::cli

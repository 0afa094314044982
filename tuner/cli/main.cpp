// autotune: command-line front end. Wiring only: every decision lives in the modules.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include "db/database.hpp"
#include "search/strategy.hpp"
#include "tuner/cli/commands.hpp"
#include "tuner/core/error.hpp"

using namespace autotune;

int main(int argc, char** argv) {
  CLI::App app{"autotune: tune CUDA kernels on this GPU, record every trial in SQLite, serve the best"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "autotune 0.1.0");
  cli::Globals g;
  const char* env_db = std::getenv("AUTOTUNE_DB");
  g.db_path = env_db && *env_db ? env_db : "autotune.db";
  app.add_option("--db", g.db_path, "SQLite database (default ./autotune.db, or $AUTOTUNE_DB)");
  // Global options are accepted on either side of the sub-command (`autotune tune reduction --db x.db`): an
  // option the sub-command does not know falls through to this parser. Inherited by every sub-command.
  app.fallthrough();

  cli::register_commands(app, g);

  try {
    app.parse(argc, argv);
    return g.run ? g.run() : 0;
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const UsageError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  } catch (const SpecError& e) {
    std::cerr << "error: invalid spec: " << e.what() << "\n";
    return 2;
  } catch (const ExprError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  } catch (const EnvironmentError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 3;
  } catch (const DbError& e) {
    std::cerr << "error: database: " << e.what() << "\n";
    return 4;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}

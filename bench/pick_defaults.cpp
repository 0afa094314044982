// Spec defaults from the shipped recordings (docs/lookup.md, "Spec defaults from the recordings"): for every
// built-in spec, the configuration whose worst ratio to the best of each recorded (board, workload, problem) cell is
// highest (lookup::pick_default), with the "default" values to write into its .tune.json. CPU only.
//
//   build/bench/pick_defaults [db ...]     (default: tests/data/recorded_h100.db tests/data/recorded_h200.db)
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "db/database.hpp"
#include "tuner/lookup/pick_default.hpp"
#include "tuner/specs/specs.hpp"

using namespace autotune;

int main(int argc, char** argv) {
  std::vector<std::string> paths;
  for (int i = 1; i < argc; ++i) paths.push_back(argv[i]);
  if (paths.empty())
    paths = {std::string(AUTOTUNE_SOURCE_DIR) + "/tests/data/recorded_h100.db",
             std::string(AUTOTUNE_SOURCE_DIR) + "/tests/data/recorded_h200.db"};
  try {
    std::vector<std::unique_ptr<db::Database>> open;
    std::vector<const db::Database*> dbs;
    for (const std::string& p : paths) {
      open.push_back(db::Database::open(p, db::Database::Mode::read_only));
      dbs.push_back(open.back().get());
    }
    std::printf("%-16s %6s %10s %8s %8s %9s  %s\n", "spec", "cells", "candidates", "worst", "mean", "default", "pick");
    for (const std::string& name : specs::builtin_names()) {
      const TuningSpec spec = specs::builtin_spec(name);
      const auto pick = lookup::pick_default(dbs, spec);
      if (!pick) {
        std::printf("%-16s   (nothing recorded, or no configuration measured in every cell and valid everywhere)\n",
                    name.c_str());
        continue;
      }
      char current[16] = "-";
      if (pick->default_worst_ratio) std::snprintf(current, sizeof current, "%.3f", *pick->default_worst_ratio);
      std::printf("%-16s %6zu %10zu %8.3f %8.3f %9s  %s\n", name.c_str(), pick->cells, pick->candidates,
                  pick->worst_ratio, pick->mean_ratio, current, pick->config.str(&spec.params).c_str());
      std::printf("%-16s worst at %s; defaults: %s\n", "", pick->worst_cell.c_str(), pick->config.to_json().c_str());
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pick_defaults: %s\n", e.what());
    return 1;
  }
  return 0;
}

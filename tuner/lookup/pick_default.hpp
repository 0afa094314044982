// A spec default chosen from recordings (docs/lookup.md, "Spec defaults from the recordings"): the configuration
// whose worst ratio to the best of each recorded (board, workload, problem) cell is highest. bench/pick_defaults
// prints it for the built-in specs; tests/cpu/test_borrow.cpp checks that the scan's and the compaction's defaults
// are its choice.
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "tuner/core/config.hpp"
#include "tuner/core/objective.hpp"
#include "tuner/core/spec.hpp"

namespace autotune {

namespace db {
class Database;
}

namespace lookup {

struct DefaultPick {
  Config config;
  /// Over every recorded cell: min of best cost of the cell / this configuration's cost there (1 = best everywhere).
  double worst_ratio = 0;
  std::string worst_cell;      // "board workload problem" where worst_ratio is reached
  double mean_ratio = 0;       // mean of that ratio over the cells
  std::size_t cells = 0;       // recorded cells (board, workload, problem) over the databases
  std::size_t candidates = 0;  // configurations measured in every cell and valid for every workload there
  /// The same figures for the spec's current default; nullopt where it is not a candidate.
  std::optional<double> default_worst_ratio;
};

/// The pick over the valid recorded rows (as the lookup serves them, objective o) of every workload of `spec` in
/// `dbs`: among the configurations measured in every cell and valid for every workload of the spec on every
/// recorded board at every recorded problem, the highest worst ratio, then the highest mean ratio, then the smaller
/// canonical JSON. nullopt where nothing of the spec is recorded or no configuration is a candidate.
std::optional<DefaultPick> pick_default(const std::vector<const db::Database*>& dbs, const TuningSpec& spec,
                                        Objective o = Objective::time);

}  // namespace lookup

}  // namespace autotune

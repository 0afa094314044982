// Ranking recorded trials by an objective (tuner/core/objective.hpp): the one order used by the session's
// final table, `summary` and the lookup. Pure functions on rows; no SQL.
#pragma once
#include <vector>

#include "db/database.hpp"
#include "tuner/core/objective.hpp"

namespace autotune::db {

/// Whether a ranks before b: with unthrottled_first, a trial whose clocks were not throttled (power, thermal,
/// slowdown) before one that was; then the lower objective_cost (trials lacking the objective's quantity
/// last); then the lower median; then the lower id. Failed trials after every ok one.
bool ranks_before(const TrialRow& a, const TrialRow& b, Objective o, bool unthrottled_first);

/// rows sorted by ranks_before (stable for equal keys).
std::vector<TrialRow> rank_trials(std::vector<TrialRow> rows, Objective o, bool unthrottled_first);

}  // namespace autotune::db

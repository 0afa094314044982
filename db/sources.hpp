// Which recorded trials measure the kernel a spec describes today: those of its source text, and those of other
// texts with the same code identity (tuner/core/identity.hpp) that the spec names or the database recorded.
#pragma once
#include <string>
#include <vector>

#include "db/database.hpp"
#include "tuner/core/spec.hpp"

namespace autotune::db {

/// spec.source_hash() first, then spec.equivalent_sources, then the texts `db` recorded with the spec's code
/// identity; each once. A stub: its imported rows' hash only. Throws DbError.
std::vector<std::string> accepted_sources(const Database& db, const TuningSpec& spec);

/// The trials matching f (its device_id ignored) on every device recorded as the model of `model` (normalised name
/// and compute capability: DeviceKey), device by device. Throws DbError.
std::vector<TrialRow> trials_on_model(const Database& db, const DeviceInfo& model, TrialFilter f);

/// The board (device row) of `cell.kernel`'s recorded trials that `device_name` names ("" = any; a name or a
/// normalised name). Boards of one model (DeviceKey: a recording, and a few checks on another board of the model,
/// such as revalidate's re-measurements) count as one: of those, the one with the most trials matching `cell` (its
/// device_id ignored) is taken. Throws UsageError naming the recorded devices when nothing of the kernel is
/// recorded, none is named so, or boards of several models match.
DeviceRow recorded_board(const Database& db, const std::string& device_name, TrialFilter cell);

/// accepted_sources() without a database: the spec's source and its equivalent_sources.
std::vector<std::string> accepted_sources_without_db(const TuningSpec& spec);

/// Records the spec's source text and code identity in `db` (what a session does before it measures). A stub
/// records nothing. Throws DbError.
void record_source_identity(Database& db, const TuningSpec& spec);

}  // namespace autotune::db

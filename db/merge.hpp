// Combining databases recorded elsewhere (one per node of a job array, one per workstation): devices,
// sessions, trials and cached binaries, without duplicates and with their provenance.
#pragma once
#include <cstddef>
#include <string>

#include "db/database.hpp"

namespace autotune::db {

/// What one merge added and what it found already present.
struct MergeReport {
  std::size_t devices = 0;            // devices of the input (new ones and ones `out` already knew)
  std::size_t sessions_added = 0;
  std::size_t sessions_present = 0;   // the same session (same start, kernel, device, ...) was already there
  std::size_t trials_added = 0;
  std::size_t trials_present = 0;     // same key and the same measurement
  std::size_t trials_conflicting = 0; // same key, another measurement: `out`'s row is kept
  std::size_t binaries_added = 0;
  std::size_t binaries_present = 0;

  MergeReport& operator+=(const MergeReport& o);
};

/// Same measurement: the numbers, the status and the protocol (the log and timestamps may differ between copies).
/// What decides whether a row with an existing key is "already present" or a conflict (merge, import).
bool same_measurement(const Measurement& a, const Measurement& b);

/// Copies everything of `in` that `out` lacks into `out`, inside one transaction (all or nothing). Devices are
/// matched by identity (normalised name, compute capability, UUID), sessions by their content, trials by their
/// key; merged sessions get origin "merged from <in.path()> session <id>" (an origin they already had is
/// kept) and the trials keep their measured_by. Merging the same input twice adds nothing. Throws DbError.
MergeReport merge_database(Database& out, const Database& in);

}  // namespace autotune::db

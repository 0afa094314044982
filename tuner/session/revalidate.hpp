// Revalidation (`autotune revalidate`): trials recorded with an older kernel source whose code identity differs from
// today's (tuner/core/identity.hpp) are not served. This re-measures, per recorded cell (device model, workload,
// problem), the best configurations of the older source with today's kernel on the backend; where they agree with
// the record within its noise, the cell's rows are carried forward under today's source (TrialRow::carried_from
// says so), else the cell is reported for re-tuning. Nothing recorded is changed or removed.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "db/database.hpp"
#include "tuner/core/backend.hpp"
#include "tuner/core/spec.hpp"
#include "tuner/session/session.hpp"

namespace autotune::session {

struct RevalidateRequest {
  std::optional<Workload> workload;  // only cells of this workload (default: all)
  std::optional<ProblemKey> problem;  // only cells of this problem (default: all)
  std::size_t top = 10;               // configurations re-measured per cell
  /// Agreement of one configuration: its new median, divided by the cell's common shift (the median of new/old
  /// over the re-measured configurations), within max(tolerance, old spread + new spread) of the old median.
  double tolerance = 0.03;
  double max_shift = 0.10;  // a common shift beyond this (another clock, another board) is a disagreement
  double min_agreeing = 0.8;  // share of the re-measured configurations that must agree (the old best always must)
  std::uint64_t seed = 1;
  std::function<double(const Workload&, const ProblemKey&)> bytes_moved;  // for GB/s; may be empty
  std::function<void(const std::string&)> note;                            // progress lines; may be empty
};

/// One configuration re-measured.
struct Remeasured {
  std::string config;  // Config::str() with labels
  double old_ns = 0, new_ns = 0;  // new_ns 0: it failed now
  bool agrees = false;
};

struct CellRevalidation {
  std::string workload, problem, device;
  std::string old_source;          // the source hash whose trials were re-measured
  std::vector<Remeasured> configs;  // best (by the old record) first
  double shift = 1;                // median of new/old
  bool carried = false;
  std::size_t rows_carried = 0;
  std::int64_t session_id = 0;     // the session that re-measured
  std::string verdict;             // one line: why carried, or why not and what to do
};

struct RevalidateOutcome {
  std::vector<CellRevalidation> cells;  // cells that had only older trials, in (workload, problem) order
  std::size_t current_cells = 0;         // cells already served by today's source (nothing to do)
};

/// Revalidates spec's cells recorded on backend's device model (normalised name and compute capability). Throws
/// UsageError when nothing of the kernel is recorded on that model, EnvironmentError, DbError.
RevalidateOutcome revalidate(const TuningSpec& spec, Backend& backend, db::Database& db, const RevalidateRequest& q);

}  // namespace autotune::session

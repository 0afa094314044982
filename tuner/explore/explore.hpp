// `autotune explore`: runs a sweep plan through the session loop (trials land in the database like any
// session's), then computes per point GB/s, % of the copy bandwidth, occupancy, waves and resident threads
// per SM, and the verdict. Knows no CUDA: the driver's occupancy comes in through a callback.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "db/database.hpp"
#include "tuner/core/backend.hpp"
#include "tuner/core/spec.hpp"
#include "tuner/explore/sweep.hpp"
#include "tuner/explore/verdict.hpp"
#include "tuner/session/session.hpp"

namespace autotune::explore {

/// Everything reported for one point.
struct PointResult {
  SweepPoint point;
  std::string state;            // "ok", a TrialStatus name, "excluded", "not recorded", "not planned: ..."
  std::optional<Measurement> m; // when run (ok or failed)
  double gbps = 0;              // when ok
  double pct_copy = 0;          // 100 * gbps / copy bandwidth, 0 when either is unknown
  Occupancy occupancy;
  Geometry geo;
};

struct ExploreResult {
  SweepPlan plan;
  std::string kernel;
  std::vector<Param> params;    // the spec's parameters (labels for display)
  Workload workload;
  ProblemKey problem;
  DeviceInfo device;
  std::string backend;          // "cuda", "simulation", "synthetic"
  double copy_gbps = 0;         // device copy bandwidth (bytes read + written), 0 = unknown
  std::int64_t session_id = 0;  // 0 when nothing was run
  std::size_t evaluated = 0;    // new evaluations in this session
  std::size_t reused = 0;       // answered from earlier trials
  std::vector<PointResult> points;  // same order as plan.points
  Verdict verdict;
};

struct ExploreOptions {
  double tolerance = 0.03;       // fraction: within this of the best counts as peak
  std::uint64_t seed = 1;
  double bytes_moved = 0;        // bytes of one run (for GB/s)
  std::function<void(const session::Progress&)> on_progress;
  /// Blocks per SM the driver computes for a point (valid points with geometry only); nullopt = unknown
  /// (the theoretical figure from static limits is used instead, labelled as such). Exceptions are
  /// caught and reported in the occupancy note. Empty = theoretical for every point.
  std::function<std::optional<int>(const SweepPoint&)> driver_occupancy;
  /// Whether the backend can answer a configuration (simulation: recorded); empty = every point.
  /// Points it refuses are reported as "not recorded" and not run.
  std::function<bool(const Config&)> available;
};

/// Finds the fastest ok trial of (kernel, current source hash, device with the same normalised name and cc,
/// workload, problem) in db whose configuration is valid in `space_check` (nullptr = no check).
std::optional<Config> best_known_config(const db::Database& db, const TuningSpec& spec, const DeviceInfo& d,
                                        const Workload& w, const ProblemKey& p);

/// Runs the valid (and available) points as one session ("explore" in the sessions table) and builds the
/// result. Throws what session::run throws (UsageError, EnvironmentError, DbError).
ExploreResult run_explore(const TuningSpec& spec, Backend& backend, db::Database& db, const Workload& w,
                          const ProblemKey& p, const SweepPlan& plan, const ExploreOptions& opt);

/// Builds the result from a plan and the trials already in db (no run): per point the recorded trial of
/// device_id, if any. Used by run_explore after its session, and by tests on recorded data.
ExploreResult collect_results(const TuningSpec& spec, const db::Database& db, std::int64_t device_id,
                              const DeviceInfo& device, double copy_gbps, const Workload& w, const ProblemKey& p,
                              const SweepPlan& plan, const ExploreOptions& opt);

/// The text report: header (device, fixed parameters and where they come from), one row per point, the verdict.
std::string format_report(const ExploreResult& r);

/// The explore chart: GB/s against blocks per SM (log2 axis), one line per block size, the copy bandwidth as a
/// reference line, the 2 x SMs points ringed. For kernels without a grid parameter: GB/s against block size.
std::string explore_chart_svg(const ExploreResult& r);

/// GB/s against the board power of each measured point (NVML, docs/observers.md), one line per block size, the
/// fastest and the least-energy point ringed. "" when no point has power.
std::string power_chart_svg(const ExploreResult& r);

}  // namespace autotune::explore

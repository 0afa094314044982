// Warm starts: configurations that earlier trials in the database suggest for a new problem, so that a limited
// search starts from what is already known instead of from nothing. Transfer across problem sizes (the best
// configurations of the same kernel and workload on the same device at other sizes, nearest size first), else
// across devices of the same architecture (the same problem, then other problems, on devices with the same
// compute capability major version).
#pragma once
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "db/database.hpp"
#include "tuner/core/config.hpp"
#include "tuner/core/keys.hpp"
#include "tuner/core/spec.hpp"

namespace autotune::session {

struct WarmStart {
  std::vector<Config> configs;  // best first; not yet checked against the target's space
  /// Where they came from, for the session's output: "the best 5 configurations of n=16777216 (1.23 ms) and
  /// n=67108864 (...) on this device"; "" when nothing was found.
  std::string source;
  /// What the nearest source predicts, for the strategy to test (search::WarmStartHint): the median (ns) of every
  /// distinct ok configuration of the nearest other problem (`problem`), fastest first; its distance from the
  /// target (|log2 size ratio|, plus WarmStartHint::kOtherDeviceDistance from another device).
  std::vector<std::pair<Config, double>> values;
  double distance = 0;
  std::string problem;  // "n=67108864", or "n=67108864 on NVIDIA H100 PCIe" from another device
  bool empty() const { return configs.empty(); }
};

/// |log2(a / b)| for problem sizes in elements; 1e30 when either is not positive.
double size_distance(double a, double b);

/// The fastest `count` distinct configurations among the trials that match f (ok trials with a finite positive median;
/// f.ok_only and f.by_time are set here), fastest first, one row per configuration.
std::vector<db::TrialRow> fastest_configs(const db::Database& db, db::TrialFilter f, std::size_t count);

/// Up to `count` configurations for spec.name / w / p on `device` from the ok trials of db: the top ones of
/// each other problem on the same device (identity: normalised name and compute capability), taken in turn
/// from the problems nearest in log2 size (rank 1 of every problem, then rank 2, ...), duplicates dropped;
/// if the device has none, the same from devices of the same architecture (cc / 10), the target problem
/// first. Trials of the target problem on the target device are never used (the session answers those
/// itself). WarmStart::values holds every ok configuration of the nearest of those problems (the first in that
/// order). Throws DbError on a database failure.
WarmStart find_warm_start(const db::Database& db, const TuningSpec& spec, const DeviceInfo& device, const Workload& w,
                          const ProblemKey& p, std::size_t count = 5);

/// The best `count` ok configurations of exactly spec.name / w / p on `device` (its normalised name and cc), best
/// first: the screening step of a multi-fidelity search hands them to the confirmation at the target size.
WarmStart best_of_problem(const db::Database& db, const TuningSpec& spec, const DeviceInfo& device, const Workload& w,
                          const ProblemKey& p, std::size_t count);

}  // namespace autotune::session

// Simulation mode: answers every evaluation from trials recorded in a database for the same device,
// kernel, workload and problem, instead of running the GPU.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "db/database.hpp"
#include "tuner/core/backend.hpp"

namespace autotune::sim {

class ReplayBackend : public Backend {
 public:
  /// Replays trials of `kernel` recorded in `from`. device_name selects the device (normalised or exact
  /// name); empty = the only device with trials of this kernel (UsageError if none or several).
  /// delay_ms: wall time each evaluated configuration takes (0: none), to watch a replay's progress or to
  /// exercise scale-out and its fault handling at a human pace.
  ReplayBackend(const db::Database& from, std::string kernel, const std::string& device_name = "",
                double delay_ms = 0);

  DeviceInfo device() const override { return device_.info; }
  std::string kind() const override { return "simulation"; }
  std::string compiler_version() const override { return "replay"; }
  /// Loads the recorded trials; UsageError if there are none for this workload and problem.
  void prepare(const Workload& w, const ProblemKey& p, std::uint64_t seed) override;
  double copy_bandwidth_gbps() override { return device_.copy_gbps; }
  /// How the replayed trials of this workload and problem were measured: each distinct non-empty
  /// Measurement::protocol with its number of trials, most frequent first. Empty when none is recorded.
  std::vector<std::pair<std::string, std::size_t>> recorded_protocols(const Workload& w, const ProblemKey& p) const;
  /// One line for a replay's header: "recorded with: events;warmup=3;... (270 trials)"; "" when nothing is known.
  std::string protocol_line(const Workload& w, const ProblemKey& p) const;
  /// The distinct configurations recorded for this workload and problem (every status), in trial id order.
  std::vector<Config> recorded_configs(const Workload& w, const ProblemKey& p) const;
  /// From now on space_limit() answers the recorded configurations: the valid space of a replay is what was
  /// recorded (for a spec stub, which knows no constraints).
  void limit_space_to_recorded() { limit_space_ = true; }
  std::optional<std::vector<Config>> space_limit(const Workload& w, const ProblemKey& p) const override;
  /// UsageError naming the configuration when it has no recorded trial.
  std::vector<Measurement> evaluate(const std::vector<Config>& configs) override;

 private:
  double delay_ms_ = 0;
  bool limit_space_ = false;
  const db::Database& from_;
  std::string kernel_;
  db::DeviceRow device_;
  std::map<std::string, Measurement> recorded_;  // config hash -> measurement
  std::string what_;
};

}  // namespace autotune::sim

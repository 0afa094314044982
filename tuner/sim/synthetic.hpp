// A deterministic backend for tests: times are a smooth function of the configuration, and failures can
// be injected for chosen configurations. No GPU, no clocks.
#pragma once
#include <functional>
#include <map>
#include <string>

#include "tuner/core/backend.hpp"

namespace autotune::sim {

class SyntheticBackend : public Backend {
 public:
  /// time_ns(config) gives the median; default: sum over parameters of (log2(value+1) - 3)^2 scaled, + 1000.
  explicit SyntheticBackend(DeviceInfo device = fake_device(),
                            std::function<double(const Config&)> time_ns = nullptr);

  /// A fictional 132-SM sm_90 device ("Synthetic GPU").
  static DeviceInfo fake_device();

  /// Configurations (by Config::hash()) that fail with the given status and log.
  void inject_failure(const Config& c, TrialStatus status, std::string log = "injected failure");
  /// Every evaluation of a config whose parameter `name` has `value` fails with status.
  void inject_failure_when(const std::string& name, Value value, TrialStatus status);
  /// Throws EnvironmentError from evaluate() once `n` further configurations have been evaluated.
  void fail_environment_after(std::size_t n) { env_fail_after_ = n; }

  std::size_t evaluations() const { return evaluations_; }

  DeviceInfo device() const override { return device_; }
  std::string kind() const override { return "synthetic"; }
  std::string compiler_version() const override { return "synthetic"; }
  void prepare(const Workload& w, const ProblemKey& p, std::uint64_t seed) override;
  double copy_bandwidth_gbps() override { return 1000.0; }
  std::vector<Measurement> evaluate(const std::vector<Config>& configs) override;

 private:
  DeviceInfo device_;
  std::function<double(const Config&)> time_ns_;
  std::map<std::string, std::pair<TrialStatus, std::string>> failures_;
  std::map<std::pair<std::string, Value>, TrialStatus> failures_when_;
  std::size_t evaluations_ = 0;
  std::size_t env_fail_after_ = static_cast<std::size_t>(-1);
  bool prepared_ = false;
};

}  // namespace autotune::sim

// Where configurations get evaluated: the CUDA backend, the replay (simulation) backend, or the
// synthetic test backend. The session loop talks only to this interface.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "tuner/core/config.hpp"
#include "tuner/core/keys.hpp"
#include "tuner/core/trial.hpp"

namespace autotune {

class Backend {
 public:
  virtual ~Backend() = default;
  /// The device results are attributed to.
  virtual DeviceInfo device() const = 0;
  /// "cuda", "simulation", "synthetic".
  virtual std::string kind() const = 0;
  /// NVRTC version "13.0" or "" when nothing is compiled.
  virtual std::string compiler_version() const { return {}; }
  /// Selects workload and problem; allocates inputs and computes the reference. Throws UsageError if the
  /// problem does not fit (e.g. n exceeds device memory), EnvironmentError if the device is unusable.
  virtual void prepare(const Workload& w, const ProblemKey& p, std::uint64_t seed) = 0;
  /// Device-to-device copy bandwidth in GB/s (bytes read + written), measured once per backend.
  virtual double copy_bandwidth_gbps() = 0;
  /// Evaluates configurations (may compile in parallel); results in the same order.
  virtual std::vector<Measurement> evaluate(const std::vector<Config>& configs) = 0;
};

}  // namespace autotune

// A deterministic backend for tests: times are a smooth function of the configuration, and failures can
// be injected for chosen configurations. No GPU. Optionally a simulated compile stage runs through the same
// CompilePipeline as the CUDA backend (threads, binary cache, compile failures, prefetch).
#pragma once
#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>

#include "tuner/core/backend.hpp"
#include "tuner/core/compile.hpp"

namespace autotune::sim {

/// A simulated compile stage (SyntheticBackend::enable_compile_stage).
struct CompileStage {
  int jobs = 1;             // compile threads (<= 0: all cores)
  double compile_ms = 0;    // simulated latency of one compilation: a sleep on a compile thread
  double run_ms = 0;        // simulated GPU time of one evaluation: a sleep on the evaluating thread
  BinaryCache* cache = nullptr;  // optional; must outlive the backend
};

class SyntheticBackend : public Backend {
 public:
  /// time_ns(config) gives the median; default: sum over parameters of (log2(value+1) - 3)^2 scaled, + 1000.
  explicit SyntheticBackend(DeviceInfo device = fake_device(),
                            std::function<double(const Config&)> time_ns = nullptr);

  /// A fictional 132-SM sm_90 device ("Synthetic GPU").
  static DeviceInfo fake_device();
  /// The default time_ns: sum over parameters of (log2(value+1) - 3)^2 x 100, + 1000.
  static double default_time_ns(const Config& c);

  /// Configurations (by Config::hash()) that fail with the given status and log.
  void inject_failure(const Config& c, TrialStatus status, std::string log = "injected failure");
  /// Every evaluation of a config whose parameter `name` has `value` fails with status.
  void inject_failure_when(const std::string& name, Value value, TrialStatus status);
  /// Throws EnvironmentError from evaluate() once `n` further configurations have been evaluated.
  void fail_environment_after(std::size_t n) { env_fail_after_ = n; }

  std::size_t evaluations() const { return evaluations_; }

  /// From now on measurements carry an observation: power_w(config) W, energy = power x median per run,
  /// fixed clocks, and the sw_power_cap throttle reason where throttled(config) (optional) is true.
  void simulate_power(std::function<double(const Config&)> power_w,
                      std::function<bool(const Config&)> throttled = nullptr) {
    power_w_ = std::move(power_w);
    throttled_ = std::move(throttled);
  }

  /// From now on measurements carry the named values metrics(config) returns, as an observer of hardware counters
  /// would add them (Observation::metrics), and "synthetic-counters" in the observation's method.
  void simulate_metrics(std::function<std::vector<Metric>(const Config&)> metrics) { metrics_ = std::move(metrics); }

  /// From now on times are noisy, from a generator seeded with `seed`: each measured median and each interleaved
  /// sample is time_ns(config) x (1 + sigma x N(0,1)), and each interleaved round also x (1 + drift x N(0,1)) for
  /// all of its samples alike (a round the whole GPU ran slower). Without it every time is exact.
  void simulate_noise(double sigma, double drift, std::uint64_t seed) {
    noise_sigma_ = sigma;
    noise_drift_ = drift;
    rng_.seed(seed);
  }
  /// Interleaved rounds timed so far (time_interleaved), summed over its calls.
  std::size_t interleaved_rounds() const { return interleaved_rounds_; }

  /// From now on every configuration is compiled (simulated) through a CompilePipeline before it is measured.
  /// Injected failures with status compile_error then come from the compilation, so they are cached like
  /// real ones; the "binary" of a configuration is its canonical JSON. Measurements stay deterministic:
  /// compile_ms is the simulated latency (0 for a cached binary), whatever the number of threads.
  void enable_compile_stage(const CompileStage& stage);
  /// Compilations run so far (speculative ones included); 0 without a compile stage. Thread-safe.
  std::size_t compilations() const { return compilations_; }
  /// Key of a configuration's binary in the cache.
  static std::string binary_key(const Config& c);

  DeviceInfo device() const override { return device_; }
  std::string kind() const override { return "synthetic"; }
  std::string compiler_version() const override { return "synthetic"; }
  void prepare(const Workload& w, const ProblemKey& p, std::uint64_t seed) override;
  double copy_bandwidth_gbps() override { return 1000.0; }
  std::vector<Measurement> evaluate(const std::vector<Config>& configs) override;
  /// One sample per configuration per round, time_ns(config) with the noise of simulate_noise(); an injected
  /// failure gives an empty list. Never stops early (max_seconds is not consulted: no time passes).
  std::optional<std::vector<std::vector<double>>> time_interleaved(const std::vector<Config>& configs, int rounds,
                                                                   double max_seconds) override;
  void prefetch(const std::vector<Config>& configs) override;
  /// With a compile stage: whether c's simulated binary is compiled; without one, always.
  bool ready(const Config& c) override;
  bool wait_ready(const std::vector<Config>& configs, double seconds) override;
  BackendStats stats() const override;

 private:
  Measurement measure(const Config& c, const CompileResult* binary);
  /// The log of an injected failure with this status for c, or nullptr.
  const std::string* injected(const Config& c, TrialStatus status, std::string& storage) const;
  CompilePipeline::Item compile_item(const Config& c);

  DeviceInfo device_;
  std::function<double(const Config&)> time_ns_;
  std::function<double(const Config&)> power_w_;
  std::function<bool(const Config&)> throttled_;
  std::function<std::vector<Metric>(const Config&)> metrics_;
  std::map<std::string, std::pair<TrialStatus, std::string>> failures_;
  std::map<std::pair<std::string, Value>, TrialStatus> failures_when_;
  std::size_t evaluations_ = 0;
  double noise_sigma_ = 0, noise_drift_ = 0;
  std::mt19937_64 rng_{1};
  std::size_t interleaved_rounds_ = 0;
  std::size_t env_fail_after_ = static_cast<std::size_t>(-1);
  bool prepared_ = false;
  CompileStage stage_;
  std::atomic<std::size_t> compilations_{0};  // declared before the pipeline: its tasks count here
  BackendStats counters_;
  std::unique_ptr<CompilePipeline> pipeline_;
};

}  // namespace autotune::sim

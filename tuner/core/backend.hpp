// Where configurations get evaluated: the CUDA backend, the replay (simulation) backend, or the
// synthetic test backend. The session loop talks only to this interface.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tuner/core/compile.hpp"
#include "tuner/core/config.hpp"
#include "tuner/core/keys.hpp"
#include "tuner/core/trial.hpp"

namespace autotune {

/// Counters of a backend; times in milliseconds of wall time on the thread that calls evaluate(), except
/// compile.thread_ms (summed over the compile threads). Subtracting two snapshots gives the figures of the
/// work in between.
struct BackendStats {
  CompileStats compile;
  int compile_jobs = 0;      // compile threads (0 = no compile stage)
  double verify_ms = 0;      // verification runs on poisoned outputs and the comparison with the reference
  double benchmark_ms = 0;   // warm-up and timed samples
  std::size_t verified = 0;  // configurations that reached verification
  std::size_t timed = 0;     // configurations that were timed
  /// Parts of the set-up in ms, e.g. "start" (the backend's construction: GPU worker, driver, context),
  /// "inputs", "reference", "upload", "copy_bandwidth" (of the last prepare(); parts that overlap in time
  /// are each counted in full). Not cumulative: operator- keeps this side's values.
  std::map<std::string, double> setup_ms;

  BackendStats operator-(const BackendStats& o) const;
};

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
  /// The only configurations this backend can answer for a workload and problem, when it answers a set known in
  /// advance and was told that this set is the valid space (a replay of a spec stub: the recorded
  /// configurations); nullopt = the spec's space. The session restricts its space to them
  /// (ParameterSpace::restricted_to). Callable before prepare().
  virtual std::optional<std::vector<Config>> space_limit(const Workload& w, const ProblemKey& p) const {
    (void)w;
    (void)p;
    return std::nullopt;
  }
  /// Evaluates configurations (may compile in parallel); results in the same order.
  virtual std::vector<Measurement> evaluate(const std::vector<Config>& configs) = 0;
  /// A hint: these configurations will probably be evaluated soon, in this order (the session names the
  /// current batch and what the strategy expects to propose next). A backend with a compile stage starts
  /// compiling them so that its GPU does not wait for the compiler at the next batch; results never change.
  /// Default: ignored.
  virtual void prefetch(const std::vector<Config>& configs) { (void)configs; }
  /// A hint before prepare(w, p, ...): the first configurations that will be evaluated for that problem. A
  /// backend with a compile stage starts compiling them while prepare() makes the inputs and the reference, so
  /// that the first measurement does not wait for the compiler; results never change. Default: ignored.
  virtual void expect(const Workload& w, const ProblemKey& p, const std::vector<Config>& configs) {
    (void)w;
    (void)p;
    (void)configs;
  }
  /// Whether evaluate({c}) would start measuring c at once: its binary is compiled (a backend without a compile
  /// stage: always). A rank holding several tasks measures a ready one first, as evaluate() does within a batch.
  virtual bool ready(const Config& c) {
    (void)c;
    return true;
  }
  /// Waits until one of configs is ready() or `seconds` pass (0: does not wait); true when one is, or when the
  /// backend cannot tell (a configuration it is not compiling: evaluate() waits for it). A backend with a compile
  /// stage compiles these configurations next, as evaluate() would. Default: true at once (always ready).
  virtual bool wait_ready(const std::vector<Config>& configs, double seconds) {
    (void)configs;
    (void)seconds;
    return true;
  }
  /// Re-times configurations that evaluate() verified on the prepared problem, interleaved (the final pick,
  /// tuner/session/final_pick.hpp): `rounds` rounds, each one timed sample of every configuration in the order
  /// given (A B C A B C ...), on the same inputs, with the L2 cache flushed before each sample as evaluate() does.
  /// Stops after the round in which `max_seconds` have passed (3 rounds at least). Returns per configuration its
  /// samples in ns, one per round completed, in the order given; an empty list for one that failed on the way.
  /// nullopt: this backend cannot re-time (a replay answers recorded trials); the caller skips the final pick.
  virtual std::optional<std::vector<std::vector<double>>> time_interleaved(const std::vector<Config>& configs,
                                                                           int rounds, double max_seconds) {
    (void)configs;
    (void)rounds;
    (void)max_seconds;
    return std::nullopt;
  }
  /// How many devices measure at once (MPI: the live ranks of the group); 1 for a backend of one GPU.
  virtual std::size_t parallel_devices() const { return 1; }
  /// Where the backend's time went since it was made (all zero for backends that do not measure it).
  virtual BackendStats stats() const { return {}; }
  /// How the prepared problem's outputs are verified, for the session's output (e.g. "device", or "host"
  /// with the reason); "" where the question does not apply (replayed or synthetic results).
  virtual std::string verification() const { return {}; }
  /// Why trials carry no clocks, power or energy (e.g. "libnvidia-ml.so.1 cannot be loaded (...)"), once the
  /// backend has timed a configuration; "" when they do or the question does not apply.
  virtual std::string observer_note() const { return {}; }
};

/// A Backend that hands every call to another one. Wrappers that own or add something derive from it and
/// override only what they change, so that a method added to Backend is forwarded by this one class and no
/// wrapper can forget it. The inner backend is set by the constructor or, for a wrapper that owns it as a member,
/// by forward_to() in the wrapper's constructor; it must outlive the calls.
class ForwardingBackend : public Backend {
 public:
  explicit ForwardingBackend(Backend& inner) : inner_(&inner) {}
  DeviceInfo device() const override { return inner_->device(); }
  std::string kind() const override { return inner_->kind(); }
  std::string compiler_version() const override { return inner_->compiler_version(); }
  void prepare(const Workload& w, const ProblemKey& p, std::uint64_t seed) override { inner_->prepare(w, p, seed); }
  double copy_bandwidth_gbps() override { return inner_->copy_bandwidth_gbps(); }
  std::vector<Measurement> evaluate(const std::vector<Config>& configs) override { return inner_->evaluate(configs); }
  void prefetch(const std::vector<Config>& configs) override { inner_->prefetch(configs); }
  void expect(const Workload& w, const ProblemKey& p, const std::vector<Config>& configs) override {
    inner_->expect(w, p, configs);
  }
  bool ready(const Config& c) override { return inner_->ready(c); }
  bool wait_ready(const std::vector<Config>& configs, double seconds) override {
    return inner_->wait_ready(configs, seconds);
  }
  std::optional<std::vector<std::vector<double>>> time_interleaved(const std::vector<Config>& configs, int rounds,
                                                                   double max_seconds) override {
    return inner_->time_interleaved(configs, rounds, max_seconds);
  }
  std::size_t parallel_devices() const override { return inner_->parallel_devices(); }
  BackendStats stats() const override { return inner_->stats(); }
  std::string verification() const override { return inner_->verification(); }
  std::string observer_note() const override { return inner_->observer_note(); }

 protected:
  ForwardingBackend() = default;
  void forward_to(Backend& inner) { inner_ = &inner; }

 private:
  Backend* inner_ = nullptr;
};

}  // namespace autotune

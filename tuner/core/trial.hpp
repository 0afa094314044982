// The outcome of evaluating one configuration.
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

namespace autotune {

/// Configuration failures are data: each has a status and the session goes on.
enum class TrialStatus {
  ok,             // verified and timed
  compile_error,  // NVRTC rejected the source with these defines
  launch_error,   // too many resources, invalid launch configuration
  wrong_result,   // output differs from the reference (never eligible for best)
  runtime_fault,  // sticky error (illegal address ...): context was recreated
  timeout,        // did not finish in time
  invalid,        // violates a constraint of the current spec (never run)
  invalid_resources,  // the compiled binary's registers or shared memory rule the launch out (never launched)
};

const char* to_string(TrialStatus s);
/// Throws std::invalid_argument for an unknown name.
TrialStatus trial_status_from_string(const std::string& s);

/// One named value an observer took for a trial, e.g. {"dram_bytes_read", 1.07e9, "byte"} from the hardware counters
/// (tuner/cuda/counters.hpp); value NaN where the observer could not evaluate it. The open set of such values of a
/// trial is Observation::metrics.
struct Metric {
  std::string name;  // short, snake_case: "dram_bytes_read", "achieved_occupancy", "counter_replay_ms"
  double value = std::numeric_limits<double>::quiet_NaN();
  std::string unit;  // "byte", "percent", "ms", "conflict" ...
  bool operator==(const Metric& o) const;
};
/// The metric of this name in ms, nullptr when there is none.
const Metric* find_metric(const std::vector<Metric>& ms, const std::string& name);
/// The metric's value, NaN when there is none.
double metric_value(const std::vector<Metric>& ms, const std::string& name);
/// JSON of metrics (nlohmann's adl hooks): {"name", "value" (null for NaN), "unit"}; a list as an array of them.
void to_json(nlohmann::json& j, const Metric& m);
/// Throws nlohmann::json::exception for a malformed object.
void from_json(const nlohmann::json& j, Metric& m);
/// The metrics as the text of their JSON array ("" for none): how the trials table stores them.
std::string metrics_text(const std::vector<Metric>& ms);
/// The inverse of metrics_text ("" = none). Throws std::invalid_argument for text that is not such an array.
std::vector<Metric> parse_metrics(const std::string& text);

/// What the GPU did while a configuration was measured (NVML, tuner/cuda/nvml.hpp): clocks, power,
/// energy, temperature and the reasons the clocks were held down. NaN = not observed (no NVML, the GPU does
/// not report it, or the record predates observers). How it was taken: docs/observers.md.
struct Observation {
  double sm_clock_mhz = std::numeric_limits<double>::quiet_NaN();       // median of the samples, MHz
  double sm_clock_min_mhz = std::numeric_limits<double>::quiet_NaN();   // lowest sample, MHz
  double mem_clock_mhz = std::numeric_limits<double>::quiet_NaN();      // median, MHz
  double mem_clock_min_mhz = std::numeric_limits<double>::quiet_NaN();  // lowest, MHz
  double power_w = std::numeric_limits<double>::quiet_NaN();            // mean board power while running, W
  double energy_j = std::numeric_limits<double>::quiet_NaN();           // board energy per run of the plan, J
  double temperature_c = std::numeric_limits<double>::quiet_NaN();      // highest GPU temperature, degrees C
  double power_limit_w = std::numeric_limits<double>::quiet_NaN();      // enforced board power limit, W
  /// NVML clock event ("throttle") reason bits seen in any sample, OR-ed (kThrottle* below).
  std::uint64_t throttle_reasons = 0;
  /// How the values were taken, e.g. "nvml;energy=counter;runs=1200;window=101.3ms;samples=57"; observers
  /// separated by " + " ("nvml;... + cupti;passes=3"); "" = none.
  std::string method;
  /// The named values of observers beyond NVML's fields (hardware counters: docs/observers.md), in the order
  /// taken; empty where none was asked for.
  std::vector<Metric> metrics;

  bool observed() const { return !method.empty(); }
  /// The one list of the fields above: calls f(field_name, member) for each, in declaration order. The name is
  /// the field's key in every JSON that carries an observation (MPI, `best --json`, `--stats-json`) and its column
  /// in the trials table (where "method" is the column "observer", db::TrialRow::for_each_field). The GPU worker's
  /// messages, the MPI JSON, the trials columns, the CLI's JSON and the T4 export are written (and read) through
  /// it, so a new observed quantity is one line here plus a database migration that adds its column
  /// (db/database.cpp). O is Observation or const Observation; members are double, std::uint64_t, std::string or
  /// std::vector<Metric> (one column "metrics" holding metrics_text, one JSON array).
  template <typename O, typename F>
  static void for_each_field(O& o, F&& f) {
    f("sm_clock_mhz", o.sm_clock_mhz);
    f("sm_clock_min_mhz", o.sm_clock_min_mhz);
    f("mem_clock_mhz", o.mem_clock_mhz);
    f("mem_clock_min_mhz", o.mem_clock_min_mhz);
    f("power_w", o.power_w);
    f("energy_j", o.energy_j);
    f("temperature_c", o.temperature_c);
    f("power_limit_w", o.power_limit_w);
    f("throttle_reasons", o.throttle_reasons);
    f("method", o.method);
    f("metrics", o.metrics);
  }
  bool has_energy() const { return std::isfinite(energy_j) && energy_j > 0; }
  /// The clocks were held down by a power cap, a thermal limit or a hardware slowdown while measuring:
  /// such a time is not comparable with one taken at full clocks.
  bool throttled() const;
};

/// NVML's clock event reason bits (nvmlClocksEventReason*, the values are NVML's ABI).
constexpr std::uint64_t kThrottleGpuIdle = 0x1;
constexpr std::uint64_t kThrottleApplicationClocks = 0x2;
constexpr std::uint64_t kThrottleSwPowerCap = 0x4;
constexpr std::uint64_t kThrottleHwSlowdown = 0x8;
constexpr std::uint64_t kThrottleSyncBoost = 0x10;
constexpr std::uint64_t kThrottleSwThermal = 0x20;
constexpr std::uint64_t kThrottleHwThermal = 0x40;
constexpr std::uint64_t kThrottleHwPowerBrake = 0x80;
/// The reasons that make a measurement throttled: power and thermal limits, hardware slowdowns.
constexpr std::uint64_t kThrottleFlagged =
    kThrottleSwPowerCap | kThrottleHwSlowdown | kThrottleSwThermal | kThrottleHwThermal | kThrottleHwPowerBrake;
/// "sw_power_cap,hw_thermal" for the set bits (unknown bits as hex); "none" for 0.
std::string throttle_reason_names(std::uint64_t reasons);

/// Timing of one configuration. Times in nanoseconds of one full launch plan.
struct Measurement {
  TrialStatus status = TrialStatus::ok;
  double median_ns = 0;
  double min_ns = 0;
  double spread = 0;      // (p90 - p10) / median over the samples
  int samples = 0;
  double compile_ms = 0;  // 0 when the binary came from the cache
  double verify_ms = 0;
  std::string log;        // compile log excerpt or error text for failures
  /// How the numbers were taken, e.g. "events;warmup=3;samples=7..15;stop=ci95<=2%|2s;l2=flush-read".
  std::string protocol;
  /// Where it was measured when that is not the recording process's own GPU, e.g. an MPI rank
  /// "host=node3 rank=2 gpu=1 uuid=GPU-..."; "" otherwise. Stored with the trial as provenance.
  std::string measured_by;
  /// The individual timings (ns) where they are kept: imports of files that carry them (Kernel Tuner's
  /// "times"); empty for trials measured here (median, min, spread and samples summarise them).
  std::vector<double> sample_ns;
  Observation observed;   // clocks, power, energy (NaN/empty where not observed)
  bool ok() const { return status == TrialStatus::ok; }

  /// The one list of the fields above: calls f(field_name, member) for each, in declaration order, the name being
  /// the field's key in the MPI JSON and its column in the trials table. The observation is one call,
  /// f("observed", m.observed): a writer that nests it (JSON) keeps it as one object, one that flattens it (the
  /// trials columns, db::TrialRow::for_each_field) visits Observation::for_each_field. So a new measured field is
  /// one line here plus a database migration that adds its column (db/database.cpp). M is Measurement or const
  /// Measurement; members are TrialStatus, double, int, std::string, std::vector<double> or Observation.
  template <typename M, typename F>
  static void for_each_field(M& m, F&& f) {
    f("status", m.status);
    f("median_ns", m.median_ns);
    f("min_ns", m.min_ns);
    f("spread", m.spread);
    f("samples", m.samples);
    f("compile_ms", m.compile_ms);
    f("verify_ms", m.verify_ms);
    f("log", m.log);
    f("protocol", m.protocol);
    f("measured_by", m.measured_by);
    f("sample_ns", m.sample_ns);
    f("observed", m.observed);
  }
};

/// A time in nanoseconds as people read it: "72.67 us" below a millisecond, else "1.234 ms".
std::string format_time_ns(double ns);

}  // namespace autotune
